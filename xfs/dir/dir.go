package dir

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// GetForm reports which of the four formats the directory uses.
func GetForm(r fork.Reader) (Form, error) {
	o, err := newOp(r)
	if err != nil {
		return 0, err
	}
	defer o.done()
	return o.form()
}

// Lookup returns the inode number and file type of name in the directory
// ("." and ".." included). It fails with ErrNotFound when there is no
// such entry.
func Lookup(r fork.Reader, name []byte) (format.Ino, uint8, error) {
	if err := CheckName(name); err != nil {
		return 0, 0, err
	}
	o, err := newOp(r)
	if err != nil {
		return 0, 0, err
	}
	defer o.done()
	f, err := o.form()
	if err != nil {
		return 0, 0, err
	}
	var ino format.Ino
	var ftype uint8
	switch f {
	case ShortForm:
		s, err := decodeSF(r.Inline(), o.d)
		if err != nil {
			return 0, 0, err
		}
		switch {
		case isDot(name):
			return o.owner, format.FTDir, nil
		case isDotDot(name):
			return s.parent, format.FTDir, nil
		}
		i := s.find(name)
		if i < 0 {
			return 0, 0, ErrNotFound
		}
		return s.ents[i].ino, s.ents[i].ftype, nil
	case BlockForm:
		ino, ftype, err = o.blockLookup(name)
	case LeafForm:
		ino, ftype, err = o.leafLookup(name)
	default:
		ino, ftype, err = o.nodeLookupName(name)
	}
	return ino, ftype, err
}

// Parent returns the inode number recorded in "..".
func Parent(r fork.Reader) (format.Ino, error) {
	ino, _, err := Lookup(r, []byte(".."))
	return ino, err
}

// IsEmpty reports whether the directory holds nothing but "." and "..".
func IsEmpty(r fork.Reader) (bool, error) {
	empty := true
	err := ListFrom(r, 0, func(Entry) error {
		empty = false
		return errStop
	})
	if err == errStop {
		err = nil
	}
	return empty, err
}

var errStop = errors.New("stop")

// Init makes the fork an empty short-form directory whose ".." is parent
// (xfs_dir2_sf_create). The fork must hold no blocks.
func Init(w fork.Writer, parent format.Ino) error {
	o, err := newOp(w)
	if err != nil {
		return err
	}
	defer o.done()
	if err := checkTarget(o.g, parent, format.FTDir); err != nil {
		return err
	}
	return o.sfCreate(parent)
}

// Add adds name -> ino (with file type ftype) to the directory inside the
// caller's transaction, converting the directory to the next format when
// the kernel would. It fails with ErrExist when the name is present, with
// the fork's error when the volume is full (the caller cancels).
func Add(w fork.Writer, name []byte, ino format.Ino, ftype uint8) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if isDot(name) || isDotDot(name) {
		return fmt.Errorf("add %q: %w", name, ErrExist)
	}
	o, err := newOp(w)
	if err != nil {
		return err
	}
	defer o.done()
	if err := checkTarget(o.g, ino, ftype); err != nil {
		return err
	}
	f, err := o.form()
	if err != nil {
		return err
	}
	if err := o.mustBeAbsent(f, name); err != nil {
		return err
	}
	switch f {
	case ShortForm:
		var s *sfDir
		if s, err = decodeSF(w.Inline(), o.d); err == nil {
			err = o.sfAdd(s, name, ino, ftype)
		}
	case BlockForm:
		err = o.blockAdd(name, ino, ftype)
	case LeafForm:
		err = o.leafAdd(name, ino, ftype)
	default:
		err = o.nodeAdd(name, ino, ftype)
	}
	if err != nil {
		return err
	}
	o.c.Flush()
	return nil
}

// mustBeAbsent fails with ErrExist when name is in the directory.
func (o *op) mustBeAbsent(f Form, name []byte) error {
	var err error
	switch f {
	case ShortForm:
		var s *sfDir
		if s, err = decodeSF(o.r.Inline(), o.d); err == nil && s.find(name) < 0 {
			err = ErrNotFound
		}
	case BlockForm:
		_, _, err = o.blockLookup(name)
	case LeafForm:
		_, _, err = o.leafLookup(name)
	default:
		_, _, err = o.nodeLookupName(name)
	}
	switch err {
	case nil, ErrExist:
		return fmt.Errorf("add %q: %w", name, ErrExist)
	case ErrNotFound:
		return nil
	}
	return err
}

// Remove deletes name from the directory and returns the inode it named,
// converting the directory back to a smaller format when the kernel
// would. It fails with ErrNotFound when there is no such entry.
func Remove(w fork.Writer, name []byte) (format.Ino, error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	if isDot(name) || isDotDot(name) {
		return 0, fmt.Errorf("remove %q: %w", name, ErrInvalid)
	}
	o, err := newOp(w)
	if err != nil {
		return 0, err
	}
	defer o.done()
	f, err := o.form()
	if err != nil {
		return 0, err
	}
	var ino format.Ino
	switch f {
	case ShortForm:
		s, err := decodeSF(w.Inline(), o.d)
		if err != nil {
			return 0, err
		}
		i := s.find(name)
		if i < 0 {
			return 0, ErrNotFound
		}
		ino = s.ents[i].ino
		err = o.sfRemove(s, i)
		if err != nil {
			return 0, err
		}
	case BlockForm:
		ino, err = o.blockRemove(name)
	case LeafForm:
		ino, err = o.leafRemove(name)
	default:
		ino, err = o.nodeRemove(name)
	}
	if err != nil {
		return 0, err
	}
	o.c.Flush()
	return ino, nil
}

// Replace points the existing entry name at ino with file type ftype (a
// rename over an existing name) and returns the inode it named before.
// name may be ".." (see SetParent) but not ".".
func Replace(w fork.Writer, name []byte, ino format.Ino, ftype uint8) (format.Ino, error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	if isDot(name) {
		return 0, fmt.Errorf("replace %q: %w", name, ErrInvalid)
	}
	o, err := newOp(w)
	if err != nil {
		return 0, err
	}
	defer o.done()
	if err := checkTarget(o.g, ino, ftype); err != nil {
		return 0, err
	}
	f, err := o.form()
	if err != nil {
		return 0, err
	}
	var old format.Ino
	switch f {
	case ShortForm:
		s, err := decodeSF(w.Inline(), o.d)
		if err != nil {
			return 0, err
		}
		i := -1
		if isDotDot(name) {
			old = s.parent
		} else if i = s.find(name); i < 0 {
			return 0, ErrNotFound
		} else {
			old = s.ents[i].ino
		}
		err = o.sfReplace(s, i, name, ino, ftype)
		if err != nil {
			return 0, err
		}
	case BlockForm:
		old, err = o.blockReplace(name, ino, ftype)
	case LeafForm:
		old, err = o.leafReplace(name, ino, ftype)
	default:
		old, err = o.nodeReplace(name, ino, ftype)
	}
	if err != nil {
		return 0, err
	}
	o.c.Flush()
	return old, nil
}

// SetParent points ".." at parent (when the directory moves).
func SetParent(w fork.Writer, parent format.Ino) error {
	_, err := Replace(w, []byte(".."), parent, format.FTDir)
	return err
}
