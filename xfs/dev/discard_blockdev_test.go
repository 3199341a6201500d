//go:build linux

package dev

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestBlockDeviceDiscard: a loop device opened as the volume is a block
// device to Open, its discards are BLKDISCARD, and the loop driver turns
// them into holes in its backing file (st_blocks drops by the range);
// the bytes around the range are untouched.
func TestBlockDeviceDiscard(t *testing.T) {
	backing := filepath.Join(t.TempDir(), "backing")
	data := bytes.Repeat([]byte{0xA5}, 16<<20)
	if err := os.WriteFile(backing, data, 0o644); err != nil {
		t.Fatal(err)
	}
	loop, _ := oracle.Loop(t, backing)
	d, err := Open(loop, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.blockDev || d.Size() != int64(len(data)) {
		t.Fatalf("%s opened as block device %v of %d bytes", loop, d.blockDev, d.Size())
	}
	before := allocated(t, backing)
	const off, n = 1 << 20, 8 << 20
	st, err := DiscardRanges(d, []Range{{off, n}})
	if errors.Is(err, ErrDiscardUnsupported) {
		t.Skipf("the loop device here has no discard (BLKDISCARD): %v", err)
	}
	if err != nil || st.Requests != 1 || st.Bytes != n {
		t.Fatalf("discard: %+v %v", st, err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	after := allocated(t, backing)
	t.Logf("%s (discard granularity %d): backing file allocated %d KiB before, %d KiB after a discard of %d KiB",
		loop, d.DiscardGranularity(), before>>10, after>>10, n>>10)
	if before-after < n-2*d.DiscardGranularity() {
		t.Fatalf("the backing file gave back %d bytes of the %d discarded", before-after, n)
	}
	got := make([]byte, 4096)
	for _, at := range []int64{0, off - 4096, off + n, int64(len(data)) - 4096} {
		if _, err := d.ReadAt(got, at); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[:4096]) {
			t.Fatalf("bytes at %d changed by a discard of [%d, %d)", at, off, off+n)
		}
	}
}
