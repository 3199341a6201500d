package trans

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// counterItem is a late item holding a running total shared by every
// transaction (as a dquot's count is): it adds its amount when formatted
// and logs the total, then writes the total into block 9 once durable.
type counterItem struct {
	total  *uint64 // changed only under the log's order lock
	amount uint64
	logged uint64
	ticket xlog.Ticket
	wrote  *[]xlog.Ticket
	all    *[]*counterItem // every formatted item, for the check
	err    *error
}

func (it *counterItem) Format() []xlog.Item {
	*it.total += it.amount
	it.logged = *it.total
	*it.all = append(*it.all, it)
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, it.logged)
	return []xlog.Item{{Regions: [][]byte{{0x34, 0x12, 2, 0}, b}}}
}

func (it *counterItem) Queued(t xlog.Ticket) { it.ticket = t }

func (it *counterItem) WriteBack(c *Cache, own, durable xlog.Ticket) error {
	if own != it.ticket || own > durable || c.log.Durable() < own {
		*it.err = fmt.Errorf("write-back of ticket %d (queued as %d) with %d durable", own, it.ticket, durable)
	}
	*it.wrote = append(*it.wrote, own)
	return c.WriteInPlace(9, 512, stamped, func(b []byte) {
		binary.BigEndian.PutUint64(b[8:], it.logged)
		stamped.Finish(b)
	})
}

// TestLateItemsInLogOrder: late items of concurrent transactions are
// formatted in the order the log holds them, so running totals are
// logged in increasing order; each writes itself back once, in log order,
// after its commit is durable, and the newest total ends in its block.
func TestLateItemsInLogOrder(t *testing.T) {
	c, l := newLoggedCache(t)
	var total uint64
	var wrote []xlog.Ticket
	var wbErr error
	var all []*counterItem
	var wg sync.WaitGroup
	const workers, each = 8, 25
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < each; i++ {
				tx, err := c.Begin()
				if err != nil {
					t.Error(err)
					return
				}
				if rng.Intn(2) == 0 { // with a buffer too, or alone
					a := format.Daddr(10 + rng.Intn(20))
					b, err := tx.Read(a, 512, stamped)
					if err != nil {
						t.Error(err)
						tx.Cancel()
						return
					}
					b[5]++
					tx.Dirty(a)
				}
				tx.LogLate(&counterItem{total: &total, amount: 1 + uint64(rng.Intn(9)), wrote: &wrote, all: &all, err: &wbErr})
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				if rng.Intn(4) == 0 {
					if err := c.Force(); err != nil {
						t.Error(err)
					}
				}
			}
		}(int64(w))
	}
	wg.Wait()
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if wbErr != nil {
		t.Fatal(wbErr)
	}
	if len(wrote) != workers*each {
		t.Fatalf("%d write-backs for %d commits", len(wrote), workers*each)
	}
	for i := 1; i < len(wrote); i++ {
		if wrote[i] <= wrote[i-1] {
			t.Fatalf("write-back of ticket %d after %d", wrote[i], wrote[i-1])
		}
	}
	// Tickets are the log's order: totals must grow with them.
	sort.Slice(all, func(i, j int) bool { return all[i].ticket < all[j].ticket })
	for i := 1; i < len(all); i++ {
		if all[i].logged <= all[i-1].logged {
			t.Fatalf("total %d at ticket %d after %d at ticket %d", all[i].logged, all[i].ticket, all[i-1].logged, all[i-1].ticket)
		}
	}
	// What the log still holds (the tail has moved on) agrees.
	s, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for _, tr := range s.Trans {
		for _, it := range tr.Items {
			if binary.LittleEndian.Uint16(it.Regions[0]) != 0x1234 {
				continue
			}
			v := binary.BigEndian.Uint64(it.Regions[1])
			if v <= last {
				t.Fatalf("total %d logged after %d", v, last)
			}
			last = v
		}
	}
	if last != 0 && last != total {
		t.Fatalf("the log's newest total is %d, want %d", last, total)
	}
	b, err := c.Read(9, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint64(b[8:]); got != total {
		t.Fatalf("block 9 holds %d, want the newest total %d", got, total)
	}
	onDisk := make([]byte, 512)
	if _, err := c.dev.ReadAt(onDisk, 9*512); err != nil || binary.BigEndian.Uint64(onDisk[8:]) != total {
		t.Fatalf("device holds %d (%v), want %d", binary.BigEndian.Uint64(onDisk[8:]), err, total)
	}
}
