package main

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// consoleWriter writes zerolog's JSON events as console lines, exactly as
// zerolog.ConsoleWriter writes them without colours, but without decoding
// each event into a map through encoding/json: with a line per request,
// that decoding cost more CPU than a small GET itself. It reads the flat
// events the server writes (names, then strings, numbers, true, false or
// null) in one pass; an event it does not read that way (a nested value,
// a repeated name, an escape Go does not share with JSON, a caller, an
// unknown level) goes to zerolog's writer, which prints it as ever.
type consoleWriter struct {
	out        io.Writer
	timeFormat string
	slow       zerolog.ConsoleWriter
	// lastTime is the timestamp text of the last event and its console
	// form: events of the same second share it.
	lastTime atomic.Pointer[[2]string]
}

func newConsoleWriter(out io.Writer, timeFormat string) *consoleWriter {
	return &consoleWriter{
		out:        out,
		timeFormat: timeFormat,
		slow:       zerolog.ConsoleWriter{Out: out, TimeFormat: timeFormat, NoColor: true},
	}
}

// consoleField is one name and value of an event; value is the decoded
// text of a string, or the literal of anything else.
type consoleField struct {
	name, value []byte // slices of the event, or the decoded value
	quoted      bool   // value was a JSON string
}

// consoleLine is the scratch of one Write, pooled.
type consoleLine struct {
	fields []consoleField
	buf    []byte
}

var consoleLines = sync.Pool{New: func() any { return &consoleLine{buf: make([]byte, 0, 512)} }}

func (w *consoleWriter) Write(p []byte) (int, error) {
	line := consoleLines.Get().(*consoleLine)
	defer consoleLines.Put(line)
	out, ok := w.format(line, p)
	if !ok {
		return w.slow.Write(p)
	}
	if _, err := w.out.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// format appends the console line of event p to line.buf, or reports
// that p is not an event it reads.
func (w *consoleWriter) format(line *consoleLine, p []byte) ([]byte, bool) {
	fields, ok := parseFlatObject(p, line.fields[:0])
	line.fields = fields
	if !ok {
		return nil, false
	}
	var when, level, message *consoleField
	for i := range fields {
		f := &fields[i]
		switch string(f.name) {
		case zerolog.TimestampFieldName:
			when = f
		case zerolog.LevelFieldName:
			level = f
		case zerolog.MessageFieldName:
			message = f
		case zerolog.CallerFieldName:
			return nil, false
		}
	}
	if when == nil || !when.quoted || level == nil || !level.quoted || message != nil && !message.quoted {
		return nil, false
	}
	lvl, err := zerolog.ParseLevel(string(level.value))
	levelText, known := zerolog.FormattedLevels[lvl]
	if err != nil || !known || len(level.value) == 0 {
		return nil, false
	}
	whenText, msgText := w.timeText(when.value), []byte(nil)
	if message != nil {
		msgText = message.value
	}
	// The other fields, sorted by name with "error" first, moved down
	// over the standard ones (read above).
	n := 0
	for _, f := range fields {
		switch string(f.name) {
		case zerolog.TimestampFieldName, zerolog.LevelFieldName, zerolog.MessageFieldName:
			continue
		}
		fields[n] = f
		n++
	}
	rest := fields[:n]
	slices.SortFunc(rest, func(a, b consoleField) int {
		switch {
		case bytes.Equal(a.name, b.name):
			return 0
		case string(a.name) == zerolog.ErrorFieldName:
			return -1
		case string(b.name) == zerolog.ErrorFieldName:
			return 1
		}
		return bytes.Compare(a.name, b.name)
	})
	for i, f := range rest {
		// encoding/json keeps the last of repeated names, and zerolog
		// drops empty names only beside an "error": leave both to it.
		if len(f.name) == 0 || i > 0 && bytes.Equal(f.name, rest[i-1].name) {
			return nil, false
		}
	}
	b := append(line.buf[:0], whenText...)
	b = append(b, ' ')
	b = append(b, levelText...)
	if len(msgText) > 0 {
		b = append(b, ' ')
		b = append(b, msgText...)
	}
	if len(rest) > 0 {
		b = append(b, ' ')
	}
	for i, f := range rest {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, f.name...)
		b = append(b, '=')
		if f.quoted && consoleNeedsQuote(f.value) {
			b = strconv.AppendQuote(b, string(f.value))
		} else {
			b = append(b, f.value...)
		}
	}
	b = append(b, '\n')
	line.buf = b
	return b, true
}

// timeText is the console form of an event's timestamp: read in the
// local zone with zerolog's time field format and written with the
// console's, or left as it is when it does not parse.
func (w *consoleWriter) timeText(b []byte) string {
	if last := w.lastTime.Load(); last != nil && last[0] == string(b) {
		return last[1]
	}
	s := string(b)
	out := s
	if t, err := time.ParseInLocation(zerolog.TimeFieldFormat, s, time.Local); err == nil {
		out = t.In(time.Local).Format(w.timeFormat)
	}
	w.lastTime.Store(&[2]string{s, out})
	return out
}

// consoleNeedsQuote reports the string values zerolog's console writer
// quotes: those with control characters, bytes outside printable ASCII,
// spaces, backslashes or double quotes.
func consoleNeedsQuote(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == ' ' || c == '\\' || c == '"' {
			return true
		}
	}
	return false
}

// parseFlatObject reads a JSON object whose values are strings, numbers,
// true, false or null, followed by nothing but white space, appending its
// fields to fields. ok is false for anything else.
func parseFlatObject(p []byte, fields []consoleField) (_ []consoleField, ok bool) {
	i := skipSpace(p, 0)
	if i == len(p) || p[i] != '{' {
		return fields, false
	}
	i = skipSpace(p, i+1)
	if i < len(p) && p[i] == '}' {
		return fields, skipSpace(p, i+1) == len(p)
	}
	for {
		var f consoleField
		var escaped bool
		if i >= len(p) || p[i] != '"' {
			return fields, false
		}
		f.name, i, escaped = scanString(p, i)
		if i < 0 || escaped {
			return fields, false
		}
		i = skipSpace(p, i)
		if i >= len(p) || p[i] != ':' {
			return fields, false
		}
		i = skipSpace(p, i+1)
		if i >= len(p) {
			return fields, false
		}
		if p[i] == '"' {
			start := i
			f.value, i, escaped = scanString(p, i)
			if i < 0 {
				return fields, false
			}
			if escaped {
				v, err := strconv.Unquote(string(p[start:i]))
				if err != nil || strings.ContainsRune(v, utf8.RuneError) {
					return fields, false
				}
				f.value = []byte(v)
			}
			f.quoted = true
		} else {
			start := i
			for i < len(p) && p[i] != ',' && p[i] != '}' && !isSpace(p[i]) {
				i++
			}
			f.value = p[start:i]
			if !jsonLiteral(f.value) {
				return fields, false
			}
		}
		fields = append(fields, f)
		i = skipSpace(p, i)
		if i >= len(p) {
			return fields, false
		}
		switch p[i] {
		case ',':
			i = skipSpace(p, i+1)
		case '}':
			return fields, skipSpace(p, i+1) == len(p)
		default:
			return fields, false
		}
	}
}

// scanString reads the JSON string starting at the quote p[i]; it returns
// its bytes between the quotes (still escaped when escaped is true) and
// the index after the closing quote, or -1 when the string does not end
// or is not valid UTF-8.
func scanString(p []byte, i int) (s []byte, next int, escaped bool) {
	start := i + 1
	for j := start; j < len(p); j++ {
		switch c := p[j]; {
		case c == '\\':
			// Only JSON's escapes: Go reads more (\a, \x41) that a JSON
			// decoder refuses.
			if j+1 >= len(p) || !strings.ContainsRune(`"\/bfnrtu`, rune(p[j+1])) {
				return nil, -1, false
			}
			escaped = true
			j++
		case c == '"':
			if !utf8.Valid(p[start:j]) {
				return nil, -1, false
			}
			return p[start:j], j + 1, escaped
		case c < 0x20:
			return nil, -1, false
		}
	}
	return nil, -1, false
}

// jsonLiteral reports whether s is true, false, null or a JSON number.
func jsonLiteral(s []byte) bool {
	switch string(s) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(p []byte, i int) int {
	for i < len(p) && isSpace(p[i]) {
		i++
	}
	return i
}
