package oracle

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// DamageUnlinkedBucket points an unlinked bucket of the last AG's AGI in
// the image file img at an inode number of that AG where no inode chunk
// lies, with the AGI's CRC recomputed so that only the list is wrong, and
// returns a function that puts the AGI back. A crash that logs nothing of
// that AG leaves the damage in place through a log replay.
func DamageUnlinkedBucket(tb testing.TB, img string) (restore func()) {
	tb.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		tb.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(b)
	if err != nil {
		tb.Fatal(err)
	}
	g := format.NewGeometry(sb)
	ag := format.AgNumber(g.AgCount - 1)
	off := int64(g.AgbToDaddr(ag, 0))<<format.BBShift + 2*int64(g.SectSize)
	orig := bytes.Clone(b[off : off+int64(g.SectSize)])
	agi := bytes.Clone(orig)
	last := g.AgBlockToAgIno(format.AgBlock(g.AgSize(ag) - 1))
	const bucket = 5
	binary.BigEndian.PutUint32(agi[40+4*bucket:], uint32(last-last%format.AgiUnlinkedBuckets+bucket))
	format.SetCRC(agi, format.AgiCRCOff)
	put := func(sector []byte) {
		f, err := os.OpenFile(img, os.O_WRONLY, 0)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(sector, off); err != nil {
			tb.Fatal(err)
		}
	}
	put(agi)
	return func() { put(orig) }
}
