package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingWriter keeps what it was given and how many writes it took.
type recordingWriter struct {
	mu     sync.Mutex
	writes int
	out    bytes.Buffer
	fail   error
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return 0, w.fail
	}
	w.writes++
	return w.out.Write(p)
}

func (w *recordingWriter) state() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.out.String()
}

// TestLogBufferBatches: info lines wait and go out in one write, in
// order, at Flush; a warning goes out at once together with the lines
// before it, in both log formats.
func TestLogBufferBatches(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		t.Run(format, func(t *testing.T) {
			var w recordingWriter
			buf := newLogBuffer(&w, time.Hour)
			log := newLogger(format, "info", buf)
			for i := range 3 {
				log.Info().Int("n", i).Msg("request")
			}
			if n, out := w.state(); n != 0 || out != "" {
				t.Fatalf("info lines written before any flush: %d writes %q", n, out)
			}
			log.Warn().Msg("trouble")
			n, out := w.state()
			if n != 1 || strings.Count(out, "\n") != 4 || !strings.Contains(out, "trouble") {
				t.Fatalf("after a warning: %d writes %q; want one write of four lines", n, out)
			}
			for i := range 3 {
				if !strings.Contains(out, fmt.Sprintf("n=%d", i)) && !strings.Contains(out, fmt.Sprintf(`"n":%d`, i)) {
					t.Errorf("line %d missing: %q", i, out)
				}
			}
			if strings.Index(out, "trouble") < strings.LastIndex(out, "request") {
				t.Errorf("the warning came before the lines logged ahead of it: %q", out)
			}
			log.Info().Msg("after")
			if err := buf.Flush(); err != nil {
				t.Fatal(err)
			}
			if n, out := w.state(); n != 2 || !strings.Contains(out, "after") {
				t.Errorf("after Flush: %d writes %q", n, out)
			}
		})
	}
}

// TestLogBufferInterval: a waiting line is written by itself once the
// interval has passed, and an interval of 0 writes every line at once.
func TestLogBufferInterval(t *testing.T) {
	var w recordingWriter
	buf := newLogBuffer(&w, 20*time.Millisecond)
	buf.Write([]byte("one\n"))
	buf.Write([]byte("two\n"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, out := w.state(); n > 0 {
			if n != 1 || out != "one\ntwo\n" {
				t.Fatalf("timer flush: %d writes %q", n, out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a waiting line was not written in 10 s with an interval of 20 ms")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The next line arms the timer again.
	buf.Write([]byte("three\n"))
	for n, _ := w.state(); n != 2; n, _ = w.state() {
		if time.Now().After(deadline) {
			t.Fatal("the second line was not written")
		}
		time.Sleep(5 * time.Millisecond)
	}

	var direct recordingWriter
	now := newLogBuffer(&direct, 0)
	now.Write([]byte("a\n"))
	now.Write([]byte("b\n"))
	if n, out := direct.state(); n != 2 || out != "a\nb\n" {
		t.Errorf("interval 0: %d writes %q, want each line at once", n, out)
	}
}

// TestLogBufferLimit: past logBufferLimit bytes waiting, lines are written
// without waiting for the interval, and a burst's grown buffer is dropped.
func TestLogBufferLimit(t *testing.T) {
	var w recordingWriter
	buf := newLogBuffer(&w, time.Hour)
	line := []byte(strings.Repeat("x", 999) + "\n")
	for range logBufferLimit/len(line) + 1 {
		buf.Write(line)
	}
	if n, out := w.state(); n != 1 || len(out) < logBufferLimit {
		t.Fatalf("past the limit: %d writes of %d bytes", n, len(out))
	}
	big := bytes.Repeat([]byte("y"), 3*logBufferLimit)
	buf.Write(append(big, '\n'))
	if n, _ := w.state(); n != 2 || cap(buf.buf) > 2*logBufferLimit {
		t.Errorf("after a burst: %d writes, buffer capacity %d kept", n, cap(buf.buf))
	}
}

// TestLogBufferWriteError: a failed write is reported to the caller that
// found it and its lines are dropped; once the writer works again, the
// next lines get through; nothing panics.
func TestLogBufferWriteError(t *testing.T) {
	w := recordingWriter{fail: errors.New("broken pipe")}
	buf := newLogBuffer(&w, time.Hour)
	if _, err := buf.Write([]byte("waits\n")); err != nil {
		t.Fatalf("a waiting line failed: %v", err)
	}
	if err := buf.Flush(); err == nil || err.Error() != "broken pipe" {
		t.Fatalf("Flush: %v", err)
	}
	log := newLogger("json", "info", buf)
	log.Error().Msg("no panic either")
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	buf.Write([]byte("later\n"))
	if err := buf.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, out := w.state(); n != 1 || out != "later\n" {
		t.Errorf("after the writer healed: %d writes %q", n, out)
	}
}

// TestLogBufferConcurrent: lines from many goroutines come out whole and
// each exactly once (run with -race).
func TestLogBufferConcurrent(t *testing.T) {
	var w recordingWriter
	buf := newLogBuffer(&w, time.Millisecond)
	log := newLogger("json", "info", buf)
	const goroutines, lines = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range lines {
				if i%100 == 99 {
					log.Warn().Int("g", g).Int("i", i).Msg("line")
				} else {
					log.Info().Int("g", g).Int("i", i).Msg("line")
				}
			}
		})
	}
	wg.Wait()
	if err := buf.Flush(); err != nil {
		t.Fatal(err)
	}
	_, out := w.state()
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, `{"level":`) || !strings.HasSuffix(l, `"message":"line"}`) || seen[l] {
			t.Fatalf("torn or repeated line %q", l)
		}
		seen[l] = true
	}
	if len(seen) != goroutines*lines {
		t.Errorf("%d lines out of %d", len(seen), goroutines*lines)
	}
}
