package s3api

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/store"
)

// TestConditionalPutRaceHTTP: many clients PUT one key with
// If-None-Match: * at once; exactly one gets 200, the others 412 (the
// object was there when they started) or 409 (it arrived while their body
// streamed), and the object is the winner's.
func TestConditionalPutRaceHTTP(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "race")
	for round := range 3 {
		key := fmt.Sprintf("/race/k%d", round)
		const writers = 24
		status := make([]int, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := []byte(fmt.Sprintf("writer %d", w))
				resp, _ := ts.do(t, "PUT", key, body, http.Header{"If-None-Match": {"*"}})
				status[w] = resp.StatusCode
			}()
		}
		wg.Wait()
		winner := -1
		for w, st := range status {
			switch st {
			case 200:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
				}
				winner = w
			case 412, 409:
			default:
				t.Fatalf("round %d: writer %d got %d", round, w, st)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won: %v", round, status)
		}
		resp, body := ts.do(t, "GET", key, nil, nil)
		if resp.StatusCode != 200 || string(body) != fmt.Sprintf("writer %d", winner) {
			t.Fatalf("round %d: object %q, winner %d", round, body, winner)
		}
	}
}

// TestConditionalPutConflict: a write whose condition held when it began
// but fails once its body is in (another write placed the object
// meanwhile) is 409 ConditionalRequestConflict. The handler is driven
// directly so that the test knows when the body is being read.
func TestConditionalPutConflict(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "race")
	h, err := New(Config{Store: ts.store, Credentials: map[string]string{testAccessKey: testSecretKey}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	req := ts.rawRequest(t, "PUT", "/race/k", nil, http.Header{"If-None-Match": {"*"}, "X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}})
	req.ContentLength = 6
	req = signed(t, req, nil)
	req.Body = pr
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(rec, req)
		close(done)
	}()
	if _, err := pw.Write([]byte("sl")); err != nil { // read by the handler: its early check passed
		t.Fatal(err)
	}
	mustPut(t, ts, "race", "k", "fast", store.Meta{})
	pw.Write([]byte("ower"))
	pw.Close()
	<-done
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "ConditionalRequestConflict") {
		t.Fatalf("late condition failure: %d %s", rec.Code, rec.Body)
	}
	if resp, body := ts.do(t, "GET", "/race/k", nil, nil); string(body) != "fast" {
		t.Fatalf("object %d %q", resp.StatusCode, body)
	}
	// If-Match with the current ETag replaces; with another it is 412.
	info, _ := ts.store.HeadObject("race", "k")
	resp, body := ts.do(t, "PUT", "/race/k", []byte("next"), http.Header{"If-Match": {`"0000"`}})
	wantError(t, resp, body, 412, "PreconditionFailed")
	resp, body = ts.do(t, "PUT", "/race/k", []byte("next"), http.Header{"If-Match": {`"` + info.ETag + `"`}})
	if resp.StatusCode != 200 {
		t.Fatalf("If-Match with the ETag: %d %s", resp.StatusCode, body)
	}
}

// TestConditionalComplete: CompleteMultipartUpload with If-None-Match
// over an existing object is 412 and leaves the upload to complete later.
func TestConditionalCompleteHTTP(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "mpu")
	mustPut(t, ts, "mpu", "k", "old", store.Meta{})
	resp, body := ts.do(t, "POST", "/mpu/k?uploads", nil, nil)
	var init struct{ UploadId string }
	if err := xml.Unmarshal(body, &init); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "PUT", "/mpu/k?partNumber=1&uploadId="+init.UploadId, []byte("part one"), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("part: %d %s", resp.StatusCode, body)
	}
	complete := []byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + resp.Header.Get("ETag") + `</ETag></Part></CompleteMultipartUpload>`)
	resp, body = ts.do(t, "POST", "/mpu/k?uploadId="+init.UploadId, complete, http.Header{"If-None-Match": {"*"}})
	wantError(t, resp, body, 412, "PreconditionFailed")
	if _, b := ts.do(t, "GET", "/mpu/k", nil, nil); string(b) != "old" {
		t.Fatalf("object after a refused completion: %q", b)
	}
	info, _ := ts.store.HeadObject("mpu", "k")
	resp, body = ts.do(t, "POST", "/mpu/k?uploadId="+init.UploadId, complete, http.Header{"If-Match": {`"` + info.ETag + `"`}})
	if resp.StatusCode != 200 {
		t.Fatalf("completion with If-Match: %d %s", resp.StatusCode, body)
	}
	if _, b := ts.do(t, "GET", "/mpu/k", nil, nil); !bytes.Equal(b, []byte("part one")) {
		t.Fatalf("object after completion: %q", b)
	}
}
