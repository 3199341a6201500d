package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestScrubStoppedVolume: xfs3 scrub finds nothing on a healthy volume
// (status 0), and after bits of one object's data block are flipped on
// the stopped volume it names exactly that object (status 1), in text
// and in JSON.
func TestScrubStoppedVolume(t *testing.T) {
	oracle.Require(t, oracle.ToolDB)
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	volMust(t, err)
	volMust(t, st.CreateBucket("photos"))
	body := strings.Repeat("0123456789abcdef", 16<<10) // 256 KiB: not kept in the create's transaction
	for _, k := range []string{"a.jpg", "b.jpg", "c.jpg"} {
		_, err := st.PutObject("photos", k, strings.NewReader(body), int64(len(body)), store.Meta{})
		volMust(t, err)
	}
	i, err := st.Volume().Names().LookupPath("photos/b.jpg", false) // a key is its path
	volMust(t, err)
	ino := uint64(i)
	volMust(t, st.Close())

	if out := okCLI(t, "scrub", img); !strings.Contains(out, "no damage found") {
		t.Fatalf("scrub of a healthy volume:\n%s", out)
	}

	// Flip bits in the first data block of b.jpg.
	var agblocks, ag, agbno, off, start, count, flag int64
	fmt.Sscan(oracle.DBSuperblock(t, img)["agblocks"], &agblocks)
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err == nil {
			break
		}
	}
	if count == 0 {
		t.Fatalf("xfs_db shows no data block of inode %d", ino)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	volMust(t, err)
	_, err = f.WriteAt([]byte{0xff, 0x00, 0xff}, (ag*agblocks+agbno)*4096+100)
	volMust(t, err)
	volMust(t, f.Close())

	r := runCLI(t, "scrub", "--json", img)
	if r.code != 1 {
		t.Fatalf("scrub of a rotten object: status %d, stderr %s", r.code, r.stderr)
	}
	var rep scrubReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(rep.Rotten) != 1 || rep.Rotten[0].Bucket != "photos" || rep.Rotten[0].Key != "b.jpg" || len(rep.Sick) != 0 || rep.Counts.Objects != 3 {
		t.Fatalf("scrub report: %+v", rep)
	}
	text := runCLI(t, "scrub", img)
	if text.code != 1 || !strings.Contains(text.stdout, `rotten: bucket "photos" key "b.jpg"`) {
		t.Fatalf("scrub text: status %d\n%s", text.code, text.stdout)
	}
}
