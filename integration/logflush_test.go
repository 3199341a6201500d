package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRequestLogThroughBinary: with the default log_flush the binary's
// request lines reach its stderr by themselves while it keeps serving
// (the batch's timer, not a stop, writes them), and after a clean stop
// every request has its line; with --log-flush 0 too.
func TestRequestLogThroughBinary(t *testing.T) {
	for _, flags := range [][]string{nil, {"--log-flush", "0"}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			s := startServer(t, "512M", flags...)
			if code, body := s.do(t, "PUT", "/logs", nil, nil, region); code != 200 {
				t.Fatalf("create bucket: %d %s", code, body)
			}
			const objects = 50
			for i := range objects {
				if code, body := s.do(t, "PUT", fmt.Sprintf("/logs/k%03d", i), []byte("x"), nil, region); code != 200 {
					t.Fatalf("PUT: %d %s", code, body)
				}
			}
			last := fmt.Sprintf(`"key":"k%03d"`, objects-1)
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(s.logs.String(), last) {
				if time.Now().After(deadline) {
					t.Fatalf("the last PUT's line is not in the log 10 s later while the server runs:\n%s", s.logs.tail(2<<10))
				}
				time.Sleep(10 * time.Millisecond)
			}
			s.stop(t)
			if n := strings.Count(s.logs.String(), `"op":"PutObject"`); n != objects {
				t.Errorf("%d PutObject lines for %d PUTs after a clean stop", n, objects)
			}
		})
	}
}
