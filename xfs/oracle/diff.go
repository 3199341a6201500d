package oracle

import (
	"fmt"
	"sort"
)

// maxDiffs bounds the number of differences reported.
const maxDiffs = 50

// DiffOptions relaxes a comparison between snapshots of different images.
type DiffOptions struct {
	// IgnoreIno skips inode numbers. Hard links are still checked: paths
	// sharing an inode on one side must share one on the other.
	IgnoreIno bool
	// IgnoreDirSize skips the size of directories, which depends on the
	// directory format and on the history of the directory.
	IgnoreDirSize bool
}

// Diff compares s (the reference) with other and describes every
// difference, up to about 50. An empty result means equal snapshots.
func (s Snapshot) Diff(other Snapshot) []string {
	return s.DiffWith(other, DiffOptions{})
}

// DiffWith is Diff with options.
func (s Snapshot) DiffWith(other Snapshot, o DiffOptions) []string {
	var d []string
	full := func() bool {
		if len(d) >= maxDiffs {
			d = append(d, "... (further differences not shown)")
			return true
		}
		return false
	}
	var linksA, linksB map[string]string
	if o.IgnoreIno {
		linksA, linksB = s.linkGroups(), other.linkGroups()
	}
	i, j := 0, 0
	for i < len(s) || j < len(other) {
		if full() {
			return d
		}
		switch {
		case j >= len(other) || (i < len(s) && s[i].Path < other[j].Path):
			d = append(d, fmt.Sprintf("%s: %s missing from other", s[i].Path, s[i].Type))
			i++
		case i >= len(s) || other[j].Path < s[i].Path:
			d = append(d, fmt.Sprintf("%s: unexpected %s in other", other[j].Path, other[j].Type))
			j++
		default:
			a, b := s[i], other[j]
			for _, m := range compareEntries(a, b, o) {
				if full() {
					return d
				}
				d = append(d, a.Path+": "+m)
			}
			if o.IgnoreIno && linksA[a.Path] != linksB[b.Path] {
				d = append(d, fmt.Sprintf("%s: hard link to %q != %q", a.Path, linksA[a.Path], linksB[b.Path]))
			}
			i++
			j++
		}
	}
	return d
}

// compareEntries lists field differences between two entries of one path.
func compareEntries(a, b Entry, o DiffOptions) []string {
	var d []string
	if a.Type != b.Type {
		return []string{fmt.Sprintf("type %s != %s", a.Type, b.Type)}
	}
	if a.Mode != b.Mode {
		d = append(d, fmt.Sprintf("mode %#o != %#o", a.Mode, b.Mode))
	}
	if a.Size != b.Size && !(o.IgnoreDirSize && a.Type == TypeDir) {
		d = append(d, fmt.Sprintf("size %d != %d", a.Size, b.Size))
	}
	if a.Nlink != b.Nlink {
		d = append(d, fmt.Sprintf("nlink %d != %d", a.Nlink, b.Nlink))
	}
	if a.Ino != b.Ino && !o.IgnoreIno {
		d = append(d, fmt.Sprintf("ino %d != %d", a.Ino, b.Ino))
	}
	if a.UID != b.UID || a.GID != b.GID {
		d = append(d, fmt.Sprintf("owner %d:%d != %d:%d", a.UID, a.GID, b.UID, b.GID))
	}
	if a.SHA256 != b.SHA256 {
		d = append(d, fmt.Sprintf("sha256 %.12s != %.12s", a.SHA256, b.SHA256))
	}
	if a.Target != b.Target {
		d = append(d, fmt.Sprintf("target %s != %s", short(a.Target), short(b.Target)))
	}
	names := make(map[string]bool)
	for k := range a.Xattrs {
		names[k] = true
	}
	for k := range b.Xattrs {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		va, ina := a.Xattrs[k]
		vb, inb := b.Xattrs[k]
		switch {
		case !inb:
			d = append(d, fmt.Sprintf("xattr %s missing from other", k))
		case !ina:
			d = append(d, fmt.Sprintf("unexpected xattr %s in other", k))
		case va != vb:
			d = append(d, fmt.Sprintf("xattr %s value %s (%d bytes) != %s (%d bytes)", k, short(va), len(va), short(vb), len(vb)))
		}
	}
	return d
}

// short quotes s, cut to a readable length.
func short(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q...", s[:40])
	}
	return fmt.Sprintf("%q", s)
}

// linkGroups maps each non-directory path whose inode has several names to
// the first of those names (in path order); other paths map to "".
func (s Snapshot) linkGroups() map[string]string {
	first := make(map[uint64]string)
	m := make(map[string]string)
	for _, e := range s {
		if e.Type == TypeDir || e.Nlink < 2 {
			continue
		}
		if p, ok := first[e.Ino]; ok {
			m[e.Path] = p
		} else {
			first[e.Ino] = e.Path
			m[e.Path] = e.Path
		}
	}
	return m
}
