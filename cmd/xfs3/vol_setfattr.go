package main

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs"
)

const setfattrUsage = `Usage: xfs3 vol setfattr [--no-dereference] VOLUME PATH NAME VALUE

Set the extended attribute NAME of PATH in VOLUME to VALUE, creating it or
replacing its value, like 'setfattr -n NAME -v VALUE PATH'.

NAME carries its namespace: user.NAME, trusted.NAME or security.NAME, at
most 255 bytes in all. User attributes can only be set on regular files and
directories, as on Linux. Values are at most 65536 bytes.

VALUE is read like setfattr's -v:
  0x... or 0X...  hex digits, two per byte; blanks between them are ignored
  0s... or 0S...  standard base64, with its "=" padding
  "..."           text between double quotes (the whole of VALUE starts
                  and ends with one), in which a backslash and 1 to 3
                  octal digits make one byte, \\ is a backslash and \" a
                  double quote; any other backslash is kept as it is
  anything else   the bytes as given
An empty VALUE (and "0x", "0s", "") makes an empty value.

Flags:
  --no-dereference
          act on a final symlink itself (setfattr -h); by default a final
          symlink is followed, like setfattr
  -h      show this help
`

const rmfattrUsage = `Usage: xfs3 vol rmfattr [--no-dereference] VOLUME PATH NAME

Remove the extended attribute NAME (user.NAME, trusted.NAME or
security.NAME) from PATH in VOLUME, like 'setfattr -x NAME PATH'. An
attribute that does not exist is an error.

Flags:
  --no-dereference
          act on a final symlink itself (setfattr -h); by default a final
          symlink is followed, like setfattr
  -h      show this help
`

func volSetfattr(args []string, e *env) error {
	return xattrCommand("vol setfattr", args, true)
}

func volRmfattr(args []string, e *env) error {
	return xattrCommand("vol rmfattr", args, false)
}

func xattrCommand(name string, args []string, set bool) error {
	flags := newFlags(name)
	noDeref := flags.Bool("no-dereference", false, "do not follow a final symlink")
	pos, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	want := 3
	if set {
		want = 4
	}
	if len(pos) != want {
		if set {
			return usagef("want VOLUME PATH NAME VALUE, got %s", nargs(len(pos)))
		}
		return usagef("want VOLUME PATH NAME, got %s", nargs(len(pos)))
	}
	vol, path, attr := pos[0], pos[1], pos[2]
	if err := checkXattrName(attr); err != nil {
		return err
	}
	var value []byte
	if set {
		if value, err = decodeXattrValue(pos[3]); err != nil {
			return err
		}
	}
	return withWriter(vol, func(w *writer) error {
		ino, err := w.v.Names().LookupPath(path, !*noDeref)
		if err != nil {
			return fmt.Errorf("%s: %w", vol, err)
		}
		if set {
			err = w.v.Xattrs().Set(ino, attr, value, 0)
		} else {
			err = w.v.Xattrs().Remove(ino, attr)
		}
		if err != nil {
			return w.pathErr(path, fmt.Errorf("%s: %w", displayName(attr), kindOnly(err)))
		}
		return nil
	})
}

// checkXattrName refuses a NAME without a supported namespace before the
// volume is opened.
func checkXattrName(name string) error {
	ns, short, ok := strings.Cut(name, ".")
	switch {
	case !ok || ns == "":
		return usagef("attribute name %s has no namespace: write user.%s, trusted.%s or security.%s", displayName(name), name, name, name)
	case ns != "user" && ns != "trusted" && ns != "security":
		return usagef("attribute name %s: namespace %s is not supported (user, trusted or security)", displayName(name), displayName(ns))
	case short == "":
		return usagef("attribute name %s is empty after its namespace", displayName(name))
	case len(name) > xfs.MaxXattrNameLen:
		return usagef("attribute name of %d bytes is too long (at most %d)", len(name), xfs.MaxXattrNameLen)
	}
	return nil
}

// decodeXattrValue reads VALUE like setfattr -v does.
func decodeXattrValue(s string) ([]byte, error) {
	if len(s) >= 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			return decodeHexValue(s[2:])
		case 's', 'S':
			b, err := base64.StdEncoding.Strict().DecodeString(s[2:])
			if err != nil || strings.ContainsAny(s[2:], "\r\n") {
				return nil, usagef("VALUE %s is not valid base64 after 0s", displayName(s))
			}
			return b, nil
		}
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return unquoteValue(s), nil
	}
	return []byte(s), nil
}

// decodeHexValue decodes hex digit pairs, skipping blanks anywhere.
func decodeHexValue(s string) ([]byte, error) {
	var out []byte
	var hi byte
	half := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			continue
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return nil, usagef("VALUE %s: %q is not a hex digit", displayName(s), c)
		}
		if half {
			out = append(out, hi<<4|d)
		} else {
			hi = d
		}
		half = !half
	}
	if half {
		return nil, usagef("VALUE 0x%s has an odd number of hex digits", displayName(s))
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// unquoteValue decodes a VALUE that starts and ends with a double quote.
// An escape may use the closing quote itself (`"a\"` is `a"`), as with
// setfattr.
func unquoteValue(s string) []byte {
	end := len(s) - 1 // the closing quote
	out := []byte{}
	for i := 1; i < end; {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		next := s[i+1]
		switch {
		case next >= '0' && next <= '7':
			v, j := 0, i+1
			for ; j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7'; j++ {
				v = v*8 + int(s[j]-'0')
			}
			out = append(out, byte(v))
			i = j
		case next == '\\' || next == '"':
			out = append(out, next)
			i += 2
		default:
			out = append(out, '\\')
			i++
		}
	}
	return out
}
