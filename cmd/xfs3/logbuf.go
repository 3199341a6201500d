package main

import (
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// logBufferLimit is how many bytes of log lines wait before they are
// written whatever the interval: a few hundred request lines.
const logBufferLimit = 64 << 10

// logBuffer gathers log lines in memory and writes them to w in batches:
// when interval has passed since the first line waiting, when
// logBufferLimit bytes wait, at Flush and at Close. A server logging a
// line per request otherwise makes a write system call per request, which
// costs about as much as the request's own signature check (and as much
// again in whatever reads the lines: a pipe, journald). The price is that
// a process killed outright loses up to interval of lines; lines at warn
// and above are written at once (levelFlusher), with any waiting before
// them.
type logBuffer struct {
	w        io.Writer
	interval time.Duration

	mu    sync.Mutex
	buf   []byte
	timer *time.Timer // armed while lines wait
}

// newLogBuffer buffers lines for w; an interval of 0 or less writes each
// line at once, as if there were no buffer.
func newLogBuffer(w io.Writer, interval time.Duration) *logBuffer {
	return &logBuffer{w: w, interval: interval}
}

// Write takes one or more whole lines (zerolog writes one event per call).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.interval <= 0 {
		return b.writeLocked(p)
	}
	b.buf = append(b.buf, p...)
	switch {
	case len(b.buf) >= logBufferLimit:
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	case b.timer == nil:
		b.timer = time.AfterFunc(b.interval, func() { b.Flush() })
	}
	return len(p), nil
}

// Flush writes every waiting line now. Lines whose write fails are
// dropped, as an unbuffered logger drops a line it cannot write; the
// next batch is tried afresh (a reader of the log may come back).
func (b *logBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *logBuffer) flushLocked() error {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.writeLocked(b.buf)
	// A buffer grown by a burst is not kept: the next one starts small.
	if cap(b.buf) > 2*logBufferLimit {
		b.buf = nil
	}
	b.buf = b.buf[:0]
	return err
}

func (b *logBuffer) writeLocked(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// levelFlusher writes events through w (the buffer itself, or a console
// formatter writing into it) and flushes the buffer after each event at
// warn or above, so that trouble is never left waiting in memory.
type levelFlusher struct {
	w   io.Writer
	buf *logBuffer
}

func (l levelFlusher) Write(p []byte) (int, error) { return l.w.Write(p) }

func (l levelFlusher) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	n, err := l.w.Write(p)
	if err == nil && level >= zerolog.WarnLevel && level != zerolog.NoLevel {
		err = l.buf.Flush()
	}
	return n, err
}
