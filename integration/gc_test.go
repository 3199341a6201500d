package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
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
		})
	}
}
