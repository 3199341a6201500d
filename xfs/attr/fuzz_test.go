package attr

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// FuzzShortForm reads arbitrary short-form attribute forks: Check, List
// and Get may refuse, never panic. (size is unused; the seeds once fed
// the read path's decoder in package format, which also took a di_size.)
func FuzzShortForm(f *testing.F) {
	f.Add([]byte{0, 14, 1, 0, 1, 1, 0, 'k', 'v'}, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, _ int64) {
		mem := fork.NewMem(testGeometry(4096, 512), 1<<10, len(b))
		mem.Fmt, mem.Data = format.FmtLocal, b
		_ = Check(mem)
		_ = List(mem, func(uint8, []byte, []byte) error { return nil })
		_, _ = Get(mem, User, []byte("k"))
	})
}

// FuzzBlocks feeds arbitrary bytes to the attribute block verifiers.
func FuzzBlocks(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < format.Da3NodeHdrSize {
			return
		}
		_ = treeOps.Verify(b, 0)
		_ = rmtOps.Verify(b, 0)
	})
}
