package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// TestDeleteFreesSpaceThroughBinary: in every --gc-mode, objects deleted
// through the real server are freed (the admin gc counters say so, after
// a flush that a statfs-like report triggers), the counters appear in the
// shutdown log, and the volume stays clean for the kernel.
func TestDeleteFreesSpaceThroughBinary(t *testing.T) {
	for _, mode := range []string{"percpu", "sync", "sweep"} {
		t.Run(mode, func(t *testing.T) {
			s := startServer(t, "1G", "--gc-mode", mode)
			c := s.client(t)
			ctx := t.Context()
			if err := c.MakeBucket(ctx, "gcb", minio.MakeBucketOptions{}); err != nil {
				t.Fatal(err)
			}
			const n = 40
			for i := range n {
				body := bytes.Repeat([]byte{byte(i)}, 100<<10)
				mustPut(t, ctx, c, "gcb", fmt.Sprintf("o/%d", i), body, minio.PutObjectOptions{})
			}
			for i := range n {
				if err := c.RemoveObject(ctx, "gcb", fmt.Sprintf("o/%d", i), minio.RemoveObjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			code, body := s.do(t, "GET", "/minio/admin/v3/xfs3/gc", nil, nil, "")
			var st struct {
				Mode        string `json:"mode"`
				Queued      uint64 `json:"queued"`
				Inactivated uint64 `json:"inactivated"`
				Errors      uint64 `json:"errors"`
			}
			if err := json.Unmarshal(body, &st); err != nil || code != 200 || st.Mode != mode || st.Queued < n || st.Errors != 0 {
				t.Fatalf("gc stats: %d %s", code, body)
			}
			view := s.apiView(t)
			s.stop(t)
			if !strings.Contains(s.logs.String(), `"message":"inode gc at shutdown"`) {
				t.Errorf("no gc counters in the shutdown log")
			}
			s.checkKernelView(t, view)
			checkLogFilled(t, s.Volume)
		})
	}
}

// checkLogFilled: the server's first open filled the log's region of its
// fresh volume file, as docs/operations.md says (no hole left in it).
func checkLogFilled(t *testing.T, path string) {
	t.Helper()
	v, err := xfs.Open(path, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	sb, g := v.Superblock(), v.Geometry()
	v.Close()
	off := format.DaddrToByte(g.FsbToDaddr(sb.LogStart))
	end := off + int64(sb.LogBlocks)<<g.BlockLog
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if hole, err := f.Seek(off, unix.SEEK_HOLE); err != nil || hole < end {
		t.Errorf("the volume's log [%d, %d) still has a hole at %d (%v)", off, end, hole, err)
	}
}
