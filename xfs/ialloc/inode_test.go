package ialloc

import (
	"errors"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// finobtRecs counts the chunks the finobt of AG ag lists.
func finobtRecs(t *testing.T, h *harness, ag format.AgNumber) int {
	t.Helper()
	tx := h.begin()
	defer tx.Cancel()
	a, err := tx.Lock(ag)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := a.Tree(true).Check(func([]byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func committedAgi(t *testing.T, h *harness, ag format.AgNumber) *format.Agi {
	t.Helper()
	agi, err := Committed(h.Cache.Read, &h.Geo, ag)
	if err != nil {
		t.Fatal(err)
	}
	return agi
}

// TestInodeAlloc drives the inode allocator from a fresh volume through
// one action after a setup that takes some of the root chunk's free
// inodes, and checks where the inode came from and what the AGI and the
// finobt say afterwards.
func TestInodeAlloc(t *testing.T) {
	const all = -1 // setup: take every free inode of AG 0
	for _, c := range []struct {
		name string
		take int // inodes allocated next to the root first (all: every free one)
		// action: "file", "dir", "free-last" (the last taken),
		// "free-free" (a free one), "free-together" (the last taken and
		// a free one of its chunk, by FreeInodes), "free-repeated" (the
		// last taken twice, by FreeInodes)
		action  string
		err     error
		ag      format.AgNumber // AG of the inode allocated by the action
		sameAs  string          // "root-chunk", "new-chunk" or "last-taken"
		free    int             // AG's agi_freecount after the action
		finobt  int             // AG's finobt records after the action
		inodes  int             // AG's agi_count growth over the whole case
		aligned bool            // the new chunk starts on sb_inoalignmt
	}{
		{name: "free inode in the parent's chunk", take: 0, action: "file",
			sameAs: "root-chunk", free: 60, finobt: 1},
		{name: "last free inode of a chunk leaves the finobt", take: 60, action: "file",
			sameAs: "root-chunk", free: 0, finobt: 0},
		{name: "finobt empty: a new chunk", take: all, action: "file",
			sameAs: "new-chunk", free: 63, finobt: 1, inodes: 64, aligned: true},
		{name: "a freed inode goes back to the finobt and is taken again", take: all, action: "free-last",
			sameAs: "last-taken", free: 0, finobt: 0},
		{name: "directories rotate through the AGs", take: 0, action: "dir",
			ag: 1, free: 63, finobt: 1, inodes: 64},
		{name: "freeing a free inode is corruption", take: 0, action: "free-free",
			err: format.ErrCorrupt},
		{name: "freeing a free inode among others is corruption", take: 1, action: "free-together",
			err: format.ErrCorrupt},
		{name: "freeing an inode twice at once is corruption", take: 1, action: "free-repeated",
			err: format.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2})
			root := h.Sb.RootIno
			rootChunk := root &^ (format.InodesPerChunk - 1)
			take := c.take
			if take == all {
				take = int(committedAgi(t, h, 0).FreeCount)
			}
			before := committedAgi(t, h, c.ag).Count
			tx := h.begin()
			var last format.Ino
			for i := 0; i < take; i++ {
				ino, err := tx.Alloc(root, false)
				if err != nil {
					t.Fatal(err)
				}
				h.setInode(tx, ino, true)
				last = ino
			}
			h.commit(tx)

			tx = h.begin()
			var ino format.Ino
			var err error
			switch c.action {
			case "file", "dir":
				ino, err = tx.Alloc(root, c.action == "dir")
			case "free-last":
				h.setInode(tx, last, false)
				if err = tx.Free(last); err == nil {
					ino, err = tx.Alloc(root, false)
				}
			case "free-free":
				err = tx.Free(rootChunk + format.InodesPerChunk - 1)
			case "free-together":
				err = tx.FreeInodes([]format.Ino{last, rootChunk + format.InodesPerChunk - 1})
			case "free-repeated":
				err = tx.FreeInodes([]format.Ino{last, last})
			}
			if c.err != nil || err != nil {
				tx.Cancel()
				if !errors.Is(err, c.err) {
					t.Fatalf("%s: %v, want %v", c.action, err, c.err)
				}
				return
			}
			h.setInode(tx, ino, true)
			h.commit(tx)

			if ag, _ := h.Geo.InoToAg(ino); ag != c.ag {
				t.Errorf("inode %d is in AG %d, want %d", ino, ag, c.ag)
			}
			chunk := ino &^ (format.InodesPerChunk - 1)
			switch c.sameAs {
			case "root-chunk":
				if chunk != rootChunk {
					t.Errorf("inode %d is not in the root's chunk %d", ino, rootChunk)
				}
			case "new-chunk":
				if chunk == rootChunk || ino != chunk {
					t.Errorf("inode %d is not the first of a new chunk", ino)
				}
			case "last-taken":
				if ino != last {
					t.Errorf("inode %d, want the freed %d", ino, last)
				}
			}
			agi := committedAgi(t, h, c.ag)
			if int(agi.FreeCount) != c.free || int(agi.Count-before) != c.inodes {
				t.Errorf("AGI: %d free, %d new inodes; want %d, %d", agi.FreeCount, agi.Count-before, c.free, c.inodes)
			}
			if n := finobtRecs(t, h, c.ag); n != c.finobt {
				t.Errorf("finobt has %d records, want %d", n, c.finobt)
			}
			if c.aligned {
				_, agino := h.Geo.InoToAg(ino)
				if bno, _ := h.Geo.AgInoToAgBlock(agino); uint32(bno)%max(h.Sb.InoAlignMt, 1) != 0 {
					t.Errorf("new chunk at block %d, alignment %d", bno, h.Sb.InoAlignMt)
				}
			}
		})
	}
}
