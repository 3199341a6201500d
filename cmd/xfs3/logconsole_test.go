package main

import (
	"bytes"
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestConsoleWriterMatchesZerolog: over seeded random events, written by
// zerolog itself with every kind of field the server uses and some it
// does not (nested objects, arrays, repeated names, odd strings and
// levels), consoleWriter writes byte for byte what zerolog's console
// writer writes without colours, in the UTC zone and in another; most
// events take its own path, the rest zerolog's.
func TestConsoleWriterMatchesZerolog(t *testing.T) {
	for _, zone := range []*time.Location{time.UTC, time.FixedZone("X", 5*3600+1800)} {
		t.Run(zone.String(), func(t *testing.T) {
			saved := time.Local
			time.Local = zone
			defer func() { time.Local = saved }()
			checkConsoleWriter(t, rand.New(rand.NewSource(1)), 20000)
		})
	}
}

func checkConsoleWriter(t *testing.T, rng *rand.Rand, events int) {
	var events1 bytes.Buffer
	log := zerolog.New(&events1).Level(zerolog.TraceLevel).With().Timestamp().Logger()
	alphabet := []string{"a", "Z", "0", " ", "=", "\"", "\\", "\n", "\t", "\x01", "é", "日", "\xff", "/", "'", "<", "&", "\u2028", "\x7f"}
	// Most strings are plain, as the server's are; one in four draws
	// from the whole alphabet.
	str := func() string {
		letters := alphabet[:4]
		if rng.Intn(4) == 0 {
			letters = alphabet
		}
		var b strings.Builder
		for n := rng.Intn(8); n > 0; n-- {
			b.WriteString(letters[rng.Intn(len(letters))])
		}
		return b.String()
	}
	names := []string{"op", "bucket", "key", "status", "error", "latency", "a b", "x"}
	name := func() string {
		if rng.Intn(16) == 0 {
			return str()
		}
		return names[rng.Intn(len(names))]
	}
	for range events {
		var ev *zerolog.Event
		switch rng.Intn(7) {
		case 0:
			ev = log.Debug()
		case 1:
			ev = log.Warn()
		case 2:
			ev = log.Error()
		case 3:
			ev = log.Trace()
		case 4:
			ev = log.WithLevel(zerolog.NoLevel)
		default:
			ev = log.Info()
		}
		seen := map[string]bool{}
		for n := rng.Intn(9); n > 0; n-- {
			k := name()
			if seen[k] && rng.Intn(8) != 0 {
				continue // repeated names now and then
			}
			seen[k] = true
			switch rng.Intn(11) {
			case 0:
				ev = ev.Int(k, rng.Intn(2000)-1000)
			case 1:
				ev = ev.Float64(k, rng.NormFloat64()*1e6)
			case 2:
				ev = ev.Bool(k, rng.Intn(2) == 0)
			case 3:
				ev = ev.Dur(k, time.Duration(rng.Int63n(1e10)))
			case 4:
				ev = ev.Err(errors.New(str()))
			case 5:
				ev = ev.Time(k, time.Unix(rng.Int63n(2e9), 0))
			case 6:
				if rng.Intn(6) == 0 {
					ev = ev.Dict(k, zerolog.Dict().Str("in", str()))
				} else {
					ev = ev.Int64(k, rng.Int63())
				}
			case 7:
				if rng.Intn(6) == 0 {
					ev = ev.Strs(k, []string{str(), str()})
				} else {
					ev = ev.Uint64(k, rng.Uint64())
				}
			case 8:
				ev = ev.Interface(k, nil)
			default:
				ev = ev.Str(k, str())
			}
		}
		if rng.Intn(10) == 0 {
			ev.Send()
		} else {
			ev.Msg(str())
		}
	}
	fast := 0
	lines := bytes.SplitAfter(events1.Bytes(), []byte("\n"))
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		var got, want bytes.Buffer
		w := newConsoleWriter(&got, time.RFC3339)
		if _, ok := w.format(&consoleLine{}, line); ok {
			fast++
		}
		_, gerr := w.Write(line)
		_, werr := (zerolog.ConsoleWriter{Out: &want, TimeFormat: time.RFC3339, NoColor: true}).Write(line)
		if got.String() != want.String() || (gerr == nil) != (werr == nil) {
			t.Fatalf("event %s\nconsoleWriter: %q (%v)\nzerolog:       %q (%v)", line, got.String(), gerr, want.String(), werr)
		}
	}
	if fast < len(lines)/2 {
		t.Fatalf("only %d of %d events took consoleWriter's own path", fast, len(lines))
	}
	t.Logf("%d events, %d on consoleWriter's own path", len(lines), fast)
}

// TestConsoleWriterOddInput: what is not a flat JSON event goes to
// zerolog, error and all.
func TestConsoleWriterOddInput(t *testing.T) {
	for _, in := range []string{
		"", "{", "[]", `{"level":"info"`, `{"level":"info","time":"x","a":tru}`, `{"level":"info","time":"x"} {}`,
		`{"level":"info","time":"x","a":"\a"}`, `{"level":"info","time":"x","a":01}`, `{"level":"info","time":"x","a":1.}`,
		`{"level":"info","time":"x","a":"\ud83d\ude00"}`, `{"level":"info","time":"x","caller":"f.go:1"}`,
		`{"level":"info","time":"x","a":{"b":1}}`, `{"level":"info","time":"x","message":3}`,
		`{"level":"info","time":"2026-12-06T23:24:53Z","message":"m","a":1,"a":2}`,
	} {
		var got, want bytes.Buffer
		_, gerr := newConsoleWriter(&got, time.RFC3339).Write([]byte(in))
		_, werr := (zerolog.ConsoleWriter{Out: &want, TimeFormat: time.RFC3339, NoColor: true}).Write([]byte(in))
		if got.String() != want.String() || (gerr == nil) != (werr == nil) {
			t.Errorf("%q: consoleWriter %q (%v), zerolog %q (%v)", in, got.String(), gerr, want.String(), werr)
		}
	}
}

// BenchmarkConsoleWriter: a request's log line through each writer.
func BenchmarkConsoleWriter(b *testing.B) {
	line := []byte(`{"level":"info","request_id":"18E2D1F0A2B4C6D8","op":"GetObject","method":"GET","bucket":"xfs3-bench-a1","key":"run/4KiB-c8/000123","status":200,"bytes_in":0,"bytes_out":4096,"latency":0.412,"remote":"127.0.0.1:51234","access_key":"abadmin","user":"root","time":"2026-12-06T23:24:53Z","message":"request"}` + "\n")
	for _, c := range []struct {
		name string
		w    func() interface{ Write([]byte) (int, error) }
	}{
		{"zerolog", func() interface{ Write([]byte) (int, error) } {
			return zerolog.ConsoleWriter{Out: discard{}, TimeFormat: time.RFC3339, NoColor: true}
		}},
		{"own", func() interface{ Write([]byte) (int, error) } { return newConsoleWriter(discard{}, time.RFC3339) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := c.w()
			b.ReportAllocs()
			for b.Loop() {
				w.Write(line)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
