package oracle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// WriteGolden compresses the image file img with zstd at the best level
// and writes it to path (atomically, through a temporary file).
func WriteGolden(path string, img string) error {
	in, err := os.Open(img)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	w := bufio.NewWriterSize(out, 1<<20)
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		out.Close()
		return err
	}
	if _, err := io.Copy(enc, bufio.NewReaderSize(in, 1<<20)); err != nil {
		enc.Close()
		out.Close()
		return fmt.Errorf("compress %s: %w", img, err)
	}
	if err := enc.Close(); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// OpenGolden decompresses the zstd image at path into a new file under
// t.TempDir() and returns its path. Zero blocks are left as holes, so the
// copy takes little disk space. An image is decompressed once per process
// and its data kept in memory: tests that corrupt a fresh copy per case
// spent most of their time in zstd under the race detector.
func OpenGolden(t testing.TB, path string) (img string) {
	t.Helper()
	img = filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".zst"))
	sparse, err := decodedGolden(path)
	if err == nil {
		err = sparse.writeTo(img)
	}
	if err != nil {
		t.Fatalf("open golden image: %v", err)
	}
	return img
}

// sparseImage is an image's size and its blocks that are not all zero.
type sparseImage struct {
	size int64
	runs []dataRun
}

// dataRun is a stretch of adjacent non-zero blocks.
type dataRun struct {
	off  int64
	data []byte
}

var goldenCache struct {
	sync.Mutex
	images map[string]*sparseImage
}

// decodedGolden returns the decompressed image at path, decoding it on
// first use. Callers must not change the runs' bytes.
func decodedGolden(path string) (*sparseImage, error) {
	goldenCache.Lock()
	defer goldenCache.Unlock()
	if im, ok := goldenCache.images[path]; ok {
		return im, nil
	}
	im, err := decompressSparse(path)
	if err != nil {
		return nil, err
	}
	if goldenCache.images == nil {
		goldenCache.images = map[string]*sparseImage{}
	}
	goldenCache.images[path] = im
	return im, nil
}

func decompressSparse(src string) (*sparseImage, error) {
	in, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	dec, err := zstd.NewReader(bufio.NewReaderSize(in, 1<<20), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	const blk = 4096
	zero := make([]byte, blk)
	buf := make([]byte, 1<<20)
	im := &sparseImage{}
	for {
		n, rerr := io.ReadFull(dec, buf)
		for i := 0; i < n; i += blk {
			p := buf[i:min(i+blk, n)]
			if bytes.Equal(p, zero[:len(p)]) {
				continue
			}
			off := im.size + int64(i)
			if last := len(im.runs) - 1; last >= 0 && im.runs[last].off+int64(len(im.runs[last].data)) == off {
				im.runs[last].data = append(im.runs[last].data, p...)
			} else {
				im.runs = append(im.runs, dataRun{off, append([]byte(nil), p...)})
			}
		}
		im.size += int64(n)
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			return im, nil
		}
		if rerr != nil {
			return nil, fmt.Errorf("decompress %s: %w", src, rerr)
		}
	}
}

// writeTo creates the file dst holding the image, with holes for its
// zero blocks.
func (im *sparseImage) writeTo(dst string) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	for _, r := range im.runs {
		if _, err := out.WriteAt(r.data, r.off); err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Truncate(im.size); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// GoldenDir returns the directory holding the golden images, found from
// the location of this source file (so tests of any package can use it),
// or else by looking for the module root above the working directory.
func GoldenDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "testdata", "golden")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/xfs3/xfs3\n")) {
			return filepath.Join(d, "xfs", "oracle", "testdata", "golden"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("golden images not found: no xfs/oracle/testdata/golden near the source or working directory")
		}
	}
}

// GoldenPaths returns the paths of the compressed image and the snapshot
// of a variant's golden image.
func GoldenPaths(variant string) (img, snapshot string, err error) {
	dir, err := GoldenDir()
	if err != nil {
		return "", "", err
	}
	return filepath.Join(dir, variant+".img.zst"), filepath.Join(dir, variant+".json"), nil
}

// LoadGolden decompresses the golden image of variant (one of Variants'
// names) into t.TempDir() and returns it with the Snapshot the kernel saw
// when it was made. The image was built with the Small preset.
func LoadGolden(t testing.TB, variant string) (img string, snap Snapshot) {
	t.Helper()
	zst, js, err := GoldenPaths(variant)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = ReadSnapshot(js)
	if err != nil {
		t.Fatalf("golden snapshot of %s: %v (regenerate with go test ./xfs/oracle -run TestGenerateGolden -update)", variant, err)
	}
	return OpenGolden(t, zst), snap
}
