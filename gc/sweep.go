package gc

import (
	"fmt"
	"sync"
	"time"
)

// Sweepable is what Sweep mode needs of the engine besides Inactivator:
// the released inodes of each AG, found by walking its unlinked lists.
type Sweepable interface {
	Inactivator
	AGs() int
	AGOf(ino uint64) int
	// Releasable lists AG ag's unlinked inodes that nothing refers to, in
	// inode order.
	Releasable(ag int) []uint64
}

// sweepInterval is how often an idle sweeper looks at its AG anyway.
const sweepInterval = time.Second

// sweeper walks one AG's unlinked lists in inode order and frees what it
// finds: the mark-and-sweep alternative to per-CPU queues, kept to
// compare them.
type sweeper struct {
	ag   int
	kick chan struct{}
	mu   sync.Mutex
	cond *sync.Cond
	// requested counts passes asked for (by Flush); completed is the
	// request count a finished pass started after. Guarded by mu.
	requested, completed uint64
	stats                queueStats
}

func (g *InodeGC) startSweepers(s Sweepable) {
	g.sweep = s
	for ag := range s.AGs() {
		sw := &sweeper{ag: ag, kick: make(chan struct{}, 1)}
		sw.cond = sync.NewCond(&sw.mu)
		g.sweepers = append(g.sweepers, sw)
		g.workers.Add(1)
		go g.runSweeper(sw)
	}
}

func (g *InodeGC) runSweeper(sw *sweeper) {
	defer g.workers.Done()
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-sw.kick:
		case <-tick.C:
		case <-g.stop:
			g.sweepOnce(sw)
			return
		}
		g.sweepOnce(sw)
	}
}

// sweepOnce frees every releasable inode of the sweeper's AG.
func (g *InodeGC) sweepOnce(sw *sweeper) {
	sw.mu.Lock()
	req := sw.requested
	sw.mu.Unlock()
	start := g.opt.Now()
	inos := g.sweep.Releasable(sw.ag)
	sw.stats.noteBacklog(uint64(len(inos)))
	for _, ino := range inos {
		g.inactivate(&sw.stats, ino)
	}
	if took := g.opt.Now().Sub(start); g.opt.SlowDrain != nil && took > g.opt.SlowDrainAfter {
		g.opt.SlowDrain(sw.ag, took, uint64(len(inos)))
	}
	sw.mu.Lock()
	sw.completed = max(sw.completed, req)
	sw.cond.Broadcast()
	sw.mu.Unlock()
}

// queueSweep notes a released inode and wakes its AG's sweeper.
func (g *InodeGC) queueSweep(ino uint64) {
	g.sweepQueued.Add(1)
	ag := g.sweep.AGOf(ino)
	if ag < 0 || ag >= len(g.sweepers) {
		return
	}
	select {
	case g.sweepers[ag].kick <- struct{}{}:
	default:
	}
}

// flushSweep runs a full pass of every AG, started after the call.
func (g *InodeGC) flushSweep() {
	for _, sw := range g.sweepers {
		sw.mu.Lock()
		sw.requested++
		req := sw.requested
		sw.mu.Unlock()
		select {
		case sw.kick <- struct{}{}:
		default:
		}
		sw.mu.Lock()
		for sw.completed < req {
			sw.cond.Wait()
		}
		sw.mu.Unlock()
	}
}

func sweepable(inact Inactivator) (Sweepable, error) {
	s, ok := inact.(Sweepable)
	if !ok {
		return nil, fmt.Errorf("gc mode %s needs an Inactivator that lists unlinked inodes", Sweep)
	}
	return s, nil
}
