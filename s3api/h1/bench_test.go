package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// BenchmarkServers compares h1 with net/http's server on loopback: 8
// keep-alive clients send 4 KiB GETs (a body with its length) and 4 KiB
// PUTs (read by the handler) to a handler that does nothing else. The
// clients run in the same process, the same for both servers, so the
// difference between the two is the servers'.
//
//	go test -run '^$' -bench Servers -benchmem ./s3api/h1/
func BenchmarkServers(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 4096)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
			return
		}
		w.Header().Set("Content-Length", "4096")
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(payload)
	})
	requests := map[string]string{
		"GET": "GET /bucket/key HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\nX-Amz-Date: 20261207T000000Z\r\n\r\n",
		"PUT": "PUT /bucket/key HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\nContent-Length: 4096\r\n\r\n" + string(payload),
	}
	for _, server := range []string{"net-http", "h1"} {
		for _, method := range []string{"GET", "PUT"} {
			b.Run(server+"/"+method, func(b *testing.B) {
				addr, stop := benchServer(b, server, h)
				defer stop()
				const clients = 8
				var wg sync.WaitGroup
				per := (b.N + clients - 1) / clients
				b.ResetTimer()
				for range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := hammer(addr, requests[method], per); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}

func benchServer(b *testing.B, kind string, h http.Handler) (string, func()) {
	if kind == "net-http" {
		s := httptest.NewUnstartedServer(h)
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.Start()
		return s.Listener.Addr().String(), s.Close
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{Handler: h}
	go s.Serve(ln)
	return ln.Addr().String(), func() { s.Close() }
}

// hammer sends req n times on one connection, reading each response.
func hammer(addr, req string, n int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for range n {
		if _, err := io.WriteString(c, req); err != nil {
			return err
		}
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return err
		}
		if r.StatusCode != 200 || r.Close {
			return fmt.Errorf("%s: %s, close %v", strings.Fields(req)[0], r.Status, r.Close)
		}
	}
	return nil
}
