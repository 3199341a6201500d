package xfs

import (
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/mkfs"
)

// TestInodesPublishedFirst: a transaction's new inode versions are in
// place before any of its commit hooks runs, even one registered before
// the inode was changed. The create path relies on it: it releases the
// new inode's handle in a hook, and a handle released before its version
// is published could be reclaimed with the free inode it was.
func TestInodesPublishedFirst(t *testing.T) {
	img := filepath.Join(t.TempDir(), "v.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := Open(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	root := v.Root()
	h, unlock := v.lockInode(root)
	const want = 123456
	var seen []uint64
	err = v.runTx(0, false, func(t *txn) error {
		t.OnCommit(func() { seen = append(seen, h.cur.Load().core.ChangeCount) })
		c, err := t.modify(h, root)
		if err != nil {
			return err
		}
		c.core.ChangeCount = want
		t.OnCommit(func() { seen = append(seen, h.cur.Load().core.ChangeCount) })
		return nil
	})
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Fatalf("change counts seen by the commit hooks: %v, want %d in both", seen, want)
	}
}
