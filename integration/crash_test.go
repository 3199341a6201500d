package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// crashBody is the content PUT under key: derived from the key, so a
// survivor's bytes can be checked without remembering them.
func crashBody(key string) []byte {
	seed := sha256.Sum256([]byte(key))
	rng := rand.New(rand.NewSource(int64(seed[0]) | int64(seed[1])<<8 | int64(seed[2])<<16))
	b := make([]byte, 1+rng.Intn(300<<10))
	rng.Read(b)
	return b
}

// TestKillUnderLoad SIGKILLs the server while clients PUT, overwrite and
// DELETE, then recovers two copies of the volume: one by the kernel (a
// read-write mount replays our log) and one by our engine (restarting the
// server). In both, every acknowledged PUT is there with its bytes and
// metadata, every acknowledged DELETE is gone, an unacknowledged PUT is
// either absent or whole, and xfs_repair -n is clean.
func TestKillUnderLoad(t *testing.T) { killUnderLoad(t, "on-ack") }

// TestKillUnderLoadWithin1s is TestKillUnderLoad with --durability
// within-1s: acknowledged changes of the last second may be lost, so the
// checks are that the log the kill left replays in the kernel and in our
// engine, xfs_repair -n is clean, every object there is whole, and the
// kernel and the server show the same objects. The server then leaves its
// log writes to background pushes, which the kill cuts mid-way.
func TestKillUnderLoadWithin1s(t *testing.T) { killUnderLoad(t, "within-1s") }

func killUnderLoad(t *testing.T, durability string) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	s := startServer(t, "1G", "--durability", durability)
	c := s.client(t)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "crash", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	acked := map[string]bool{}    // key -> present after its last acknowledged operation
	inFlight := map[string]bool{} // keys whose last operation got no answer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d/k%03d", w, rng.Intn(60))
				mu.Lock()
				inFlight[key] = true
				mu.Unlock()
				var err error
				del := rng.Intn(5) == 0
				if del {
					err = c.RemoveObject(ctx, "crash", key, minio.RemoveObjectOptions{})
				} else {
					body := crashBody(key)
					_, err = c.PutObject(ctx, "crash", key, bytes.NewReader(body), int64(len(body)),
						minio.PutObjectOptions{UserMetadata: map[string]string{"Origin": key}, DisableMultipart: true})
				}
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				delete(inFlight, key)
				acked[key] = !del
				mu.Unlock()
			}
		}(w)
	}
	time.Sleep(2 * time.Second)
	s.cmd.Process.Kill()
	<-s.done
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(acked) < 20 {
		t.Fatalf("only %d keys acknowledged before the kill", len(acked))
	}

	// The kernel's recovery, on a copy.
	kernelCopy := filepath.Join(t.TempDir(), "kernel.xfs")
	oracle.CopySparse(t, s.Volume, kernelCopy)
	if out, err := oracle.RepairOutput(kernelCopy); err == nil || !strings.Contains(out, "log") {
		t.Fatalf("after SIGKILL the log should need replay; xfs_repair -n says (%v):\n%s", err, out)
	}
	// Our log, as the server left it, is XFS's format to xfs_logprint.
	out, err := exec.Command("xfs_logprint", "-t", kernelCopy).CombinedOutput()
	if err != nil {
		t.Fatalf("xfs_logprint: %v\n%s", err, out)
	}
	if m := oracle.LogprintComplaint(string(out)); m != "" {
		t.Fatalf("xfs_logprint complains (%q) about the log SIGKILL left:\n%.4000s", m, out)
	}
	mnt := oracle.Mount(t, kernelCopy, false) // replays the log
	oracle.Unmount(t, mnt)
	oracle.Repair(t, kernelCopy)
	mnt = oracle.Mount(t, kernelCopy, true)
	checkSurvivors(t, "kernel recovery", durability, acked, inFlight, func(key string) ([]byte, string, error) {
		p := filepath.Join(mnt, "crash", filepath.FromSlash(key))
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", err
		}
		buf := make([]byte, 4096)
		n, err := syscall.Getxattr(p, "user.meta.origin", buf)
		if err != nil {
			return b, "", nil
		}
		return b, string(buf[:n]), nil
	})
	oracle.Unmount(t, mnt)

	// Our engine's recovery: the server reopens the volume.
	s2 := startServerOn(t, s.Volume, "1G")
	c2 := s2.client(t)
	checkSurvivors(t, "engine recovery", durability, acked, inFlight, func(key string) ([]byte, string, error) {
		o, err := c2.GetObject(ctx, "crash", key, minio.GetObjectOptions{})
		if err != nil {
			return nil, "", err
		}
		defer o.Close()
		b, err := io.ReadAll(o)
		if err != nil {
			return nil, "", err
		}
		st, _ := o.Stat()
		return b, st.UserMetadata["Origin"], nil
	})
	view := s2.apiView(t)
	s2.checkKernelView(t, view)
}

// checkSurvivors applies TestKillUnderLoad's rules through read, which
// returns an object's bytes and its Origin metadata. Under within-1s an
// acknowledged change may be lost, but whatever is there must be whole.
func checkSurvivors(t *testing.T, who, durability string, acked, inFlight map[string]bool, read func(string) ([]byte, string, error)) {
	t.Helper()
	present := 0
	for key, want := range acked {
		if inFlight[key] {
			continue
		}
		b, origin, err := read(key)
		switch {
		case durability != "on-ack":
			if err == nil && (!bytes.Equal(b, crashBody(key)) || origin != key) {
				t.Errorf("%s: %s has %d bytes and origin %q, not what a PUT wrote", who, key, len(b), origin)
			}
			if err == nil {
				present++
			}
		case want && err != nil:
			t.Errorf("%s: acknowledged PUT of %s lost: %v", who, key, err)
		case want && (!bytes.Equal(b, crashBody(key)) || origin != key):
			t.Errorf("%s: %s has %d bytes and origin %q, not what was acknowledged", who, key, len(b), origin)
		case !want && err == nil:
			t.Errorf("%s: acknowledged DELETE of %s undone", who, key)
		case want:
			present++
		}
	}
	for key := range inFlight {
		if b, _, err := read(key); err == nil && !bytes.Equal(b, crashBody(key)) {
			t.Errorf("%s: unacknowledged %s is there with %d wrong bytes", who, key, len(b))
		}
	}
	t.Logf("%s: %d acknowledged objects present, %d operations were in flight", who, present, len(inFlight))
	if durability != "on-ack" && present == 0 {
		t.Errorf("%s: none of %d acknowledged keys is there after seconds of load: more than the last second was lost", who, len(acked))
	}
}
