package main

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/xfs3/xfs3/xfs"
)

const getfattrUsage = `Usage: xfs3 vol getfattr [-e text|hex|base64] [--no-dereference] VOLUME PATH

Dump every extended attribute of PATH in VOLUME in the format of
'getfattr -d -m - -e ENCODING PATH' run as root inside the mounted
filesystem, byte for byte:

  # file: PATH
  NAME=VALUE
  ...
  (blank line)

PATH is printed as getfattr prints a relative path: leading slashes and a
leading "./" are removed (the root is "."), and newline, carriage return and
backslash are written as octal escapes (\012, \015, \134). Names are
"namespace.name" for the user, trusted and security namespaces, sorted
byte-wise; in a name, "=", newline, carriage return and backslash are octal
escapes too. XFS POSIX ACLs, stored as trusted.SGI_ACL_FILE and
trusted.SGI_ACL_DEFAULT, are also shown as system.posix_acl_access and
system.posix_acl_default in the kernel's format, as Linux lists both.
A file without attributes prints nothing at all.

Flags:
  -e ENC  value encoding (default text):
            text    "..." holding the bytes as they are, except that NUL,
                    newline and carriage return become \000, \012 and
                    \015, and backslash and double quote get a backslash
                    before them; other bytes, printable or not, are left
                    alone; one trailing NUL byte is dropped; an empty
                    value is ""
            hex     0x followed by two lower-case digits per byte ("0x"
                    when empty)
            base64  0s followed by standard padded base64 ("0s" when empty)
  --no-dereference
          do not follow a final symlink (getfattr -h); by default a final
          symlink is followed, like getfattr
  -h      show this help
`

func volGetfattr(args []string, e *env) error {
	fs := newFlags("vol getfattr")
	enc := fs.String("e", "text", "encoding")
	noDeref := fs.Bool("no-dereference", false, "do not follow a final symlink")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch *enc {
	case "text", "hex", "base64":
	default:
		return usagef("unknown encoding %q (want text, hex or base64)", *enc)
	}
	if len(pos) != 2 {
		return usagef("want VOLUME PATH, got %s", nargs(len(pos)))
	}
	vol, path := pos[0], pos[1]
	v, ino, _, err := openAt(vol, path, !*noDeref)
	if err != nil {
		return err
	}
	defer v.Close()
	attrs, err := v.Xattrs().List(ino)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
	}
	attrs = append(attrs, aclAliases(attrs)...)
	if len(attrs) == 0 {
		return nil
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].FullName() < attrs[j].FullName() })
	w := e.stdout
	w.WriteString("# file: ")
	w.WriteString(getfattrQuote(getfattrPath(path), "\n\r"))
	w.WriteByte('\n')
	for _, a := range attrs {
		w.WriteString(getfattrQuote(a.FullName(), "=\n\r"))
		w.WriteByte('=')
		w.WriteString(encodeValue(a.Value, *enc))
		w.WriteByte('\n')
	}
	return w.WriteByte('\n')
}

// getfattrPath applies getfattr's path stripping: leading slashes go, a
// leading "./" goes with the slashes after it, and nothing left is ".".
func getfattrPath(p string) string {
	if strings.HasPrefix(p, "/") {
		p = strings.TrimLeft(p, "/")
	} else if strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[1:], "/")
	}
	if p == "" {
		return "."
	}
	return p
}

// getfattrQuote escapes backslash and every byte in special as a
// backslash and three octal digits, as getfattr does for paths and names.
func getfattrQuote(s, special string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || strings.IndexByte(special, c) >= 0 {
			octal(&b, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func octal(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + c>>6)
	b.WriteByte('0' + c>>3&7)
	b.WriteByte('0' + c&7)
}

// encodeValue renders a value in one of getfattr's encodings.
func encodeValue(v []byte, enc string) string {
	var b strings.Builder
	switch enc {
	case "hex":
		const digits = "0123456789abcdef"
		b.WriteString("0x")
		for _, c := range v {
			b.WriteByte(digits[c>>4])
			b.WriteByte(digits[c&15])
		}
	case "base64":
		const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		b.WriteString("0s")
		for len(v) >= 3 {
			b.WriteByte(digits[v[0]>>2])
			b.WriteByte(digits[(v[0]&3)<<4|v[1]>>4])
			b.WriteByte(digits[(v[1]&15)<<2|v[2]>>6])
			b.WriteByte(digits[v[2]&63])
			v = v[3:]
		}
		switch len(v) {
		case 2:
			b.WriteByte(digits[v[0]>>2])
			b.WriteByte(digits[(v[0]&3)<<4|v[1]>>4])
			b.WriteByte(digits[(v[1]&15)<<2])
			b.WriteByte('=')
		case 1:
			b.WriteByte(digits[v[0]>>2])
			b.WriteByte(digits[(v[0]&3)<<4])
			b.WriteString("==")
		}
	default: // text
		b.WriteByte('"')
		for i, c := range v {
			switch {
			case c == 0 && i == len(v)-1:
				// getfattr drops one trailing NUL (C string terminator)
			case c == 0 || c == '\n' || c == '\r':
				octal(&b, c)
			case c == '\\' || c == '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

// XFS keeps POSIX ACLs in the root (trusted) namespace under these names,
// in its own big-endian format; Linux lists them as well under the system
// names below, converted to the generic little-endian xattr format.
var aclNames = []struct{ xfsName, sysName string }{
	{"SGI_ACL_FILE", "posix_acl_access"},
	{"SGI_ACL_DEFAULT", "posix_acl_default"},
}

// aclAliases returns the system.posix_acl_* attributes Linux derives from
// the XFS ACL attributes in attrs. Malformed ACLs, which the kernel would
// refuse to read, produce no alias.
func aclAliases(attrs []xfs.Xattr) []xfs.Xattr {
	var out []xfs.Xattr
	for _, a := range attrs {
		if a.Namespace != "trusted" {
			continue
		}
		for _, n := range aclNames {
			if a.Name != n.xfsName {
				continue
			}
			if val, ok := xfsACLToXattr(a.Value); ok {
				out = append(out, xfs.Xattr{Namespace: "system", Name: n.sysName, Value: val})
			}
		}
	}
	return out
}

// ACL entry tags, the same in the XFS and the generic format.
const (
	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
)

// xfsACLToXattr converts an on-disk XFS ACL (be32 count, then entries of
// be32 tag, be32 id, be16 perm, be16 pad) to the posix_acl_xattr format
// (le32 version 2, then entries of le16 tag, le16 perm, le32 id, with id
// 0xffffffff for entries that name no user or group).
func xfsACLToXattr(v []byte) ([]byte, bool) {
	if len(v) < 4 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(v)
	if uint64(len(v)) != 4+uint64(n)*12 || n > 65536 {
		return nil, false
	}
	out := make([]byte, 4, 4+8*n)
	binary.LittleEndian.PutUint32(out, 2)
	for i := uint32(0); i < n; i++ {
		e := v[4+12*i:]
		tag, id, perm := binary.BigEndian.Uint32(e), binary.BigEndian.Uint32(e[4:]), binary.BigEndian.Uint16(e[8:])
		switch tag {
		case aclUser, aclGroup:
		case aclUserObj, aclGroupObj, aclMask, aclOther:
			id = 0xffffffff
		default:
			return nil, false
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(tag))
		out = binary.LittleEndian.AppendUint16(out, perm)
		out = binary.LittleEndian.AppendUint32(out, id)
	}
	return out, true
}
