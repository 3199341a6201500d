package attr

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestGolden reads every attribute of every file of the kernel-written
// golden images through Get, List and Check and compares with what the
// kernel showed.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"default", "b1k", "i1k"} {
		t.Run(v, func(t *testing.T) {
			img, snap := oracle.LoadGolden(t, v)
			checkSnapshot(t, img, snap)
		})
	}
}

// TestFullFixture does the same on a freshly built Full fixture (large
// node-form forks, 64 KiB remote values).
func TestFullFixture(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv(oracle.RequireEnv) != "1" {
		t.Skip("builds a kernel fixture")
	}
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolDB, oracle.ToolMount)
	img, snap := oracle.BuildFixture(t, t.TempDir(), oracle.Variants[0], oracle.Full)
	checkSnapshot(t, img, snap)
}

func checkSnapshot(t *testing.T, img string, snap oracle.Snapshot) {
	im := openImage(t, img)
	forms := map[Form]int{}
	for _, e := range snap {
		f, err := im.attrFork(format.Ino(e.Ino))
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		if err := Check(f); err != nil {
			t.Errorf("%s (inode %d): Check: %v", e.Path, e.Ino, err)
			continue
		}
		form, err := FormOf(f)
		if err != nil {
			t.Fatalf("%s: FormOf: %v", e.Path, err)
		}
		forms[form]++
		got := map[string]string{}
		err = List(f, func(ns uint8, name, value []byte) error {
			full := format.NamespaceName(ns) + "." + string(name)
			if _, dup := got[full]; dup {
				t.Errorf("%s: %s listed twice", e.Path, full)
			}
			got[full] = string(value)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: List: %v", e.Path, err)
		}
		if len(got) != len(e.Xattrs) {
			t.Errorf("%s: %d attributes listed, kernel shows %d", e.Path, len(got), len(e.Xattrs))
		}
		for full, want := range e.Xattrs {
			if got[full] != want {
				t.Errorf("%s: List gives %s = %d bytes, kernel %d bytes", e.Path, full, len(got[full]), len(want))
			}
			nsName, name, _ := strings.Cut(full, ".")
			ns := map[string]uint8{"user": User, "trusted": Trusted, "security": Secure}[nsName]
			v, err := Get(f, ns, []byte(name))
			if err != nil || !bytes.Equal(v, []byte(want)) {
				t.Errorf("%s: Get %s: %d bytes, %v; kernel %d bytes", e.Path, full, len(v), err, len(want))
			}
		}
		if _, err := Get(f, User, []byte("no-such-attribute")); !errors.Is(err, ErrNoData) {
			t.Errorf("%s: Get of a missing attribute: %v", e.Path, err)
		}
	}
	t.Logf("attribute forks by format: %v", forms)
	for _, want := range []Form{FormShort, FormLeaf, FormNode} {
		if forms[want] == 0 {
			t.Errorf("no %v-form fork in the image", want)
		}
	}
}
