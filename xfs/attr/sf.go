package attr

import (
	"bytes"
	"encoding/binary"

	"github.com/xfs3/xfs3/xfs/format"
)

// Short form (xfs_attr_shortform), the whole attribute fork inside the
// inode's literal area:
//
//	totsize be16 | count u8 | pad u8 | entries: namelen u8, valuelen u8, flags u8, name, value
//
// Entries are not padded and not sorted; a new entry goes at the end.

type sfEnt struct {
	flags uint8
	name  []byte
	value []byte
}

// sfEntsize is xfs_attr_sf_entsize_byname.
func sfEntsize(nameLen, valueLen int) int { return 3 + nameLen + valueLen }

// decodeSF parses a short-form fork (already checked by verifySF).
func decodeSF(fork []byte) []sfEnt {
	count := int(fork[2])
	out := make([]sfEnt, count)
	p := format.AttrSFHdrSize
	for i := range out {
		out[i], p = sfAt(fork, p)
	}
	return out
}

// sfAt decodes the entry at offset p of a checked short-form fork and
// returns it with the offset of the next.
func sfAt(fork []byte, p int) (sfEnt, int) {
	nl, vl := int(fork[p]), int(fork[p+1])
	return sfEnt{fork[p+2], fork[p+3 : p+3+nl], fork[p+3+nl : p+3+nl+vl]}, p + sfEntsize(nl, vl)
}

// encodeSF builds the bytes of a short-form fork holding ents.
func encodeSF(ents []sfEnt) []byte {
	size := format.AttrSFHdrSize
	for _, e := range ents {
		size += sfEntsize(len(e.name), len(e.value))
	}
	b := make([]byte, size)
	binary.BigEndian.PutUint16(b, uint16(size))
	b[2] = byte(len(ents))
	p := format.AttrSFHdrSize
	for _, e := range ents {
		b[p], b[p+1], b[p+2] = byte(len(e.name)), byte(len(e.value)), e.flags
		copy(b[p+3:], e.name)
		copy(b[p+3+len(e.name):], e.value)
		p += sfEntsize(len(e.name), len(e.value))
	}
	return b
}

// sfTotsize is the used size of a short-form fork.
func sfTotsize(fork []byte) int { return int(binary.BigEndian.Uint16(fork)) }

// verifySF checks a short-form fork the way xfs_attr_shortform_verify and
// xfs_repair do: entries inside totsize, names not empty and free of NUL
// bytes, known flags in one namespace, count matching totsize.
func verifySF(fork []byte) error {
	const what = "short-form attributes"
	if len(fork) < format.AttrSFHdrSize {
		return format.Corrupt(what, "", "fork of %d bytes is too small", len(fork))
	}
	tot, count := sfTotsize(fork), int(fork[2])
	if tot < format.AttrSFHdrSize || tot > len(fork) {
		return format.Corrupt(what, "", "total size %d outside the %d-byte fork", tot, len(fork))
	}
	if count == 0 && tot != format.AttrSFHdrSize {
		return format.Corrupt(what, "", "no entries but total size %d", tot)
	}
	p := format.AttrSFHdrSize
	for i := 0; i < count; i++ {
		if p+3 > tot {
			return format.Corrupt(what, "", "entry %d starts past the end", i)
		}
		nl, vl, fl := int(fork[p]), int(fork[p+1]), fork[p+2]
		if nl == 0 {
			return format.Corrupt(what, "", "entry %d has an empty name", i)
		}
		if p+sfEntsize(nl, vl) > tot {
			return format.Corrupt(what, "", "entry %d overruns the fork", i)
		}
		if fl&^(format.AttrRoot|format.AttrSecure|format.AttrParent) != 0 || !oneNamespace(fl) {
			return format.Corrupt(what, "", "entry %d has flags %#x", i, fl)
		}
		if bytes.IndexByte(fork[p+3:p+3+nl], 0) >= 0 {
			return format.Corrupt(what, "", "entry %d name holds a NUL byte", i)
		}
		p += sfEntsize(nl, vl)
	}
	if p != tot {
		return format.Corrupt(what, "", "%d entries end at %d, header says %d", count, p, tot)
	}
	return nil
}

func oneNamespace(flags uint8) bool {
	ns := flags & (format.AttrRoot | format.AttrSecure | format.AttrParent)
	return ns&(ns-1) == 0
}

// sfFind returns the index of the entry named (ns, name), or -1.
func sfFind(ents []sfEnt, ns uint8, name []byte) int {
	for i, e := range ents {
		if e.flags&matchMask == ns&matchMask && bytes.Equal(e.name, name) {
			return i
		}
	}
	return -1
}
