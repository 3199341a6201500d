package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The damage matrix is issue 48's fault injection through the real
// binary, one case per kind of metadata block: on a copy of one volume
// built once, one block of that kind is damaged while the server is
// stopped; the server then serves the rest, refuses the changes that
// need the damaged structure (500 XFS3NeedsRepair), changes nothing
// else, reports the structure (health endpoint, one warning line, the
// scrub), and xfs_repair brings the volume back to one the server serves
// healthy and the kernel mounts. A damaged dquot block makes the
// quota records it holds sick: the buckets of those projects refuse
// writes (their counts cannot be kept) and read on.

// Names in the matrix's volume. The keys are long so that few fit a
// directory block: nodeKeys of them make a node-form directory (more
// hash entries than one leaf block holds), leafKeys a leaf-form one.
const (
	dmHurt     = "hurt" // the bucket every damage is in
	dmFine     = "fine" // the other bucket
	dmNodeKeys = 2000
	dmLeafKeys = 100
)

var dmLong = strings.Repeat("k", 200)

func dmKey(prefix string, i int) string { return fmt.Sprintf("%s/%s-%04d", prefix, dmLong, i) }

// dmTemplate is the volume every case starts from, and what it holds.
type dmTemplate struct {
	img string
	// Geometry, from the superblock.
	blockSize, agBlocks, inodeSize int64
	agBlkLog, inoPBLog             uint
	// Inode numbers of the structures damaged.
	nodeDir, leafDir, attrObject, victim, quotaIno uint64
	// contents maps bucket → key → ETag, as listed before any damage.
	contents map[string]map[string]string
}

// buildDamageTemplate builds the matrix's volume through the binary:
// two buckets, in "hurt" a node-form prefix, a leaf-form prefix, an
// object whose xattrs fill a leaf block, two objects side by side in
// one inode cluster and a bucket quota (so that a dquot block holds its
// usage); "fine" has a few objects in the same shapes.
func buildDamageTemplate(t *testing.T) *dmTemplate {
	t.Helper()
	ctx := context.Background()
	s := startServer(t, "256M")
	c := s.client(t)
	// Project IDs go to buckets in order, and a quota file block holds
	// the records of 30 (4 KiB blocks): buckets made and deleted between
	// the two put hurt's record in a block of its own.
	for i, b := range []string{dmFine, "", dmHurt} {
		if b == "" {
			for j := range 30 {
				spacer := fmt.Sprintf("spacer-%02d-%d", j, i)
				if err := c.MakeBucket(ctx, spacer, minio.MakeBucketOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := c.RemoveBucket(ctx, spacer); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		code, body := s.do(t, "PUT", "/minio/admin/v3/set-bucket-quota?bucket="+b,
			[]byte(`{"quota":104857600,"size":0,"rate":0,"requests":0,"quotatype":"hard"}`), mcHeader, "")
		if code != 200 {
			t.Fatalf("set-bucket-quota %s: %d %s", b, code, body)
		}
	}
	type put struct {
		bucket, key string
		meta        map[string]string
	}
	var puts []put
	for i := range dmNodeKeys {
		puts = append(puts, put{bucket: dmHurt, key: dmKey("node", i)})
	}
	for i := range dmLeafKeys {
		puts = append(puts, put{bucket: dmHurt, key: dmKey("leaf", i)})
	}
	// Twelve 100-byte values beside the store's own xattrs are more than
	// the inode's attribute fork holds: they go to a leaf block.
	meta := map[string]string{}
	for i := range 12 {
		meta[fmt.Sprintf("attribute-%02d", i)] = strings.Repeat("m", 100)
	}
	puts = append(puts, put{bucket: dmHurt, key: "attrs/object", meta: meta}, put{bucket: dmHurt, key: "attrs/plain"},
		put{bucket: dmHurt, key: "top"})
	for i := range 20 {
		puts = append(puts, put{bucket: dmFine, key: dmKey("node", i)}, put{bucket: dmFine, key: dmKey("leaf", i)})
	}
	puts = append(puts, put{bucket: dmFine, key: "attrs/object", meta: meta}, put{bucket: dmFine, key: "top"})
	// Parallel PUTs build it in a couple of seconds.
	work := make(chan put)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				body := "body of " + p.bucket + "/" + p.key
				if _, err := c.PutObject(ctx, p.bucket, p.key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{UserMetadata: p.meta}); err != nil {
					t.Errorf("PUT %s/%s: %v", p.bucket, p.key, err)
				}
			}
		}()
	}
	for _, p := range puts {
		work <- p
	}
	close(work)
	wg.Wait()
	// The victim and its neighbour: made one after the other in their
	// own prefix, so that their inodes share a cluster.
	for _, k := range []string{"inodes/victim", "inodes/neighbour"} {
		if _, err := c.PutObject(ctx, dmHurt, k, strings.NewReader(k), int64(len(k)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	tpl := &dmTemplate{img: s.Volume, contents: map[string]map[string]string{}}
	for _, b := range []string{dmHurt, dmFine} {
		tpl.contents[b] = listETags(t, c, b)
	}
	s.stop(t)

	sb := oracle.DBSuperblock(t, s.Volume)
	for name, p := range map[string]*int64{"blocksize": &tpl.blockSize, "agblocks": &tpl.agBlocks, "inodesize": &tpl.inodeSize} {
		fmt.Sscan(sb[name], p)
	}
	fmt.Sscan(sb["agblklog"], &tpl.agBlkLog)
	fmt.Sscan(sb["inopblog"], &tpl.inoPBLog)
	fmt.Sscan(sb["pquotino"], &tpl.quotaIno)
	for path, p := range map[string]*uint64{"hurt/node": &tpl.nodeDir, "hurt/leaf": &tpl.leafDir,
		"hurt/attrs/object": &tpl.attrObject, "hurt/inodes/victim": &tpl.victim} {
		var st struct {
			Ino uint64 `json:"ino"`
		}
		if err := json.Unmarshal(runCLI(t, "vol", "stat", "--json", s.Volume, path), &st); err != nil {
			t.Fatal(err)
		}
		*p = st.Ino
	}
	// The shapes each case relies on.
	if f := oracle.DirFormat(t, s.Volume, tpl.nodeDir); f != "node" {
		t.Fatalf("hurt/node is a %s directory, want node", f)
	}
	if f := oracle.DirFormat(t, s.Volume, tpl.leafDir); f != "leaf" {
		t.Fatalf("hurt/leaf is a %s directory, want leaf", f)
	}
	if f := oracle.AttrFormat(t, s.Volume, tpl.attrObject); f != "leaf" {
		t.Fatalf("hurt/attrs/object has %s xattrs, want a leaf block", f)
	}
	oracle.Repair(t, s.Volume)
	return tpl
}

// listETags lists a bucket: key → ETag.
func listETags(t *testing.T, c *minio.Client, bucket string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", bucket, o.Err)
		}
		out[o.Key] = o.ETag
	}
	return out
}

// agOf is the AG of inode ino.
func (tpl *dmTemplate) agOf(ino uint64) int64 { return int64(ino >> (tpl.agBlkLog + tpl.inoPBLog)) }

// fsbOffset is the byte offset of block agbno of AG ag.
func (tpl *dmTemplate) fsbOffset(ag, agbno int64) int64 {
	return (ag*tpl.agBlocks + agbno) * tpl.blockSize
}

// forkBlock finds, with xfs_db's bmap, the byte offset of the first
// block of inode ino's data fork (attr: its attribute fork) whose file
// block pick accepts.
func (tpl *dmTemplate) forkBlock(t *testing.T, ino uint64, attr bool, pick func(off int64) bool) int64 {
	t.Helper()
	cmd, fork := "bmap", "data"
	if attr {
		cmd, fork = "bmap -a", "attr"
	}
	for _, line := range strings.Split(oracle.DB(t, tpl.img, fmt.Sprintf("inode %d", ino), cmd), "\n") {
		var off, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, fork+" offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err != nil {
			continue
		}
		for i := range count {
			if pick(off + i) {
				return tpl.fsbOffset(ag, agbno+i)
			}
		}
	}
	t.Fatalf("inode %d: no %s fork block fits", ino, fork)
	return 0
}

// dirLeafOffset is the file block of a directory's leaf (or node root)
// block: 32 GiB.
func (tpl *dmTemplate) dirLeafOffset() int64 { return (32 << 30) / tpl.blockSize }

// inodeOffset is the byte offset of inode ino in its cluster.
func (tpl *dmTemplate) inodeOffset(ino uint64) int64 {
	agino := int64(ino & (1<<(tpl.agBlkLog+tpl.inoPBLog) - 1))
	return tpl.fsbOffset(tpl.agOf(ino), agino>>tpl.inoPBLog) + (agino&(1<<tpl.inoPBLog-1))*tpl.inodeSize
}

// agHeaderOffset is the byte offset of sector n of AG ag (1: AGF, 2: AGI).
func (tpl *dmTemplate) agHeaderOffset(ag int64, n int64) int64 { return tpl.fsbOffset(ag, 0) + n*512 }

// btreeRoot is the byte offset of the root block of an AG btree, read by
// xfs_db from the AG header (hdr "agf"/"agi", field "bnoroot"/"root"…).
func (tpl *dmTemplate) btreeRoot(t *testing.T, hdr string, ag int64, field string) int64 {
	t.Helper()
	v := oracle.ParseFields(oracle.DB(t, tpl.img, fmt.Sprintf("%s %d", hdr, ag), "print "+field))[field]
	var agbno int64
	if _, err := fmt.Sscan(v, &agbno); err != nil {
		t.Fatalf("%s %d %s: %q", hdr, ag, field, v)
	}
	return tpl.fsbOffset(ag, agbno)
}

// copySparse copies the volume file src to dst, leaving zero runs holes.
func copySparse(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := out.Truncate(st.Size()); err != nil {
		t.Fatal(err)
	}
	buf, zero := make([]byte, 1<<20), make([]byte, 1<<20)
	for off := int64(0); off < st.Size(); off += int64(len(buf)) {
		n, err := in.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[:n], zero[:n]) {
			if _, err := out.WriteAt(buf[:n], off); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// dmSpot is where a case damages the volume and what must come out sick.
type dmSpot struct {
	// The structure's bytes: the block (sector, inode) that is damaged,
	// which the server must not write while it is sick.
	off, size int64
	kind      string // "inode", "ag" or "quota"
	ino       uint64
	ag        int64
	qblock    uint64 // of a quota file block
	place     string // store.Place*
	prefix    string // of a directory, or an object's key
}

// dmEnv is what a case's requests work with.
type dmEnv struct {
	t   *testing.T
	ctx context.Context
	c   *minio.Client
	tpl *dmTemplate
}

// dmChange is a change that needs the damaged structure.
type dmChange struct {
	name string
	do   func(e *dmEnv) error
}

// dmCase is one kind of metadata block.
type dmCase struct {
	name string
	// spot locates the block on the template.
	spot func(t *testing.T, tpl *dmTemplate) dmSpot
	// meet is a read that needs the damaged block, when there is one:
	// the server notices the damage when a request meets it. Structures
	// nothing reads on the way (free-space and inode btrees, dquots, an
	// AG's other headers) are found by the scrub.
	meet func(e *dmEnv) error
	// refused are changes that must be refused with XFS3NeedsRepair.
	refused []dmChange
	// unreadable is a top-level prefix of hurt whose listing may meet the
	// damage: it is not compared.
	unreadable string
	// readable are keys of hurt beside the damage that still read.
	readable []string
	// after is a change that works again once xfs_repair mended it.
	after dmChange
}

func putChange(bucket, key string) dmChange {
	return dmChange{"PUT " + bucket + "/" + key, func(e *dmEnv) error {
		_, err := e.c.PutObject(e.ctx, bucket, key, strings.NewReader("new"), 3, minio.PutObjectOptions{})
		return err
	}}
}

func deleteChange(bucket, key string) dmChange {
	return dmChange{"DELETE " + bucket + "/" + short(key), func(e *dmEnv) error {
		return e.c.RemoveObject(e.ctx, bucket, key, minio.RemoveObjectOptions{})
	}}
}

func taggingChange(bucket, key string) dmChange {
	return dmChange{"PUT tagging of " + bucket + "/" + key, func(e *dmEnv) error {
		tg, err := tags.NewTags(map[string]string{"damaged": "yes"}, true)
		if err != nil {
			return err
		}
		return e.c.PutObjectTagging(e.ctx, bucket, key, tg, minio.PutObjectTaggingOptions{})
	}}
}

func metadataChange(bucket, key string) dmChange {
	return dmChange{"replace the metadata of " + bucket + "/" + key, func(e *dmEnv) error {
		_, err := e.c.CopyObject(e.ctx,
			minio.CopyDestOptions{Bucket: bucket, Object: key, ReplaceMetadata: true, UserMetadata: map[string]string{"new": "meta"}},
			minio.CopySrcOptions{Bucket: bucket, Object: key})
		return err
	}}
}

func getRead(bucket, key string) func(e *dmEnv) error {
	return func(e *dmEnv) error {
		o, err := e.c.GetObject(e.ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		_, err = io.ReadAll(o)
		return err
	}
}

func listRead(bucket, prefix string) func(e *dmEnv) error {
	return func(e *dmEnv) error {
		for o := range e.c.ListObjects(e.ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				return o.Err
			}
		}
		return nil
	}
}

func short(key string) string { return strings.Replace(key, dmLong, "…", 1) }

func TestDamageMatrix(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	start := time.Now()
	tpl := buildDamageTemplate(t)
	t.Logf("template built in %v", time.Since(start).Round(time.Millisecond))
	// The AG cases damage the AG of the node-form prefix: its objects'
	// inodes and blocks are there.
	nodeAG := func(tpl *dmTemplate) int64 { return tpl.agOf(tpl.nodeDir) }
	cases := []dmCase{
		{
			name: "directory data block",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				off := tpl.forkBlock(t, tpl.leafDir, false, func(off int64) bool { return off == 0 })
				return dmSpot{off: off, size: tpl.blockSize, kind: "inode", ino: tpl.leafDir, place: "prefix", prefix: "leaf/"}
			},
			meet:       listRead(dmHurt, "leaf/"),
			refused:    []dmChange{putChange(dmHurt, "leaf/new"), deleteChange(dmHurt, dmKey("leaf", 7))},
			unreadable: "leaf/",
			after:      putChange(dmHurt, "leaf/after-repair"),
		},
		{
			name: "directory leaf block",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				leaf := tpl.dirLeafOffset()
				off := tpl.forkBlock(t, tpl.leafDir, false, func(off int64) bool { return off == leaf })
				return dmSpot{off: off, size: tpl.blockSize, kind: "inode", ino: tpl.leafDir, place: "prefix", prefix: "leaf/"}
			},
			// A lookup hashes the name into the leaf block.
			meet:       getRead(dmHurt, dmKey("leaf", 3)),
			refused:    []dmChange{putChange(dmHurt, "leaf/new"), deleteChange(dmHurt, dmKey("leaf", 7))},
			unreadable: "leaf/",
			after:      putChange(dmHurt, "leaf/after-repair"),
		},
		{
			name: "directory node block",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				// In a node-form directory the first block at the leaf
				// offset is the root of the hash btree.
				node := tpl.dirLeafOffset()
				off := tpl.forkBlock(t, tpl.nodeDir, false, func(off int64) bool { return off == node })
				return dmSpot{off: off, size: tpl.blockSize, kind: "inode", ino: tpl.nodeDir, place: "prefix", prefix: "node/"}
			},
			meet:       getRead(dmHurt, dmKey("node", 3)),
			refused:    []dmChange{putChange(dmHurt, "node/new"), deleteChange(dmHurt, dmKey("node", 7))},
			unreadable: "node/",
			after:      putChange(dmHurt, "node/after-repair"),
		},
		{
			name: "inode in a cluster",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				return dmSpot{off: tpl.inodeOffset(tpl.victim), size: tpl.inodeSize, kind: "inode", ino: tpl.victim, place: "object", prefix: "inodes/victim"}
			},
			meet: getRead(dmHurt, "inodes/victim"),
			refused: []dmChange{taggingChange(dmHurt, "inodes/victim"), metadataChange(dmHurt, "inodes/victim"),
				putChange(dmHurt, "inodes/victim"), deleteChange(dmHurt, "inodes/victim")},
			unreadable: "inodes/",
			// Its neighbour in the same inode cluster has a CRC of its own.
			readable: []string{"inodes/neighbour"},
			after:    putChange(dmHurt, "inodes/after-repair"),
		},
		{
			name: "attr leaf block",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				off := tpl.forkBlock(t, tpl.attrObject, true, func(off int64) bool { return off == 0 })
				return dmSpot{off: off, size: tpl.blockSize, kind: "inode", ino: tpl.attrObject, place: "object", prefix: "attrs/object"}
			},
			meet:       getRead(dmHurt, "attrs/object"),
			refused:    []dmChange{taggingChange(dmHurt, "attrs/object"), metadataChange(dmHurt, "attrs/object"), putChange(dmHurt, "attrs/object"), deleteChange(dmHurt, "attrs/object")},
			unreadable: "attrs/",
			after:      putChange(dmHurt, "attrs/after-repair"),
		},
		{
			name: "AGF",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				ag := nodeAG(tpl)
				return dmSpot{off: tpl.agHeaderOffset(ag, 1), size: 512, kind: "ag", ag: ag, place: "volume"}
			},
			refused: []dmChange{deleteChange(dmHurt, dmKey("node", 7))},
			after:   deleteChange(dmHurt, dmKey("node", 7)),
		},
		{
			name: "AGI",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				ag := nodeAG(tpl)
				return dmSpot{off: tpl.agHeaderOffset(ag, 2), size: 512, kind: "ag", ag: ag, place: "volume"}
			},
			refused: []dmChange{deleteChange(dmHurt, dmKey("node", 7))},
			after:   deleteChange(dmHurt, dmKey("node", 7)),
		},
		{
			name: "free-space btree root",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				ag := nodeAG(tpl)
				return dmSpot{off: tpl.btreeRoot(t, "agf", ag, "bnoroot"), size: tpl.blockSize, kind: "ag", ag: ag, place: "volume"}
			},
			refused: []dmChange{deleteChange(dmHurt, dmKey("node", 7))},
			after:   deleteChange(dmHurt, dmKey("node", 7)),
		},
		{
			name: "inode btree root",
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				ag := nodeAG(tpl)
				return dmSpot{off: tpl.btreeRoot(t, "agi", ag, "root"), size: tpl.blockSize, kind: "ag", ag: ag, place: "volume"}
			},
			refused: []dmChange{deleteChange(dmHurt, dmKey("node", 7))},
			after:   deleteChange(dmHurt, dmKey("node", 7)),
		},
		{
			name: "dquot block",
			// The block of hurt's record, not of fine's or project 0's.
			spot: func(t *testing.T, tpl *dmTemplate) dmSpot {
				off := tpl.forkBlock(t, tpl.quotaIno, false, func(off int64) bool { return off == 1 })
				return dmSpot{off: off, size: tpl.blockSize, kind: "quota", ino: tpl.quotaIno, qblock: 1, place: "quota"}
			},
			refused: []dmChange{putChange(dmHurt, "top"), putChange(dmHurt, "node/new")},
			after:   putChange(dmHurt, "node/after-repair"),
		},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			caseStart := time.Now()
			runDamageCase(t, tpl, tc)
			t.Logf("%s: %v", tc.name, time.Since(caseStart).Round(time.Millisecond))
		})
	}
}

// runDamageCase damages a copy of the template as tc says and checks
// what the server and xfs_repair make of it.
func runDamageCase(t *testing.T, tpl *dmTemplate, tc dmCase) {
	img := filepath.Join(t.TempDir(), "data", "volume.xfs")
	copySparse(t, tpl.img, img)
	caseTpl := *tpl
	caseTpl.img = img
	spot := tc.spot(t, &caseTpl)
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Past the block's header (magic, CRC, owner): its CRC no longer
	// matches; in an AG header sector or an inode, within its CRC'd part.
	if _, err := f.WriteAt([]byte("damaged!"), spot.off+min(100, spot.size-16)); err != nil {
		t.Fatal(err)
	}
	damaged := make([]byte, spot.size)
	if _, err := f.ReadAt(damaged, spot.off); err != nil {
		t.Fatal(err)
	}
	f.Close()

	serveDamaged(t, tpl, tc, spot, img)
	// The server did not write the sick structure.
	now := make([]byte, spot.size)
	if f, err := os.Open(img); err != nil {
		t.Fatal(err)
	} else {
		f.ReadAt(now, spot.off)
		f.Close()
	}
	if !bytes.Equal(now, damaged) {
		t.Errorf("the server wrote the damaged block while it was sick")
	}
	repairDamaged(t, tpl, tc, img)
}

// serveDamaged serves the damaged volume at img and checks what the
// server makes of the damage at spot.
func serveDamaged(t *testing.T, tpl *dmTemplate, tc dmCase, spot dmSpot, img string) {
	ctx := context.Background()
	s := startServerOn(t, img, "256M")
	c, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := &dmEnv{t: t, ctx: ctx, c: c, tpl: tpl}
	adm := &admin.Client{Endpoint: s.URL, AccessKey: accessKey, SecretKey: secretKey, HTTP: rawClient}
	health := func() admin.Health {
		t.Helper()
		h, err := adm.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	needsRepair := func(what string, err error) {
		t.Helper()
		r := minio.ToErrorResponse(err)
		if r.StatusCode != 500 || r.Code != "XFS3NeedsRepair" {
			t.Errorf("%s: %v (status %d, code %q), want 500 XFS3NeedsRepair", what, err, r.StatusCode, r.Code)
		} else if spot.kind != "ag" && spot.place != "system" && !strings.Contains(r.Message, `"`+dmHurt+`"`) {
			t.Errorf("%s: %q does not name bucket %s", what, r.Message, dmHurt)
		}
	}

	atOpen := len(health().Sick)
	if tc.meet != nil {
		needsRepair("the read that meets the damage", tc.meet(e))
	}
	noticed := len(health().Sick)
	// The scrub finds what nobody read, and lists what is sick already.
	if _, err := adm.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	var st admin.ScrubStatus
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err = adm.ScrubStatus(ctx); err != nil {
			t.Fatal(err)
		}
		if st.Passes > 0 || time.Now().After(deadline) {
			break
		}
	}
	if st.Last == nil || st.Last.Counts.SickStructures != 1 || st.Last.Error != "" {
		t.Errorf("scrub: %+v, want a pass that finds one sick structure", st.Last)
	}
	t.Logf("sick structures: %d at start, %d once a read met the damage; the scrub counts %+v", atOpen, noticed, st.Last)

	for _, ch := range tc.refused {
		for range 2 { // refused again, not just the first time
			needsRepair(ch.name, ch.do(e))
		}
	}

	// Reads elsewhere: the other bucket whole, this one but the damaged
	// prefix; nothing changed in either.
	for _, b := range []string{dmFine, dmHurt} {
		skip := ""
		if b == dmHurt {
			skip = tc.unreadable
		}
		got := map[string]string{}
		for o := range c.ListObjects(ctx, b, minio.ListObjectsOptions{Recursive: true, WithMetadata: false}) {
			if o.Err != nil {
				if skip == "" {
					t.Errorf("listing %s: %v", b, o.Err)
				}
				break
			}
			got[o.Key] = o.ETag
		}
		if skip != "" { // list around the damaged prefix instead
			got = map[string]string{}
			for _, p := range topPrefixes(tpl.contents[b]) {
				if p == skip {
					continue
				}
				for o := range c.ListObjects(ctx, b, minio.ListObjectsOptions{Prefix: p, Recursive: true}) {
					if o.Err != nil {
						t.Errorf("listing %s/%s: %v", b, p, o.Err)
						break
					}
					got[o.Key] = o.ETag
				}
			}
		}
		want := map[string]string{}
		for k, v := range tpl.contents[b] {
			if skip == "" || !strings.HasPrefix(k, skip) {
				want[k] = v
			}
		}
		if d := diffETags(want, got); d != "" {
			t.Errorf("bucket %s changed: %s", b, d)
		}
	}
	for _, k := range []string{"top", dmKey("node", 11), dmKey("leaf", 11), "attrs/object"} {
		if err := getRead(dmFine, k)(e); err != nil {
			t.Errorf("GET %s/%s: %v", dmFine, short(k), err)
		}
	}
	for _, k := range append([]string{"top", "attrs/plain"}, tc.readable...) {
		if err := getRead(dmHurt, k)(e); err != nil {
			t.Errorf("GET %s/%s: %v", dmHurt, k, err)
		}
	}
	if _, err := c.PutObject(ctx, dmFine, "written-while-sick", strings.NewReader("new"), 3, minio.PutObjectOptions{}); err != nil {
		t.Errorf("PUT into the other bucket: %v", err)
	}

	// Reported: one sick structure, where it lies; the ready probe says
	// degraded.
	h := health()
	if h.State != "degraded" || len(h.Sick) != 1 {
		t.Errorf("health: %+v, want the one sick structure", h)
	} else {
		x := h.Sick[0]
		switch {
		case x.Kind != spot.kind, spot.kind != "ag" && x.Ino != spot.ino, spot.kind == "ag" && (x.AG == nil || int64(*x.AG) != spot.ag):
			t.Errorf("sick %+v, want %s %d / AG %d", x, spot.kind, spot.ino, spot.ag)
		case spot.kind == "quota" && (x.QuotaBlock == nil || *x.QuotaBlock != spot.qblock || len(x.Buckets) != 1 || x.Buckets[0] != dmHurt):
			t.Errorf("sick %+v, want quota file block %d holding bucket %s", x, spot.qblock, dmHurt)
		case x.Place != spot.place, spot.kind == "inode" && spot.place != "system" && (x.Bucket != dmHurt || x.Prefix != spot.prefix):
			t.Errorf("sick %+v, want place %s bucket %s prefix %q", x, spot.place, dmHurt, spot.prefix)
		case x.Structure == "" || x.Reason == "" || x.Since.IsZero():
			t.Errorf("sick %+v says nothing of the damage", x)
		}
		t.Logf("reported: %+v", x)
	}
	resp, err := rawClient.Get(s.URL + "/minio/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Xfs3-Health") != "degraded" {
		t.Errorf("ready: %d, X-Xfs3-Health %q; want 200 and degraded", resp.StatusCode, resp.Header.Get("X-Xfs3-Health"))
	}
	s.stop(t)
	var warnings []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, "marked sick") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 {
		t.Errorf("want one warning line, got %d:\n%s", len(warnings), strings.Join(warnings, "\n"))
	} else {
		t.Logf("warning: %s", warnings[0])
	}
}

// repairDamaged is the repair path of docs/operations.md: xfs_repair
// sees the damage and mends it; the server then serves healthy, the
// change to the once damaged structure works, and the kernel mounts it.
func repairDamaged(t *testing.T, tpl *dmTemplate, tc dmCase, img string) {
	ctx := context.Background()
	out, err := oracle.RepairOutput(img)
	if err == nil {
		t.Errorf("xfs_repair -n found nothing wrong:\n%s", out)
	}
	fixed := oracle.RepairFix(t, img)
	if out, err := oracle.RepairOutput(img); err != nil {
		// xfs_repair rebuilding a directory whose first block (with "."
		// and "..") it junked sets the directory's link count to 1, and
		// only its next run to 2; the docs say to run it until -n is
		// clean.
		t.Logf("xfs_repair -n after one xfs_repair still finds:\n%s\nxfs_repair said:\n%s", repairFindings(out), fixed)
		fixed = oracle.RepairFix(t, img)
		if out, err := oracle.RepairOutput(img); err != nil {
			t.Fatalf("xfs_repair -n after two runs of xfs_repair: %v\n%s\nxfs_repair said:\n%s", err, out, fixed)
		}
	}
	s := startServerOn(t, img, "256M")
	c := s.client(t)
	e := &dmEnv{t: t, ctx: ctx, c: c, tpl: tpl}
	adm := &admin.Client{Endpoint: s.URL, AccessKey: accessKey, SecretKey: secretKey, HTTP: rawClient}
	health := func() admin.Health {
		t.Helper()
		h, err := adm.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	const written = 1 // the PUT into fine while it was sick
	if h := health(); h.State != "ok" || len(h.Sick) != 0 {
		t.Errorf("health after xfs_repair: %+v", h)
	}
	if got := listETags(t, c, dmFine); len(got) != len(tpl.contents[dmFine])+written {
		t.Errorf("bucket %s after xfs_repair: %d objects, want %d", dmFine, len(got), len(tpl.contents[dmFine])+written)
	}
	if err := tc.after.do(e); err != nil {
		t.Errorf("after xfs_repair, %s: %v", tc.after.name, err)
	}
	s.stop(t)
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	if got, err := os.ReadFile(filepath.Join(mnt, dmFine, "top")); err != nil || string(got) != "body of fine/top" {
		t.Errorf("kernel read of %s/top: %q, %v", dmFine, got, err)
	}
}

// topPrefixes are the first key components of keys ("a/" or a key).
func topPrefixes(keys map[string]string) []string {
	seen := map[string]bool{}
	for k := range keys {
		if i := strings.IndexByte(k, '/'); i >= 0 {
			k = k[:i+1]
		}
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// diffETags says how got differs from want, or "".
func diffETags(want, got map[string]string) string {
	var d []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			d = append(d, "missing "+short(k))
		} else if g != v {
			d = append(d, "changed "+short(k))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "new "+short(k))
		}
	}
	sort.Strings(d)
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("… (%d in all)", len(d)))
	}
	return strings.Join(d, ", ")
}

// repairFindings is xfs_repair -n's output without its progress lines.
func repairFindings(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "Phase ") || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "Cannot get host") ||
			strings.HasPrefix(l, "Repair may fail") || strings.HasPrefix(l, "the image and the host") || strings.HasPrefix(l, "No modify flag") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
