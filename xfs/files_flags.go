package xfs

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/attr"
	"github.com/xfs3/xfs3/xfs/format"
)

// SetImmutable sets (on) or clears the immutable flag of regular file ino
// and, in the same transaction, sets attrs (as Xattrs.SetMany does) and
// removes the attributes named in remove (full names, "user.name"; one
// that is absent is no error). The removals come first, so a name in both
// lists ends up set. It works whatever the flag's state: it is the one
// way, with NameOp.Immutable, to change an immutable file's attributes.
// Like the kernel's flag change (xfs_fileattr_set), it updates ctime and
// the change count. ErrInvalid for an inode that is not a regular file.
func (v Files) SetImmutable(ino format.Ino, on bool, attrs []Xattr, remove []string) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	set, err := v.xattrs().parseXattrs(attrs)
	if err != nil {
		return err
	}
	type name struct {
		ns    uint8
		short string
	}
	gone := make([]name, len(remove))
	for i, full := range remove {
		if gone[i].ns, gone[i].short, err = SplitXattrName(full); err != nil {
			return err
		}
	}
	blocks := set.blocks
	if len(remove) > 0 {
		blocks += 2 // as Xattrs.Remove: a block taken while blocks merge
	}
	reserve := int64(0)
	if blocks > 0 {
		reserve = v.xattrs().xattrReserve(blocks)
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	// Without values to store the change only gives space back, so it
	// works on a full volume, like Xattrs.Remove.
	return v.runTx(reserve, len(set.list) == 0, func(t *txn) error {
		c, err := t.modifyAny(h, ino)
		if err != nil {
			return err
		}
		if c.core.Mode&format.SIFMT != format.SIFREG {
			return fmt.Errorf("immutable flag on inode %d, a %s: %w", ino, format.FileType(c.core.Mode), ErrInvalid)
		}
		f := &attrFork{c}
		for _, n := range gone {
			if err := attr.Remove(f, n.ns, []byte(n.short)); err != nil && !errors.Is(err, attr.ErrNoData) {
				return xattrError(err)
			}
		}
		if err := set.apply(f); err != nil {
			return xattrError(err)
		}
		if on {
			c.core.Flags |= format.DiflagImmutable
		} else {
			c.core.Flags &^= format.DiflagImmutable
		}
		c.touch(false)
		return nil
	})
}
