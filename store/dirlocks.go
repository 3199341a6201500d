package store

import (
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// dirLocks holds one lock per directory inode in use, made on demand and
// dropped when nobody holds or waits for it. A store change that spans
// several engine calls on the names of one directory (see the package
// doc, "Locking") holds that directory's lock; nothing holds a lock of
// every directory at once. The table is sharded so that directories
// never share the mutex that finds their lock.
type dirLocks struct {
	shards [dirLockShards]dirLockShard
}

const dirLockShards = 64

type dirLockShard struct {
	mu    sync.Mutex
	locks map[format.Ino]*dirLock // guarded by mu
}

type dirLock struct {
	sync.RWMutex
	users int // holders and waiters; guarded by the shard's mu
}

func (t *dirLocks) shard(ino format.Ino) *dirLockShard {
	return &t.shards[uint64(ino)%dirLockShards]
}

// get returns ino's lock with one more user.
func (t *dirLocks) get(ino format.Ino) (*dirLockShard, *dirLock) {
	sh := t.shard(ino)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.locks == nil {
		sh.locks = map[format.Ino]*dirLock{}
	}
	l := sh.locks[ino]
	if l == nil {
		l = &dirLock{}
		sh.locks[ino] = l
	}
	l.users++
	return sh, l
}

// put drops a user of ino's lock, forgetting the lock with the last one.
func (sh *dirLockShard) put(ino format.Ino, l *dirLock) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if l.users--; l.users == 0 {
		delete(sh.locks, ino)
	}
}

// lock takes directory ino's lock exclusively and returns its unlock.
func (t *dirLocks) lock(ino format.Ino) func() {
	sh, l := t.get(ino)
	l.Lock()
	return func() {
		l.Unlock()
		sh.put(ino, l)
	}
}

// rlock takes directory ino's lock shared and returns its unlock.
func (t *dirLocks) rlock(ino format.Ino) func() {
	sh, l := t.get(ino)
	l.RLock()
	return func() {
		l.RUnlock()
		sh.put(ino, l)
	}
}
