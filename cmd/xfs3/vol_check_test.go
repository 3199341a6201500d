package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// vol check's tests hold its repair table to what xfs_repair does: each
// case damages one kind of block (or a few, of one row, in different AGs
// or inodes) on a copy of one volume, checks that vol check names each
// structure, its place and the table's row, and that xfs_repair -n's
// findings come with it; then xfs_repair mends the copy and the case
// checks that what the row says happened.

// checkFixture is the volume every damage case starts from.
type checkFixture struct {
	img                        string
	blockSize, agBlocks, inoSz int64
	agBlkLog, inoPBLog         uint
	quotaIno                   uint64
	inos                       map[string]uint64            // path on the volume → inode
	keys                       map[string]string            // "bucket/key" → ETag
	usage                      map[string]store.BucketUsage // by bucket
}

// checkLong makes names long, so that few fit a directory block.
var checkLong = strings.Repeat("k", 150)

// buildCheckFixture makes the volume: in bucket photos a leaf-form
// prefix (2024/: several entry blocks), a node-form one (node/), a
// prefix of one directory block with a sub-prefix (small/), an object
// whose xattrs fill a leaf block, two objects side by side, and a file
// with an extent tree (frag, written through the engine); bucket other
// holds one object.
func buildCheckFixture(t *testing.T) *checkFixture {
	t.Helper()
	f := &checkFixture{img: filepath.Join(t.TempDir(), "vol.xfs"), inos: map[string]uint64{}}
	if _, err := mkfs.Format(f.img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(f.img)
	volMust(t, err)
	volMust(t, st.CreateBucket("photos"))
	volMust(t, st.CreateBucket("other"))
	put := func(bucket, key string, meta store.Meta) {
		body := "body of " + key
		_, err := st.PutObject(bucket, key, strings.NewReader(body), int64(len(body)), meta)
		volMust(t, err)
	}
	for i := range 60 {
		put("photos", fmt.Sprintf("2024/%s-%03d", checkLong, i), store.Meta{})
	}
	// More hash entries than a leaf block holds: node form.
	for i := range 530 {
		put("photos", fmt.Sprintf("node/n-%04d", i), store.Meta{})
	}
	for i := range 40 {
		put("photos", fmt.Sprintf("small/%d", i), store.Meta{})
	}
	put("photos", "small/sub/x", store.Meta{})
	// Twelve 100-byte values beside the store's own xattrs are more than
	// the inode's attribute fork holds: they go to a leaf block.
	meta := store.Meta{ContentType: "image/jpeg", User: map[string]string{}, Tags: []store.Tag{{Key: "a", Value: "b"}}}
	for i := range 12 {
		meta.User[fmt.Sprintf("attribute-%02d", i)] = strings.Repeat("m", 100)
	}
	put("photos", "attrs/object", meta)
	put("photos", "inodes/victim", store.Meta{})
	put("photos", "inodes/neighbour", store.Meta{})
	put("photos", "top", store.Meta{})
	put("other", "top", store.Meta{})
	// frag: every other block written, so that its extents outgrow the
	// inode and go to an extent tree.
	v := st.Volume()
	photos, err := v.Names().LookupPath("photos", false)
	volMust(t, err)
	frag, err := v.Names().Create(photos, "frag", xfs.Attrs{Mode: 0o644})
	volMust(t, err)
	for i := range 100 {
		_, err := v.Files().WriteAt(frag, []byte("fragment"), int64(i)*2*4096)
		volMust(t, err)
	}
	for _, p := range []string{"photos/2024", "photos/node", "photos/small", "photos/attrs/object", "photos/inodes/victim",
		"photos/inodes/neighbour", "photos/frag"} {
		ino, err := v.Names().LookupPath(p, false)
		volMust(t, err)
		f.inos[p] = uint64(ino)
	}
	volMust(t, st.Close())
	f.keys, f.usage = volumeKeys(t, f.img)

	sb := oracle.DBSuperblock(t, f.img)
	for name, p := range map[string]*int64{"blocksize": &f.blockSize, "agblocks": &f.agBlocks, "inodesize": &f.inoSz} {
		fmt.Sscan(sb[name], p)
	}
	fmt.Sscan(sb["agblklog"], &f.agBlkLog)
	fmt.Sscan(sb["inopblog"], &f.inoPBLog)
	fmt.Sscan(sb["pquotino"], &f.quotaIno)
	// The shapes the cases rely on.
	for p, want := range map[string]string{"photos/2024": "leaf", "photos/node": "node", "photos/small": "block"} {
		if got := oracle.DirFormat(t, f.img, f.inos[p]); got != want {
			t.Fatalf("%s is a %s directory, want %s", p, got, want)
		}
	}
	if got := oracle.AttrFormat(t, f.img, f.inos["photos/attrs/object"]); got != "leaf" {
		t.Fatalf("photos/attrs/object has %s xattrs, want a leaf block", got)
	}
	if got := oracle.DataForkFormat(t, f.img, f.inos["photos/frag"]); got != "btree" {
		t.Fatalf("photos/frag has a %s data fork, want btree", got)
	}
	oracle.Repair(t, f.img)
	return f
}

// volumeKeys lists every bucket of the volume at img ("bucket/key" →
// ETag) and its usage. The open is writable: it recounts the usage when
// the quota flags say the counts cannot be trusted.
func volumeKeys(t *testing.T, img string) (map[string]string, map[string]store.BucketUsage) {
	t.Helper()
	st, err := store.Open(img)
	volMust(t, err)
	defer func() { volMust(t, st.Close()) }()
	buckets, err := st.ListBuckets()
	volMust(t, err)
	usage := map[string]store.BucketUsage{}
	us, err := st.Quotas().List()
	volMust(t, err)
	for _, u := range us {
		usage[u.Bucket] = u
	}
	out := map[string]string{}
	for _, b := range buckets {
		opt := store.ListOptions{MaxKeys: 1000}
		for {
			page, err := st.ListObjects(b.Name, opt)
			volMust(t, err)
			for _, o := range page.Objects {
				out[b.Name+"/"+o.Key] = o.ETag
			}
			if !page.IsTruncated {
				break
			}
			opt.StartAfter = page.NextMarker
		}
	}
	return out, usage
}

// fsb is the byte offset of block agbno of AG ag.
func (f *checkFixture) fsb(ag, agbno int64) int64 { return (ag*f.agBlocks + agbno) * f.blockSize }

// forkBlock is the byte offset of file block fb of inode ino's data fork
// (attr: its attribute fork), as xfs_db maps it.
func (f *checkFixture) forkBlock(t *testing.T, img string, ino uint64, attr bool, fb int64) int64 {
	t.Helper()
	cmd, fork := "bmap", "data"
	if attr {
		cmd, fork = "bmap -a", "attr"
	}
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), cmd), "\n") {
		var off, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, fork+" offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err == nil && fb >= off && fb < off+count {
			return f.fsb(ag, agbno+fb-off)
		}
	}
	t.Fatalf("inode %d maps no %s fork block %d", ino, fork, fb)
	return 0
}

// inodeOffset is the byte offset of inode ino.
func (f *checkFixture) inodeOffset(ino uint64) int64 {
	agino := int64(ino) & (1<<(f.agBlkLog+f.inoPBLog) - 1)
	return f.fsb(int64(ino)>>(f.agBlkLog+f.inoPBLog), agino>>f.inoPBLog) + (agino&(1<<f.inoPBLog-1))*f.inoSz
}

// dbBlock is the byte offset of the block a field of an xfs_db object
// holds: of AG ag's header ("agf", "bnoroot"), or with ag -1 of any
// object ("inode 131", "u3.bmbt.ptrs[1]": a filesystem block).
func (f *checkFixture) dbBlock(t *testing.T, img string, ag int64, object, field string) int64 {
	t.Helper()
	if ag >= 0 {
		object = fmt.Sprintf("%s %d", object, ag)
	}
	var bno int64
	if _, err := fmt.Sscan(oracle.ParseFields(oracle.DB(t, img, object, "print "+field))[field], &bno); err != nil {
		t.Fatalf("%s %s: %v", object, field, err)
	}
	if ag < 0 {
		return f.fsb(bno>>f.agBlkLog, bno&(1<<f.agBlkLog-1))
	}
	return f.fsb(ag, bno)
}

// Directory blocks: the leaf (or node root) block lies at 32 GiB in the
// data fork, the free index at 64 GiB.
func (f *checkFixture) leafBlock() int64 { return (32 << 30) / f.blockSize }
func (f *checkFixture) freeBlock() int64 { return (64 << 30) / f.blockSize }

// damage is what a case does to the volume: "damaged!" written at off,
// over a structure's contents (past a block's header: its magic and owner
// stay), or, with crc, the 4 bytes of its checksum at off flipped and
// nothing else.
type damage struct {
	off int64
	crc bool
}

// contents is damage over a structure's contents 100 bytes in.
func contents(off int64) damage { return damage{off: off + 100} }

// checkCase is one kind of damaged structure, or a few structures of
// one row of the table (in different AGs, or different inodes: each is
// marked sick on its own).
type checkCase struct {
	name string
	// spot finds where to damage the copy img.
	spot func(t *testing.T, f *checkFixture, img string) []damage
	// want are the sick structures (Kind, Ino, Place, Bucket, Prefix,
	// Key, Path, Damage; the AG of an AG's), in the order vol check lists
	// them: AGs, inodes by number, quota file blocks.
	want []checkedStructure
	// quiet: xfs_repair -n exits 0 on it, and names no inode (an xattr
	// block whose checksum alone is wrong: it prints only "Metadata CRC
	// error detected").
	quiet bool
	// after checks the repaired copy against what the row says.
	after func(t *testing.T, f *checkFixture, r repaired)
}

// repaired is a copy after xfs_repair, and what vol check predicted.
type repaired struct {
	img       string
	pred      checkReport
	keys      map[string]string
	usage     map[string]store.BucketUsage
	lostFound []xfs.DirEntry
	// The quota flags xfs_repair left, and those after a store's open
	// and close.
	qflags, qflagsOpened uint16
}

// keysChanged says how r.keys differ from the fixture's, outside the
// keys under the prefixes gone ("bucket/prefix").
func keysChanged(f *checkFixture, r repaired, gone ...string) string {
	under := func(k string) bool {
		return slices.ContainsFunc(gone, func(p string) bool { return strings.HasPrefix(k, p) })
	}
	var d []string
	for k, etag := range f.keys {
		if got, ok := r.keys[k]; !under(k) && (!ok || got != etag) {
			d = append(d, "missing or changed "+k)
		}
	}
	for k := range r.keys {
		if _, ok := f.keys[k]; !ok {
			d = append(d, "new "+k)
		}
	}
	slices.Sort(d)
	return strings.Join(d, ", ")
}

// nothingLost: every key as it was, /lost+found empty.
func nothingLost(t *testing.T, f *checkFixture, r repaired) {
	if d := keysChanged(f, r); d != "" {
		t.Errorf("keys after xfs_repair: %s", d)
	}
	if len(r.lostFound) != 0 {
		t.Errorf("/lost+found holds %d entries", len(r.lostFound))
	}
}

// keysUnder counts r's keys under prefix ("bucket/prefix").
func keysUnder(r repaired, prefix string) int {
	n := 0
	for k := range r.keys {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// movedToLostFound: the keys under prefix that are gone are in
// /lost+found, named by inode number, as many as xfs_repair -n said;
// every other key stays. whole: all of the prefix's entries went.
func movedToLostFound(prefix string, whole bool) func(t *testing.T, f *checkFixture, r repaired) {
	return func(t *testing.T, f *checkFixture, r repaired) {
		if d := keysChanged(f, r, prefix); d != "" {
			t.Errorf("keys outside %s after xfs_repair: %s", prefix, d)
		}
		before, after := keysUnder(repaired{keys: f.keys}, prefix), keysUnder(r, prefix)
		if after >= before || whole && after != 0 {
			t.Errorf("%s: %d keys before, %d after xfs_repair", prefix, before, after)
		}
		if len(r.lostFound) == 0 || len(r.lostFound) != r.pred.Repair.LostFound {
			t.Errorf("/lost+found holds %d entries, xfs_repair -n said %d would go there", len(r.lostFound), r.pred.Repair.LostFound)
		}
		// Each entry one key: the fixture's sub-prefix holds one.
		if before-after != len(r.lostFound) {
			t.Errorf("%d keys of %s gone, %d entries in /lost+found", before-after, prefix, len(r.lostFound))
		}
		for _, e := range r.lostFound {
			if e.Name != fmt.Sprint(e.Ino) {
				t.Errorf("/lost+found entry %q is inode %d", e.Name, e.Ino)
			}
		}
	}
}

// lostPrefix: a directory moved to /lost+found holds name.
func lostPrefix(t *testing.T, r repaired, name string) {
	t.Helper()
	for _, e := range r.lostFound {
		if e.Type == format.FTDir && lookupPath(t, r.img, "lost+found/"+e.Name+"/"+name) {
			return
		}
	}
	t.Errorf("no directory in /lost+found holds %q", name)
}

// lookupPath tells whether path names something in the volume at img.
func lookupPath(t *testing.T, img, path string) bool {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	volMust(t, err)
	defer v.Close()
	_, err = v.Names().LookupPath(path, false)
	return err == nil
}

// objectsGone: the keys are gone, nothing went to /lost+found, every
// other key stays.
func objectsGone(keys ...string) func(t *testing.T, f *checkFixture, r repaired) {
	return func(t *testing.T, f *checkFixture, r repaired) {
		for _, k := range keys {
			if _, ok := r.keys[k]; ok || lookupPath(t, r.img, k) {
				t.Errorf("%s is still there", k)
			}
		}
		if d := keysChanged(f, r, keys...); d != "" {
			t.Errorf("keys after xfs_repair: %s", d)
		}
		if len(r.lostFound) != 0 {
			t.Errorf("/lost+found holds %d entries", len(r.lostFound))
		}
	}
}

// xattrsOf lists the xattrs of the file at path in the volume at img.
func xattrsOf(t *testing.T, img, path string) []xfs.Xattr {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	volMust(t, err)
	defer v.Close()
	ino, err := v.Names().LookupPath(path, false)
	volMust(t, err)
	xs, err := v.Xattrs().List(ino)
	volMust(t, err)
	return xs
}

// readKey reads an object of the repaired copy whole.
func readKey(t *testing.T, img, bucket, key string) string {
	t.Helper()
	st, err := store.Open(img)
	volMust(t, err)
	defer st.Close()
	o, err := st.GetObject(bucket, key)
	volMust(t, err)
	defer o.Close()
	b, err := io.ReadAll(o.Reader())
	volMust(t, err)
	return string(b)
}

// qflags is the superblock's quota flags.
func qflags(t *testing.T, img string) uint16 {
	t.Helper()
	f, err := os.Open(img)
	volMust(t, err)
	defer f.Close()
	sector := make([]byte, 512)
	_, err = f.ReadAt(sector, 0)
	volMust(t, err)
	sb, err := format.DecodeSuperblock(sector)
	volMust(t, err)
	return sb.QFlags
}

func TestVolCheckRepairTable(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair)
	f := buildCheckFixture(t)
	ino := func(p string) uint64 { return f.inos[p] }
	one := func(d damage) []damage { return []damage{d} }
	ag := func(n uint32) checkedStructure {
		return checkedStructure{Kind: "ag", AG: &n, Place: store.PlaceVolume, Damage: damageAG}
	}
	prefix := func(p, pre string, damage string) checkedStructure {
		return checkedStructure{Kind: "inode", Ino: ino(p), Place: store.PlacePrefix, Bucket: "photos", Prefix: pre, Path: "/" + p, Damage: damage}
	}
	object := func(p, damage string) checkedStructure {
		return checkedStructure{Kind: "inode", Ino: ino(p), Place: store.PlaceObject, Bucket: "photos", Key: strings.TrimPrefix(p, "photos/"), Path: "/" + p, Damage: damage}
	}
	cases := []checkCase{
		{
			// One AG structure in each AG.
			name: "AG headers",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return []damage{contents(f.fsb(0, 0) + 512), contents(f.fsb(1, 0) + 2*512), contents(f.fsb(2, 0) + 3*512),
					contents(f.dbBlock(t, img, 3, "agf", "bnoroot"))}
			},
			want:  []checkedStructure{ag(0), ag(1), ag(2), ag(3)}, // AGF, AGI, AGFL, bnobt
			after: nothingLost,
		},
		{
			name: "AG btrees",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return []damage{contents(f.dbBlock(t, img, 0, "agf", "cntroot")), contents(f.dbBlock(t, img, 1, "agf", "refcntroot")),
					contents(f.dbBlock(t, img, 2, "agi", "root")), contents(f.dbBlock(t, img, 3, "agi", "free_root"))}
			},
			want:  []checkedStructure{ag(0), ag(1), ag(2), ag(3)}, // cntbt, refcountbt, inobt, finobt
			after: nothingLost,
		},
		{
			// Block 0 holds the records of projects 0 to 29: both buckets'.
			name: "quota file block",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return one(contents(f.forkBlock(t, img, f.quotaIno, false, 0)))
			},
			want: []checkedStructure{{Kind: "quota", Place: store.PlaceQuota, Damage: damageQuota}},
			after: func(t *testing.T, f *checkFixture, r repaired) {
				nothingLost(t, f, r)
				if r.qflags&quota.FlagProjectChecked != 0 || r.qflagsOpened&quota.FlagProjectChecked == 0 {
					t.Errorf("quota flags %#x after xfs_repair, %#x after an open: want the checked flag cleared, then set", r.qflags, r.qflagsOpened)
				}
				for _, b := range []string{"photos", "other"} {
					if got, want := r.usage[b], f.usage[b]; got.Bytes != want.Bytes || got.Objects != want.Objects {
						t.Errorf("bucket %s: usage %d bytes %d objects recounted, want %d and %d", b, got.Bytes, got.Objects, want.Bytes, want.Objects)
					}
				}
			},
		},
		{
			name: "directory block of many",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return one(contents(f.forkBlock(t, img, ino("photos/2024"), false, 0)))
			},
			want:  []checkedStructure{prefix("photos/2024", "2024/", damageDirBlock)},
			after: movedToLostFound("photos/2024/", false),
		},
		{
			name: "directory of one block",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return one(contents(f.forkBlock(t, img, ino("photos/small"), false, 0)))
			},
			want: []checkedStructure{prefix("photos/small", "small/", damageDirBlock)},
			after: func(t *testing.T, f *checkFixture, r repaired) {
				movedToLostFound("photos/small/", true)(t, f, r)
				lostPrefix(t, r, "x") // small/sub/, with its object
			},
		},
		{
			name: "directory leaf and free blocks",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return []damage{contents(f.forkBlock(t, img, ino("photos/2024"), false, f.leafBlock())),
					contents(f.forkBlock(t, img, ino("photos/node"), false, f.freeBlock()))}
			},
			want:  sortedByIno(prefix("photos/2024", "2024/", damageDirIndex), prefix("photos/node", "node/", damageDirIndex)),
			after: nothingLost,
		},
		{
			name: "directory node block",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return one(contents(f.forkBlock(t, img, ino("photos/node"), false, f.leafBlock())))
			},
			want:  []checkedStructure{prefix("photos/node", "node/", damageDirIndex)},
			after: nothingLost,
		},
		{
			// Over the inode's magic: its contents are wrong.
			name: "object's inode and extent tree block",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return []damage{{off: f.inodeOffset(ino("photos/inodes/victim"))},
					contents(f.dbBlock(t, img, -1, fmt.Sprintf("inode %d", ino("photos/frag")), "u3.bmbt.ptrs[1]"))}
			},
			want:  sortedByIno(object("photos/inodes/victim", damageInode), object("photos/frag", damageExtents)),
			after: objectsGone("photos/inodes/victim", "photos/frag"),
		},
		{
			name: "directory's inode",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return one(damage{off: f.inodeOffset(ino("photos/small"))})
			},
			want: []checkedStructure{prefix("photos/small", "small/", damageInode)},
			after: func(t *testing.T, f *checkFixture, r repaired) {
				movedToLostFound("photos/small/", true)(t, f, r)
				lostPrefix(t, r, "x")
				if lookupPath(t, r.img, "photos/small") {
					t.Errorf("the directory of small/ is still there")
				}
			},
		},
		{
			name: "xattr leaf block",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return one(contents(f.forkBlock(t, img, ino("photos/attrs/object"), true, 0)))
			},
			want: []checkedStructure{object("photos/attrs/object", damageXattrs)},
			after: func(t *testing.T, f *checkFixture, r repaired) {
				if _, ok := r.keys["photos/attrs/object"]; !ok {
					t.Errorf("attrs/object is gone")
				}
				if d := keysChanged(f, r, "photos/attrs/object"); d != "" || len(r.lostFound) != 0 {
					t.Errorf("keys after xfs_repair: %s; /lost+found holds %d entries", d, len(r.lostFound))
				}
				if xs := xattrsOf(t, r.img, "photos/attrs/object"); len(xs) != 0 {
					t.Errorf("attrs/object keeps %d xattrs", len(xs))
				}
				if got := readKey(t, r.img, "photos", "attrs/object"); got != "body of attrs/object" {
					t.Errorf("attrs/object reads %q", got)
				}
			},
		},
		// A checksum alone wrong: rewritten, nothing lost.
		{
			name: "inode and directory block checksums",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				return []damage{{off: f.inodeOffset(ino("photos/inodes/victim")) + 100, crc: true}, // di_crc
					{off: f.forkBlock(t, img, ino("photos/2024"), false, 0) + 4, crc: true}} // dir3 data header: magic, crc
			},
			want: sortedByIno(object("photos/inodes/victim", damageInode), prefix("photos/2024", "2024/", damageDirBlock)),
			after: func(t *testing.T, f *checkFixture, r repaired) {
				nothingLost(t, f, r)
				if got := readKey(t, r.img, "photos", "inodes/victim"); got != "body of inodes/victim" {
					t.Errorf("inodes/victim reads %q", got)
				}
			},
		},
		{
			name: "xattr leaf block checksum",
			spot: func(t *testing.T, f *checkFixture, img string) []damage {
				// da3 blkinfo: forw, back, magic, pad, crc
				return one(damage{off: f.forkBlock(t, img, ino("photos/attrs/object"), true, 0) + 12, crc: true})
			},
			want:  []checkedStructure{object("photos/attrs/object", damageXattrs)},
			quiet: true,
			after: func(t *testing.T, f *checkFixture, r repaired) {
				nothingLost(t, f, r)
				if xs := xattrsOf(t, r.img, "photos/attrs/object"); len(xs) < 12 {
					t.Errorf("attrs/object keeps %d xattrs", len(xs))
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			runCheckCase(t, f, tc)
		})
	}
}

// sortedByIno orders inode structures as vol check lists them.
func sortedByIno(s ...checkedStructure) []checkedStructure {
	slices.SortFunc(s, func(a, b checkedStructure) int { return int(a.Ino) - int(b.Ino) })
	return s
}

// runCheckCase damages a copy of the fixture as tc says, checks what vol
// check says of it, repairs it and checks the outcome.
func runCheckCase(t *testing.T, f *checkFixture, tc checkCase) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	oracle.CopySparse(t, f.img, img)
	for _, d := range tc.spot(t, f, img) {
		data := []byte("damaged!")
		if d.crc {
			data = readAt(t, img, d.off, 4)
			for i := range data {
				data[i] = ^data[i]
			}
		}
		damageAt(t, img, d.off, data)
	}
	before := fileSHA(t, img)

	rep, status := checkJSON(t, img)
	if status != 1 {
		t.Fatalf("vol check: status %d", status)
	}
	if fileSHA(t, img) != before {
		t.Fatalf("vol check changed the volume file")
	}
	if rep.StoreError != "" {
		// AG btrees: an inode btree damaged in AG 2 and the free inode
		// btree in AG 3 stop the store's open (as a server's); the
		// engine alone checks, and an AG's place needs no store.
		t.Logf("the store could not open the volume: %s", rep.StoreError)
	}
	if len(rep.Sick) != len(tc.want) {
		t.Fatalf("sick: %+v\nwant %+v", rep.Sick, tc.want)
	}
	for i, s := range rep.Sick {
		want := tc.want[i]
		got := checkedStructure{Kind: s.Kind, Ino: s.Ino, AG: s.AG, Place: s.Place, Bucket: s.Bucket, Prefix: s.Prefix, Key: s.Key, Path: s.Path, Damage: s.Damage}
		if !equalChecked(got, want) {
			t.Errorf("sick structure %+v\nwant %+v", got, want)
		}
		if want.Kind == "quota" && (!slices.Contains(s.Buckets, "photos") || s.QuotaBlock == nil || *s.QuotaBlock != 0) {
			t.Errorf("quota structure %+v, want block 0 holding bucket photos", s)
		}
		if s.Repair != repairActions[want.Damage] || s.Structure == "" || s.Where == "" || s.Reason == "" {
			t.Errorf("sick structure %+v: repair %q", s, s.Repair)
		}
		if s.Kind == "inode" && len(s.Findings) == 0 && !tc.quiet {
			t.Errorf("no finding of xfs_repair -n names inode %d: %q", s.Ino, rep.Repair.Findings)
		}
		t.Logf("%s\n  repair: %s\n  xfs_repair -n: %q", s.Describe, s.Repair, s.Findings)
	}
	if wantStatus := map[bool]int{false: 1, true: 0}[tc.quiet]; !rep.Repair.Ran || rep.Repair.ExitStatus != wantStatus || len(rep.Repair.Findings) == 0 {
		t.Errorf("xfs_repair -n: %+v, want exit status %d and findings", rep.Repair, wantStatus)
	}

	// Repair as docs/operations.md says: until xfs_repair -n is clean,
	// which vol check runs; it finds nothing then.
	fixed := oracle.RepairFix(t, img)
	if after, status := checkJSON(t, img); status != 0 {
		t.Logf("after one xfs_repair: %q", after.Repair.Findings)
		fixed += oracle.RepairFix(t, img)
		if after, status := checkJSON(t, img); status != 0 {
			t.Fatalf("vol check after two runs of xfs_repair: status %d, %+v", status, after)
		}
	}
	out := repaired{img: img, pred: rep, qflags: qflags(t, img)}
	out.keys, out.usage = volumeKeys(t, img)
	out.qflagsOpened = qflags(t, img)
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	volMust(t, err)
	if lf, err := v.Names().LookupPath("lost+found", false); err == nil {
		out.lostFound, err = v.Names().ReadDir(lf)
		volMust(t, err)
	}
	volMust(t, v.Close())
	tc.after(t, f, out)
	if t.Failed() {
		t.Logf("xfs_repair said:\n%s", strings.Join(repairFindings(fixed), "\n"))
	}
}

// checkJSON runs vol check --json on img.
func checkJSON(t *testing.T, img string) (checkReport, int) {
	t.Helper()
	r := runCLI(t, "vol", "check", "--json", img)
	var rep checkReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("vol check: status %d, %v, stderr %s\n%s", r.code, err, r.stderr, r.stdout)
	}
	return rep, r.code
}

func readAt(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	volMust(t, err)
	defer f.Close()
	b := make([]byte, n)
	_, err = f.ReadAt(b, off)
	volMust(t, err)
	return b
}

func equalChecked(a, b checkedStructure) bool {
	sameAG := a.AG == nil && b.AG == nil || a.AG != nil && b.AG != nil && *a.AG == *b.AG
	return a.Kind == b.Kind && a.Ino == b.Ino && sameAG && a.Place == b.Place && a.Bucket == b.Bucket && a.Prefix == b.Prefix &&
		a.Key == b.Key && a.Path == b.Path && a.Damage == b.Damage
}

func fileSHA(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	volMust(t, err)
	return sha256.Sum256(b)
}

// TestVolCheckText: the text form of a damaged directory block names the
// prefix, the repair and xfs_repair -n's findings under their heading.
func TestVolCheckText(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair)
	img, dirIno := checkVolume(t)
	f := &checkFixture{}
	sb := oracle.DBSuperblock(t, img)
	fmt.Sscan(sb["blocksize"], &f.blockSize)
	fmt.Sscan(sb["agblocks"], &f.agBlocks)
	damageAt(t, img, f.forkBlock(t, img, dirIno, false, 0)+100, []byte("damaged!"))
	r := runCLI(t, "vol", "check", img)
	if r.code != 1 || !strings.Contains(r.stderr, "damage found") {
		t.Fatalf("status %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		`sick: the directory of prefix "2024/" in bucket "photos"`,
		"path:   /photos/2024",
		"repair: " + repairActions[damageDirBlock],
		fmt.Sprintf("xfs_repair -n: corrupt block 0 in directory inode %d", dirIno),
		"xfs_repair -n -f " + img + ": exit status 1",
		"would move to /lost+found; its findings:",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Phase ") || strings.Contains(r.stdout, "agno =") {
		t.Errorf("xfs_repair's banners in\n%s", r.stdout)
	}
}

// checkVolume makes a small volume: bucket photos with prefix 2024/ of
// several directory blocks, and an object of 256 KiB; it returns the
// prefix's inode.
func checkVolume(t *testing.T) (string, uint64) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	volMust(t, err)
	volMust(t, st.CreateBucket("photos"))
	for i := range 60 {
		key := fmt.Sprintf("2024/%s-%03d", checkLong, i)
		_, err := st.PutObject("photos", key, strings.NewReader(key), int64(len(key)), store.Meta{})
		volMust(t, err)
	}
	body := strings.Repeat("0123456789abcdef", 16<<10)
	_, err = st.PutObject("photos", "big", strings.NewReader(body), int64(len(body)), store.Meta{})
	volMust(t, err)
	ino, err := st.Volume().Names().LookupPath("photos/2024", false)
	volMust(t, err)
	volMust(t, st.Close())
	return img, uint64(ino)
}

func damageAt(t *testing.T, img string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	volMust(t, err)
	_, err = f.WriteAt(data, off)
	volMust(t, err)
	volMust(t, f.Close())
}

// TestVolCheckClean: a healthy volume: status 0, nothing listed,
// xfs_repair -n clean, the file unchanged; without xfs_repair the check
// says so and still passes.
func TestVolCheckClean(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img, _ := checkVolume(t)
	before := fileSHA(t, img)
	if out := okCLI(t, "vol", "check", img); !strings.Contains(out, "no damage found") || !strings.Contains(out, "exit status 0, no findings") {
		t.Fatalf("check of a healthy volume:\n%s", out)
	}
	var rep checkReport
	if err := json.Unmarshal([]byte(okCLI(t, "vol", "check", "--json", "--objects", img)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sick) != 0 || len(rep.Rotten) != 0 || !rep.Repair.Ran || rep.Repair.ExitStatus != 0 || len(rep.Repair.Findings) != 0 ||
		rep.Counts.Objects != 61 || rep.Counts.Inodes == 0 {
		t.Errorf("report: %+v", rep)
	}
	if fileSHA(t, img) != before {
		t.Errorf("vol check changed the volume file")
	}

	// While a writer (a server) has it open, it is refused before
	// anything reads it.
	st, err := store.Open(img)
	volMust(t, err)
	wantCLIFailure(t, runCLI(t, "vol", "check", img), exitCheckFailed, dev.ErrInUse.Error())
	volMust(t, st.Close())

	saved := findRepair
	defer func() { findRepair = saved }()
	findRepair = func() (string, error) { return "", os.ErrNotExist }
	out := okCLI(t, "vol", "check", img)
	if !strings.Contains(out, "xfs_repair -n: not run: xfs_repair is not installed") || !strings.Contains(out, "no damage found") {
		t.Errorf("check without xfs_repair:\n%s", out)
	}
}

// TestVolCheckObjects: bytes flipped in an object's data block are no
// metadata damage: vol check passes, and xfs_repair -n finds nothing;
// with --objects it lists the object rotten (status 1), and after
// xfs_repair the object is rotten still: xfs_repair left its bytes.
func TestVolCheckObjects(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair)
	img, _ := checkVolume(t)
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	volMust(t, err)
	big, err := v.Names().LookupPath("photos/big", false)
	volMust(t, err)
	volMust(t, v.Close())
	f := &checkFixture{}
	sb := oracle.DBSuperblock(t, img)
	fmt.Sscan(sb["blocksize"], &f.blockSize)
	fmt.Sscan(sb["agblocks"], &f.agBlocks)
	damageAt(t, img, f.forkBlock(t, img, uint64(big), false, 0)+100, []byte{0xff, 0x00, 0xff})

	if out := okCLI(t, "vol", "check", img); !strings.Contains(out, "no damage found") {
		t.Fatalf("metadata check of a volume with a rotten object:\n%s", out)
	}
	rotten := func(what string) {
		t.Helper()
		r := runCLI(t, "vol", "check", "--objects", "--json", img)
		var rep checkReport
		if r.code != 1 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
			t.Fatalf("%s: status %d, stderr %s\n%s", what, r.code, r.stderr, r.stdout)
		}
		if len(rep.Rotten) != 1 || rep.Rotten[0].Bucket != "photos" || rep.Rotten[0].Key != "big" || rep.Rotten[0].Repair != rottenAction ||
			len(rep.Sick) != 0 || rep.Repair.ExitStatus != 0 {
			t.Errorf("%s: %+v", what, rep)
		}
	}
	rotten("before xfs_repair")
	oracle.RepairFix(t, img)
	rotten("after xfs_repair")
}

// TestVolCheckDirtyLog: a volume whose log needs replaying is refused
// (status 2) with the command that replays it; after the replay it checks.
func TestVolCheckDirtyLog(t *testing.T) {
	dir := t.TempDir()
	img, crash := filepath.Join(dir, "vol.img"), filepath.Join(dir, "crash.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	volMust(t, err)
	_, err = v.Names().Mkdir(v.Root(), "photos", xfs.Attrs{Mode: 0o755})
	volMust(t, err)
	oracle.CopySparse(t, img, crash) // every commit is durable on return: a crash image
	volMust(t, v.Close())

	r := runCLI(t, "vol", "check", crash)
	wantCLIFailure(t, r, exitCheckFailed, "xfs3 vol replay "+crash)
	okCLI(t, "vol", "replay", crash)
	if out := okCLI(t, "vol", "check", crash); !strings.Contains(out, "no damage found") {
		t.Errorf("check after replay:\n%s", out)
	}
}

// TestVolCheckUsage: bad flags and arguments are status 2, help 0.
func TestVolCheckUsage(t *testing.T) {
	for _, args := range [][]string{{"--bogus", "x"}, {}, {"a", "b"}} {
		r := runCLI(t, append([]string{"vol", "check"}, args...)...)
		wantCLIFailure(t, r, exitCheckFailed, "vol check")
	}
	r := runCLI(t, "vol", "check", filepath.Join(t.TempDir(), "missing.xfs"))
	wantCLIFailure(t, r, exitCheckFailed, "no such file")
	for _, args := range [][]string{{"vol", "check", "-h"}, {"vol", "help", "check"}} {
		if out := okCLI(t, args...); out != checkUsage {
			t.Errorf("%q: %q", args, out)
		}
	}
}

// TestVolCheckFindings: xfs_repair's banners and progress go, findings
// stay, each once, and a progress line printed into one is cut out.
func TestVolCheckFindings(t *testing.T) {
	out := strings.Join([]string{
		"Cannot get host filesystem geometry.",
		"Phase 3 - for each AG...",
		"        - agno = 0",
		"Metadata CRC error detected at 0x1, xfs_dir3_data block 0x42b90/0x1000",
		"corrupt block 0 in directory inode 273221",
		"\twould junk block",
		"Project quota: bad CRC for id 0.         - agno = 1",
		"corrupt block 0 in directory inode 273221",
		"disconnected inode 2732210, would move to lost+found",
		"agf_freeblks 273221, counted 273220 in ag 0",
		"entry \"2024\" in dir ino 136 doesn't have a .. entry, will set it in ino 273221.",
		"No modify flag set, skipping phase 5",
		"",
	}, "\n")
	got := repairFindings(out)
	want := []string{"Metadata CRC error detected at 0x1, xfs_dir3_data block 0x42b90/0x1000", "corrupt block 0 in directory inode 273221",
		"would junk block", "Project quota: bad CRC for id 0.", "disconnected inode 2732210, would move to lost+found",
		"agf_freeblks 273221, counted 273220 in ag 0", "entry \"2024\" in dir ino 136 doesn't have a .. entry, will set it in ino 273221."}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q\nwant %q", got, want)
	}
	if n := naming(got, 273221); !slices.Equal(n, []string{"corrupt block 0 in directory inode 273221", want[6]}) {
		t.Errorf("findings naming inode 273221: %q", n)
	}
}
