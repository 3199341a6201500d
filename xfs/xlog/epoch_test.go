package xlog

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestImageItemsReplayFromTheTail is a model test of epochs: random
// commits change directory blocks (image items) by a few chunks, free
// them (cancel items) and take them again, through a small log whose
// passes and wraps start new epochs. After every force, whatever each
// block holds in place, the items a recovery would replay from the tail
// rebuild its newest content: the first one it replays is whole. Blocks
// the log no longer names were written in place.
func TestImageItemsReplayFromTheTail(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		rng := rand.New(rand.NewSource(seed))
		_, l, w := newTestLog(t, 1200)
		w.SetIdleWriteBack(0)
		w.SetBacklogLimit(16 << 10 << rng.Intn(3))

		const nblocks = 6
		type block struct {
			daddr format.Daddr
			cur   []byte // newest committed content; nil while free
		}
		blocks := make([]block, nblocks)
		for i := range blocks {
			blocks[i].daddr = format.Daddr(64 + 8*i)
		}
		var mu sync.Mutex
		inPlace := map[format.Daddr][]byte{}
		partial, whole := 0, 0
		for i := 0; i < 1500; i++ {
			b := &blocks[rng.Intn(nblocks)]
			var it Item
			var image []byte
			switch {
			case b.cur == nil:
				image = make([]byte, 4096)
				rng.Read(image)
				binary.BigEndian.PutUint32(image, format.Dir3DataMagic)
				it, _ = BufItem(b.daddr, image, nil)
			case rng.Intn(8) == 0:
				it = CancelItem(b.daddr, 4096)
			default:
				image = bytes.Clone(b.cur)
				for k := 1 + rng.Intn(2); k > 0; k-- {
					at := 4 + rng.Intn(len(image)-4)
					image[at]++
				}
				it, _ = BufItem(b.daddr, image, b.cur)
			}
			b.cur = image
			daddr := b.daddr
			tk, err := w.Queue([]Item{it}, func(own, durable Ticket) error {
				mu.Lock()
				defer mu.Unlock()
				if image != nil {
					inPlace[daddr] = image
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rng.Intn(3) > 0 {
				continue
			}
			if err := w.Force(tk); err != nil {
				t.Fatal(err)
			}
			if rng.Intn(2) == 0 {
				// Else the next batch may be laid out before the pass
				// started by this force takes the backlog.
				w.mu.Lock()
				for w.pushing || w.pushStarted {
					w.cond.Wait()
				}
				w.mu.Unlock()
			}
			s, err := l.Scan()
			if err != nil {
				t.Fatal(err)
			}
			// Replay each block as the kernel does: nothing before its
			// last cancel, then every item in order, over garbage.
			replayed := map[format.Daddr][]byte{}
			named := map[format.Daddr]bool{}
			for _, tr := range s.Trans {
				for _, it := range tr.Items {
					f, err := format.DecodeBufLogFormat(it.Regions[0])
					if err != nil {
						t.Fatal(err)
					}
					d := format.Daddr(f.Blkno)
					named[d] = true
					if f.Flags&format.BlfCancel != 0 {
						replayed[d] = nil // nothing before it counts
						continue
					}
					img, seen := replayed[d]
					runs := f.Runs()
					if runs[0] == [2]int{0, 4096 / format.BlfChunk} {
						whole++
					} else {
						partial++
					}
					if !seen || img == nil {
						img = make([]byte, 4096)
						rng.Read(img)
					}
					for r, run := range runs {
						copy(img[run[0]*format.BlfChunk:], it.Regions[1+r])
					}
					replayed[d] = img
				}
			}
			for _, b := range blocks {
				if b.cur == nil {
					continue
				}
				got, ok := replayed[b.daddr]
				if !ok && !named[b.daddr] {
					mu.Lock()
					got = inPlace[b.daddr]
					mu.Unlock()
				}
				if !bytes.Equal(got, b.cur) {
					t.Fatalf("seed %d, commit %d: block %d does not come back from the tail %d/%d (named in the log: %v)",
						seed, i, b.daddr, s.Tail.Cycle(), s.Tail.Block(), named[b.daddr])
				}
			}
		}
		if w.Head().Cycle() < 2 {
			t.Fatalf("seed %d: the log never wrapped", seed)
		}
		if partial == 0 || whole == 0 {
			t.Fatalf("seed %d: %d partial and %d whole items replayed: the model did not test epochs", seed, partial, whole)
		}
		t.Logf("seed %d: %d whole and %d partial images replayed", seed, whole, partial)
		if err := w.Unmount(); err != nil {
			t.Fatal(err)
		}
	}
}
