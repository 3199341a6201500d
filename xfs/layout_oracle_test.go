package xfs_test

import (
	"encoding/binary"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// Test-only readers of the few on-disk layouts the corruption tables aim
// at. They are written from the format description, independently of
// packages dir, attr and dabtree, so that a row damages the bytes the
// kernel's layout puts there, not the bytes the engine believes are there.

var be = binary.BigEndian

// dirDataEnd is where the entries of a directory data block end: before
// the leaf array and tail of a single-block directory, else at the end.
func dirDataEnd(t testing.TB, b []byte) int {
	t.Helper()
	if be.Uint32(b) != format.Dir3BlockMagic {
		return len(b)
	}
	count := int(be.Uint32(b[len(b)-8:]))
	end := len(b) - 8 - 8*count
	if end < format.Dir3DataHdrSize {
		t.Fatalf("block tail count %d does not fit", count)
	}
	return end
}

// dataEntries decodes the live entries of a directory data block:
// inumber (8), namelen (1), name, ftype (1), padding, tag (2), each
// entry a multiple of 8 bytes; free regions start with tag 0xFFFF and
// their length.
func (im *image) dataEntries(t testing.TB, b []byte) []dataEntry {
	t.Helper()
	end := dirDataEnd(t, b)
	var out []dataEntry
	for off := format.Dir3DataHdrSize; off < end; {
		if be.Uint16(b[off:]) == format.DirDataFreeTag {
			n := int(be.Uint16(b[off+2:]))
			if n == 0 || n%8 != 0 {
				t.Fatalf("free region of %d bytes at %d", n, off)
			}
			off += n
			continue
		}
		n := int(b[off+8])
		size := (8 + 1 + n + 1 + 2 + 7) &^ 7
		if off+size > end {
			t.Fatalf("entry at %d overruns the block", off)
		}
		out = append(out, dataEntry{off, size, string(b[off+9 : off+9+n]), format.Ino(be.Uint64(b[off:]))})
		off += size
	}
	return out
}

// daNodeEntry is one (hashval, before) pair of a da-btree node.
type daNodeEntry struct {
	HashVal uint32 // the largest hash below the child
	Before  uint32 // the child's block number in the fork
}

// decodeDaNode returns the level and entries of a da node block: count
// at byte 56, level at 58, entries from 64.
func decodeDaNode(t testing.TB, b []byte) (int, []daNodeEntry) {
	t.Helper()
	if m := be.Uint16(b[8:]); m != format.Da3NodeMagic {
		t.Fatalf("not a da node (magic %#x)", m)
	}
	count, level := int(be.Uint16(b[56:])), int(be.Uint16(b[58:]))
	if count == 0 || format.Da3NodeHdrSize+8*count > len(b) {
		t.Fatalf("da node with %d entries", count)
	}
	ents := make([]daNodeEntry, count)
	for i := range ents {
		p := format.Da3NodeHdrSize + 8*i
		ents[i] = daNodeEntry{be.Uint32(b[p:]), be.Uint32(b[p+4:])}
	}
	return level, ents
}

// remoteAttrBlock finds the remote attribute name in an attr3 leaf and
// returns the fork block of its value. The header is 80 bytes with the
// entry count at 56; entries are (hashval 4, nameidx 2, flags 1, pad 1);
// a remote entry's name record is (valueblk 4, valuelen 4, namelen 1,
// name).
func remoteAttrBlock(t testing.TB, leaf []byte, name string) (uint32, bool) {
	t.Helper()
	if m := be.Uint16(leaf[8:]); m != format.Attr3LeafMagic {
		t.Fatalf("not an attr3 leaf (magic %#x)", m)
	}
	count := int(be.Uint16(leaf[56:]))
	for i := 0; i < count; i++ {
		e := format.Attr3LeafHdrSize + 8*i
		idx, flags := int(be.Uint16(leaf[e+4:])), leaf[e+6]
		if flags&format.AttrLocal != 0 || idx+9 > len(leaf) {
			continue
		}
		n := int(leaf[idx+8])
		if idx+9+n <= len(leaf) && string(leaf[idx+9:idx+9+n]) == name {
			return be.Uint32(leaf[idx:]), true
		}
	}
	return 0, false
}
