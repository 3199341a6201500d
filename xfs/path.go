package xfs

import (
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs/format"
)

// maxSymlinkHops matches the kernel's limit on nested symlinks.
const maxSymlinkHops = 40

// LookupPath resolves a slash-separated path from the root. Symlinks in
// the middle of the path are followed (absolute targets from the volume
// root); a symlink in the last component is followed only when follow is
// set. "." and ".." are honoured; ".." of the root is the root.
func (v *Volume) LookupPath(path string, follow bool) (format.Ino, error) {
	hops := 0
	return v.resolve(v.Root(), path, follow, &hops)
}

func (v *Volume) resolve(start format.Ino, path string, follow bool, hops *int) (format.Ino, error) {
	cur := start
	if strings.HasPrefix(path, "/") {
		cur = v.Root()
	}
	parts := strings.Split(path, "/")
	for i, name := range parts {
		if name == "" || name == "." {
			continue
		}
		parent := cur
		next, err := v.Lookup(cur, name)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", strings.Join(parts[:i+1], "/"), err)
		}
		last := i == len(parts)-1 || allEmpty(parts[i+1:])
		if !last || follow {
			st, err := v.Stat(next)
			if err != nil {
				return 0, err
			}
			if st.Mode&format.SIFMT == format.SIFLNK {
				if *hops++; *hops > maxSymlinkHops {
					return 0, fmt.Errorf("%s: %w", strings.Join(parts[:i+1], "/"), ErrLoop)
				}
				target, err := v.Readlink(next)
				if err != nil {
					return 0, err
				}
				if next, err = v.resolve(parent, target, true, hops); err != nil {
					return 0, err
				}
			}
		}
		cur = next
	}
	return cur, nil
}

func allEmpty(parts []string) bool {
	for _, p := range parts {
		if p != "" && p != "." {
			return false
		}
	}
	return true
}
