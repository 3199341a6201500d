package xfs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
)

// A NameOp is one change of the names of regular files, for Apply: it
// moves the name Name of directory Dir to ToName in directory ToDir,
// replacing a regular file of that name (which loses that link) and
// setting Attrs on the moved inode; with ToDir 0 it removes the name;
// with New it makes a new inode named ToName in ToDir.
type NameOp struct {
	Dir    format.Ino
	Name   string
	ToDir  format.Ino
	ToName string
	Attrs  []Xattr
	// Immutable: the moved file carries the immutable flag after the op:
	// the flag is set if it was clear and kept if set, in the same
	// transaction as the move (and its Attrs, which may then be set on
	// an immutable file). An immutable file moves only by an op with
	// Immutable; an op that removes a name (ToDir 0) or replaces a name
	// of an immutable file is always refused with ErrImmutable, and
	// Immutable on a remove op is ErrInvalid. Directories the op changes
	// must not be immutable.
	Immutable bool
	// New makes the name instead of moving one: the op creates an
	// inode (Dir and Name stay empty) named ToName in ToDir, a name
	// that must be free and that later ops leave alone, and sets Attrs
	// on it. A later op of the same Apply names the directory such an
	// op made MadeDir.
	New *NewInode
}

// NewInode is what a NameOp with New makes: a directory if Dir, else a
// regular file holding Data (at most MaxCreateData bytes), with Attrs'
// mode, owner and project, and Mtime as its modification time (zero:
// now). A store that remakes a file it once made keeps its time so.
type NewInode struct {
	Attrs
	Dir   bool
	Data  []byte
	Mtime time.Time
}

// MadeDir, as a NameOp's Dir or ToDir, is the directory an earlier op of
// the same Apply made (NewInode.Dir): one Apply makes one at most, and
// not inside itself.
const MadeDir = ^format.Ino(0)

// isMade tells whether ino is MadeDir.
func isMade(ino format.Ino) bool { return ino == MadeDir }

// maxApplyOps bounds the changes of one Apply: they share one
// transaction, whose reservation and locks grow with them.
const maxApplyOps = 8

// Apply makes several changes of regular files' names in one
// transaction: after a crash either all of them have happened or none.
// The changes apply in order, each to the names the ones before it left;
// every name an op moves or removes must then be a regular file's, and
// so must a name it replaces. An inode that loses its last link goes on
// its AG's unlinked list and is released as by Unlink. Directories are
// neither moved nor removed (Rename and Rmdir do that).
//
// A failure changes nothing: ErrNotFound for a missing name, ErrIsDir or
// ErrInvalid for a name of another kind, ErrInvalid for more than eight
// ops (maxApplyOps) or a move of a name onto another name of its own inode,
// ErrImmutable for a change the immutable flag forbids (NameOp.Immutable).
// An object store moves a file out of the way and another into its place
// in one step this way (a new version over the current one).
//
// Ops with New make inodes in the same transaction: a delete marker and
// the directory that keeps it beside the version it hides, or a small new
// version, data and all, in the name the current one leaves. Their
// inodes come from one AG (ialloc: the AG whose AGI the first locked),
// and an Apply that makes inodes may not release one (ErrInvalid when an
// op removes or replaces a file's last link): the AGI that release
// takes could come below the one the allocation holds. A name a New op
// would take that exists gives ErrExist.
func (v Namespace) Apply(ops []NameOp) error { return v.apply(ops, false) }

// ApplyUnchecked is Apply with the projects' quota limits not checked
// (usage is counted all the same): for a store that rearranges what it
// already keeps, a change no limit may refuse, as the kernel forces the
// reservations of some of its own changes.
func (v Namespace) ApplyUnchecked(ops []NameOp) error { return v.apply(ops, true) }

func (v Namespace) apply(ops []NameOp, unchecked bool) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	if len(ops) > maxApplyOps {
		return fmt.Errorf("%d name changes in one transaction (at most %d): %w", len(ops), maxApplyOps, ErrInvalid)
	}
	if err := checkMade(ops); err != nil {
		return err
	}
	sets := make([]xattrSet, len(ops))
	for i, op := range ops {
		names := []string{op.Name}
		if op.New != nil {
			names = []string{op.ToName}
			if m := v.w.quota; m != nil && op.New.ProjID != 0 {
				if err := v.quotas().ensureDquot(m, op.New.ProjID); err != nil {
					return err
				}
			}
		} else if op.ToDir != 0 {
			names = append(names, op.ToName)
		} else if len(op.Attrs) > 0 {
			return fmt.Errorf("attributes on a removed name %q: %w", op.Name, ErrInvalid)
		} else if op.Immutable {
			return fmt.Errorf("immutable flag on a removed name %q: %w", op.Name, ErrInvalid)
		}
		for _, n := range names {
			if n == "." || n == ".." {
				return fmt.Errorf("%q: %w", n, ErrInvalid)
			}
			if err := dir.CheckName([]byte(n)); err != nil {
				return err
			}
		}
		if sets[i], err = v.xattrs().parseXattrs(op.Attrs); err != nil {
			return err
		}
	}
	gone, err := v.applyLocked(ops, sets, unchecked)
	for _, ino := range gone {
		if rerr := v.space().lastLinkGone(ino); err == nil {
			err = rerr
		}
	}
	return err
}

// checkMade checks the ops' use of New and MadeDir (see there).
func checkMade(ops []NameOp) error {
	made := false
	for _, op := range ops {
		switch {
		case op.New != nil && (op.Dir != 0 || op.Name != "" || op.ToDir == 0 || op.Immutable):
			return fmt.Errorf("new name %q: an op that makes an inode has only ToDir, ToName and Attrs: %w", op.ToName, ErrInvalid)
		case op.New != nil && (len(op.New.Data) > MaxCreateData || op.New.Dir && len(op.New.Data) > 0):
			return fmt.Errorf("new name %q: %d bytes of data: %w", op.ToName, len(op.New.Data), ErrInvalid)
		case op.New != nil && op.New.Dir && (made || isMade(op.ToDir)):
			return fmt.Errorf("new directory %q: one Apply makes one directory, not inside itself: %w", op.ToName, ErrInvalid)
		case !made && (isMade(op.Dir) || isMade(op.ToDir)):
			return fmt.Errorf("%q: MadeDir before an op made a directory: %w", op.Name, ErrInvalid)
		}
		if op.New != nil && op.New.Dir {
			made = true
		}
	}
	return nil
}

// namePlan is Apply's view of the names its ops touch, resolved under
// the directories' locks before the transaction: the inode each name
// holds after the ops so far (0: none).
type namePlan struct {
	v     Namespace
	names map[dirName]format.Ino
	// links counts the links each file loses (negative) or keeps (0): a
	// move takes one name and gives one.
	links map[format.Ino]int
	modes map[format.Ino]uint16
	// flagged holds the files an op with Immutable moves: the
	// transaction may change them whatever their flag (checkFlags).
	flagged map[format.Ino]bool
	// replaced[i] is the inode op i's move replaces (0: none).
	replaced []format.Ino
	src      []format.Ino
	// made holds the names New ops take, which later ops leave alone.
	made map[dirName]bool
}

type dirName struct {
	dir  format.Ino
	name string
}

// resolve returns the inode a name holds at this point of the plan.
func (p *namePlan) resolve(d format.Ino, name string) (format.Ino, error) {
	k := dirName{d, name}
	if p.made[k] {
		return 0, fmt.Errorf("%q is made by this Apply: %w", name, ErrInvalid)
	}
	if ino, ok := p.names[k]; ok {
		return ino, nil
	}
	if isMade(d) {
		return 0, nil // the new directory starts empty
	}
	ino, err := p.v.lookupLocked(d, name)
	if errors.Is(err, ErrNotFound) {
		ino, err = 0, nil
	}
	if err != nil {
		return 0, err
	}
	p.names[k] = ino
	return ino, nil
}

// file checks that ino, named name, is a regular file.
func (p *namePlan) file(ino format.Ino, name string) error {
	mode, ok := p.modes[ino]
	if !ok {
		ip, err := p.v.iget(ino)
		if err != nil {
			return err
		}
		mode = ip.core.Mode
		p.modes[ino] = mode
	}
	switch mode & format.SIFMT {
	case format.SIFREG:
		return nil
	case format.SIFDIR:
		return fmt.Errorf("%q: %w", name, ErrIsDir)
	}
	return fmt.Errorf("%q is a %s, not a regular file: %w", name, format.FileType(mode), ErrInvalid)
}

// build walks the ops over the names they leave.
func (p *namePlan) build(ops []NameOp) error {
	p.src, p.replaced = make([]format.Ino, len(ops)), make([]format.Ino, len(ops))
	p.made = map[dirName]bool{}
	for i, op := range ops {
		if op.New != nil {
			dst, err := p.resolve(op.ToDir, op.ToName)
			if err != nil {
				return err
			}
			if dst != 0 {
				return fmt.Errorf("%q: %w", op.ToName, ErrExist)
			}
			p.made[dirName{op.ToDir, op.ToName}] = true
			continue
		}
		src, err := p.resolve(op.Dir, op.Name)
		if err != nil {
			return err
		}
		if src == 0 {
			return fmt.Errorf("%q: %w", op.Name, ErrNotFound)
		}
		if err := p.file(src, op.Name); err != nil {
			return err
		}
		p.src[i] = src
		p.links[src] += 0 // every file an op names is locked and changed
		if op.ToDir == 0 {
			p.names[dirName{op.Dir, op.Name}] = 0
			p.links[src]--
			continue
		}
		dst, err := p.resolve(op.ToDir, op.ToName)
		if err != nil {
			return err
		}
		if dst == src {
			return fmt.Errorf("move of %q onto %q, a name of the same inode: %w", op.Name, op.ToName, ErrInvalid)
		}
		if dst != 0 {
			if err := p.file(dst, op.ToName); err != nil {
				return err
			}
			p.links[dst]--
		}
		if op.Immutable {
			p.flagged[src] = true
		}
		p.replaced[i] = dst
		p.names[dirName{op.Dir, op.Name}] = 0
		p.names[dirName{op.ToDir, op.ToName}] = src
	}
	return nil
}

// checkFlags follows the immutable flag of the flagged files through the
// ops, from the versions the transaction holds: such a file, immutable
// before an op or made so by an earlier one, moves only by an op with
// Immutable and is neither removed nor replaced. Any other file was
// refused by modify if immutable, since no op may change one.
func (p *namePlan) checkFlags(ops []NameOp, changes map[format.Ino]*inodeChange) error {
	immutable := map[format.Ino]bool{}
	for ino := range p.flagged {
		immutable[ino] = changes[ino].core.Flags&format.DiflagImmutable != 0
	}
	for i, op := range ops {
		src, dst := p.src[i], p.replaced[i]
		switch {
		case immutable[src] && (op.ToDir == 0 || !op.Immutable):
			return fmt.Errorf("%q (inode %d): %w", op.Name, src, ErrImmutable)
		case immutable[dst]:
			return fmt.Errorf("replace %q (inode %d): %w", op.ToName, dst, ErrImmutable)
		}
		if op.Immutable {
			immutable[src] = true
		}
	}
	return nil
}

// applyLocked takes the locks, plans and runs the transaction; it
// returns the inodes that lost their last link.
func (v Namespace) applyLocked(ops []NameOp, sets []xattrSet, unchecked bool) (gone []format.Ino, err error) {
	var dirs []format.Ino
	makes := 0
	for _, op := range ops {
		if op.New != nil {
			makes++
		} else {
			dirs = append(dirs, op.Dir)
		}
		if op.ToDir != 0 {
			dirs = append(dirs, op.ToDir)
		}
	}
	// The directory a New op makes is nobody else's before the commit.
	dirs = slices.DeleteFunc(dirs, isMade)
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	handles, unlock := v.lockInodeSet(dirs)
	defer unlock()
	p := &namePlan{v: v, names: map[dirName]format.Ino{}, links: map[format.Ino]int{}, modes: map[format.Ino]uint16{},
		flagged: map[format.Ino]bool{}}
	if err := p.build(ops); err != nil {
		return nil, err
	}
	files := make([]format.Ino, 0, len(p.links))
	for ino := range p.links {
		if _, isDir := handles[ino]; isDir {
			// Only damage makes a name lead to a directory's own inode
			// as a regular file.
			return nil, format.Corrupt("directory entry", fmt.Sprintf("inode %d", ino), "a regular file's name leads to a directory")
		}
		files = append(files, ino)
	}
	slices.Sort(files)
	for _, ino := range files {
		h, unlockFile := v.lockInode(ino)
		defer unlockFile()
		handles[ino] = h
	}
	// The files whose last link goes, by AG: their unlinked lists' mutexes
	// (and, in the transaction, their AGIs) are taken in AG order.
	var dying []format.Ino
	for _, ino := range files {
		ip, err := v.igetHeld(handles[ino], ino)
		if err != nil {
			return nil, err
		}
		if int(ip.core.Nlink)+p.links[ino] <= 0 {
			dying = append(dying, ino)
		}
	}
	if len(dying) > 0 && makes > 0 {
		return nil, fmt.Errorf("an Apply that makes inodes releases inode %d: %w", dying[0], ErrInvalid)
	}
	slices.SortFunc(dying, func(a, b format.Ino) int {
		aa, _ := v.geo.InoToAg(a)
		ab, _ := v.geo.InoToAg(b)
		return cmp.Or(cmp.Compare(aa, ab), cmp.Compare(a, b))
	})
	lockedAG := map[format.AgNumber]bool{}
	for _, ino := range dying {
		ag, _ := v.geo.InoToAg(ino)
		if lockedAG[ag] {
			continue
		}
		lockedAG[ag] = true
		u := v.w.inodes.Unlinked(ag)
		u.Lock()
		defer u.Unlock()
	}
	reserve := 2*int64(len(ops))*v.dirChangeReserve() + int64(makes)*v.createReserve()
	for _, op := range ops {
		if op.New != nil && len(op.New.Data) > 0 {
			reserve += (&fileContent{data: op.New.Data}).reserve(v.mount)
		}
	}
	for _, set := range sets {
		if len(set.list) > 0 {
			reserve += v.xattrs().xattrReserve(set.blocks)
		}
	}
	// An Apply that makes inodes allocates: it neither uses the blocks
	// kept for frees nor skips waiting for inactivation on ENOSPC (it
	// holds no unlinked inode and no unlinked list).
	err = v.runTx(reserve, makes == 0, func(t *txn) error {
		var err error
		t.unchecked = unchecked
		gone, err = v.applyTx(t, handles, ops, sets, p, dirs, files, dying)
		return err
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}

// applyTx is Apply's transaction: links first (AGIs before any AGF the
// directories' changes may take), then the directories, op by op.
func (v Namespace) applyTx(t *txn, handles map[format.Ino]*inodeHandle, ops []NameOp, sets []xattrSet, p *namePlan, dirs, files, dying []format.Ino) ([]format.Ino, error) {
	changes := map[format.Ino]*inodeChange{}
	for _, ino := range dirs {
		c, err := t.modifyDir(handles[ino], ino)
		if err != nil {
			return nil, err
		}
		changes[ino] = c
	}
	for _, ino := range files {
		modify := t.modify
		if p.flagged[ino] {
			modify = t.modifyAny // checkFlags checks it
		}
		c, err := modify(handles[ino], ino)
		if err != nil {
			return nil, err
		}
		changes[ino] = c
	}
	if err := p.checkFlags(ops, changes); err != nil {
		return nil, err
	}
	// Inodes first: their AGI (and maybe AGF) before any AGF the
	// directories' changes take.
	for i, op := range ops {
		if op.New == nil {
			continue
		}
		mode := format.SIFREG | uint16(op.New.Mode&0o7777)
		if op.New.Dir {
			mode = format.SIFDIR | uint16(op.New.Mode&0o7777)
		}
		c, err := v.makeInode(t, changes[op.ToDir], mode, op.New.Attrs, "")
		if err != nil {
			return nil, err
		}
		if !op.New.Mtime.IsZero() {
			c.core.Mtime = format.TimestampOf(op.New.Mtime)
		}
		if op.New.Dir {
			changes[MadeDir] = c
		}
		changes[c.ino] = c
		p.src[i] = c.ino // named by the loop below
	}
	// Then their data: its AGFs after the allocations' AGIs.
	for i, op := range ops {
		if op.New != nil && len(op.New.Data) > 0 {
			if err := (&fileContent{data: op.New.Data}).fill(t, p.src[i]); err != nil {
				return nil, err
			}
		}
	}
	// Dying inodes in AG order, then the others whose count drops.
	order := append(slices.Clone(dying), files...)
	done := map[format.Ino]bool{}
	var gone []format.Ino
	for _, ino := range order {
		if done[ino] {
			continue
		}
		done[ino] = true
		c := changes[ino]
		for n := p.links[ino]; n < 0; n++ {
			g, err := t.dropLink(nil, c)
			if err != nil {
				return nil, err
			}
			if g {
				gone = append(gone, ino)
			}
		}
	}
	// A name an op vacates and a later op fills keeps its entry, which
	// the later op points at its file (dir.Replace), as a rename over a
	// name does: a new version taking a key's name from the one moved
	// aside changes one entry of a large directory, not its index twice.
	refilled := refills(ops)
	kept := map[dirName]bool{} // vacated names whose entries stay for now
	for i, op := range ops {
		sd := changes[op.Dir]
		src := p.src[i]
		if op.ToDir != 0 {
			dd, sc := changes[op.ToDir], changes[src]
			ftype := format.FTypeOfMode(sc.core.Mode)
			to := dirName{op.ToDir, op.ToName}
			if p.replaced[i] != 0 || kept[to] {
				if _, err := dir.Replace(dataFork{dd}, []byte(op.ToName), src, ftype); err != nil {
					return nil, err
				}
				delete(kept, to)
			} else if err := dir.Add(dataFork{dd}, []byte(op.ToName), src, ftype); err != nil {
				return nil, err
			}
			if err := sets[i].apply(&attrFork{sc}); err != nil {
				return nil, xattrError(err)
			}
			if op.Immutable {
				sc.core.Flags |= format.DiflagImmutable
			}
			sc.touch(false)
			dd.touch(true)
		}
		if op.New != nil {
			continue
		}
		sd.touch(true)
		if refilled[i] {
			kept[dirName{op.Dir, op.Name}] = true
			continue
		}
		if _, err := dir.Remove(dataFork{sd}, []byte(op.Name)); err != nil {
			return nil, err
		}
	}
	return gone, nil
}

// refills tells which ops vacate a name that a later op fills.
func refills(ops []NameOp) []bool {
	out := make([]bool, len(ops))
	for i, op := range ops {
		if op.New != nil {
			continue
		}
		for _, later := range ops[i+1:] {
			if later.ToDir == op.Dir && later.ToName == op.Name {
				out[i] = true
				break
			}
		}
	}
	return out
}
