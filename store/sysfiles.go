package store

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// MaxSystemFileSize is the largest system file, in bytes.
const MaxSystemFileSize = 16 << 20

// maxSystemFileName is the longest name of a system file.
const maxSystemFileName = 64

var (
	// ErrNoSuchSystemFile: no system file has the name.
	ErrNoSuchSystemFile = errors.New("no such system file")
	// ErrInvalidSystemFileName: a name outside [a-z0-9._-]{1,64}, or
	// starting with '.'.
	ErrInvalidSystemFileName = errors.New("invalid system file name")
	// ErrSystemFileTooLarge: content over MaxSystemFileSize.
	ErrSystemFileTooLarge = errors.New("system file too large")
)

// sysFileAttrs are those of a system file: the server's alone, and like
// everything in the system directory charged to no bucket (project 0).
var sysFileAttrs = xfs.Attrs{Mode: 0o600}

// SystemFiles is the role of a Store for the server's own small
// documents (its users and policies, say): the regular files of
// .xfs3/config, which a kernel mount shows there. Each Write replaces a
// file whole, atomically.
type SystemFiles struct{ *store }

// SystemFiles returns the store's system files role.
func (s *Store) SystemFiles() SystemFiles { return SystemFiles{s.store} }

// checkSystemFileName refuses a name outside [a-z0-9._-]{1,64} or
// starting with '.'.
func checkSystemFileName(name string) error {
	if len(name) == 0 || len(name) > maxSystemFileName || name[0] == '.' {
		return fmt.Errorf("system file %q: %w", name, ErrInvalidSystemFileName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("system file %q: %w", name, ErrInvalidSystemFileName)
		}
	}
	return nil
}

// Read returns the content of system file name, or ErrNoSuchSystemFile.
// A file's content never changes once it has its name (Write replaces
// the file), so the read is of one Write.
func (f SystemFiles) Read(name string) ([]byte, error) {
	if err := checkSystemFileName(name); err != nil {
		return nil, err
	}
	dir, err := f.configDir(false)
	if err != nil {
		return nil, err
	}
	var h *xfs.Handle
	var st xfs.Stat
	if dir != 0 {
		if h, st, err = f.openEntry(dir, name); err != nil {
			return nil, err
		}
	}
	if h == nil {
		return nil, fmt.Errorf("system file %q: %w", name, ErrNoSuchSystemFile)
	}
	defer h.Close()
	switch {
	case !isFile(&st):
		return nil, fmt.Errorf("system file %q is a %s: %w", name, st.Type(), ErrKeyConflict)
	case st.Size > MaxSystemFileSize:
		return nil, fmt.Errorf("system file %q of %d bytes (at most %d): %w", name, st.Size, MaxSystemFileSize, ErrSystemFileTooLarge)
	}
	data := make([]byte, st.Size)
	if len(data) == 0 {
		return data, nil
	}
	if _, err := f.v.Files().ReadAt(h.Ino(), data, 0); err != nil {
		return nil, fmt.Errorf("system file %q: %w", name, err)
	}
	return data, nil
}

// Write replaces system file name with data, atomically: the new file
// is made whole in a staging directory, then renamed over the name in
// one engine transaction, so after a crash the name holds the old
// content or the new, never part of either. It is durable when Write
// returns; the old file's space comes back through inode GC.
func (f SystemFiles) Write(name string, data []byte) (err error) {
	defer f.settle(&err)
	return f.write(name, data)
}

// write is Write without the settle.
func (f SystemFiles) write(name string, data []byte) error {
	if err := checkSystemFileName(name); err != nil {
		return err
	}
	if len(data) > MaxSystemFileSize {
		return fmt.Errorf("system file %q of %d bytes (at most %d): %w", name, len(data), MaxSystemFileSize, ErrSystemFileTooLarge)
	}
	dir, err := f.configDir(true)
	if err != nil {
		return err
	}
	tmp := randomName()
	sd := f.stagingDir(tmp)
	if err := f.stage(sd, tmp, data); err != nil {
		return fmt.Errorf("system file %q: %w", name, err)
	}
	if err := f.v.Names().Rename(sd, tmp, dir, name); err != nil {
		f.v.Names().Unlink(sd, tmp)
		return fmt.Errorf("system file %q: %w", name, err)
	}
	return nil
}

// stage makes the file tmp in the staging directory sd holding data:
// created with it in one transaction when it is small enough
// (xfs.MaxCreateData), else created and then written. A failure leaves
// nothing.
func (f SystemFiles) stage(sd format.Ino, tmp string, data []byte) error {
	if len(data) <= xfs.MaxCreateData {
		_, err := f.v.Names().CreateFile(sd, tmp, sysFileAttrs, data, nil)
		return err
	}
	ino, err := f.v.Names().Create(sd, tmp, sysFileAttrs)
	if err != nil {
		return err
	}
	if _, err := f.v.Files().WriteAt(ino, data, 0); err != nil {
		f.v.Names().Unlink(sd, tmp)
		return err
	}
	return nil
}

// Delete removes system file name; a name without a file is not an
// error.
func (f SystemFiles) Delete(name string) (err error) {
	defer f.settle(&err)
	if err := checkSystemFileName(name); err != nil {
		return err
	}
	dir, err := f.configDir(false)
	if err != nil || dir == 0 {
		return err
	}
	err = f.v.Names().Unlink(dir, name)
	if errors.Is(err, xfs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("system file %q: %w", name, err)
	}
	return nil
}

// configDir returns .xfs3/config, made when create is set and it is
// missing; 0 when it is missing and create is not set. The first Write
// makes it, so a volume has it once it has had system files.
func (s *store) configDir(create bool) (format.Ino, error) {
	if ino := s.sysConfig.Load(); ino != 0 {
		return format.Ino(ino), nil
	}
	sys, err := s.v.Names().Lookup(s.v.Root(), SysDir)
	if err != nil {
		return 0, err
	}
	var ino format.Ino
	if create {
		ino, err = s.ensureDir(sys, configDir, sysAttrs)
	} else if ino, err = s.v.Names().Lookup(sys, configDir); errors.Is(err, xfs.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	s.sysConfig.Store(uint64(ino))
	return ino, nil
}
