package store

import (
	"context"
	"slices"
	"strings"

	"github.com/xfs3/xfs3/xfs/format"
)

// FindSick places, by a walk of the volume's directories, the sick inodes
// Health can place no better than by their bucket, or not at all: a file
// no store operation met (found by its project ID alone, and not even by
// that when its core is the damaged part) and a directory whose ".."
// entry cannot be read (it lies in the damaged block, or the hash index
// that finds it is damaged). The walk looks for the directory entry that
// names each; it reads every directory of the volume, which costs what a
// listing of every key costs: it is for a check of a stopped volume
// (xfs3 vol check), not for a server, whose requests place what they
// meet. Directories that cannot be read are skipped. What it finds,
// Health reports from then on.
func (s *Store) FindSick(ctx context.Context) error {
	want := map[format.Ino]bool{}
	for _, x := range s.Health().Sick {
		if x.Kind == "inode" && x.Place == PlaceUnknown {
			want[x.Ino] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	found, err := s.findEntries(ctx, want)
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return err
	}
	if h.hints == nil {
		h.hints = map[format.Ino]place{}
	}
	for ino, p := range found {
		if old, ok := h.hints[ino]; !ok || old.path == "" {
			h.hints[ino] = p
		}
	}
	return err
}

// findEntries walks the directories from the root, depth first, for the
// entries naming the inodes of want, and returns the place of each found.
func (s *store) findEntries(ctx context.Context, want map[format.Ino]bool) (map[format.Ino]place, error) {
	type dir struct {
		ino   format.Ino
		names []string // the path from the root, and the inode each names
		inos  []format.Ino
	}
	found := map[format.Ino]place{}
	stack := []dir{{ino: s.v.Root()}}
	seen := map[format.Ino]bool{s.v.Root(): true} // a loop in damaged metadata
	for len(stack) > 0 && len(found) < len(want) {
		if err := ctx.Err(); err != nil {
			return found, err
		}
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := s.v.Names().ReadDir(d.ino)
		if err != nil {
			continue // sick: the entries it holds are not reached
		}
		for _, e := range ents {
			names, inos := append(slices.Clip(d.names), e.Name), append(slices.Clip(d.inos), e.Ino)
			isDir := e.Type == format.FTDir
			if _, ok := found[e.Ino]; want[e.Ino] && !ok {
				found[e.Ino] = s.placeOfEntry(names, inos, isDir)
			}
			if isDir && !seen[e.Ino] && len(names) < maxDepth {
				seen[e.Ino] = true
				stack = append(stack, dir{e.Ino, names, inos})
			}
		}
	}
	return found, nil
}

// placeOfEntry is the place of what the last of names (a path from the
// root, with the inode each names) names: a directory's as placeOfPath
// finds it; a file's is its directory's, and in a bucket's tree the
// object whose key its path holds.
func (s *store) placeOfEntry(names []string, inos []format.Ino, isDir bool) place {
	if isDir {
		return s.placeOfPath(names, inos)
	}
	n := len(names)
	p := s.placeOfPath(names[:n-1], inos[:n-1])
	p.path = strings.TrimSuffix(p.path, "/") + "/" + names[n-1]
	switch p.place {
	case PlaceBucket, PlacePrefix:
		if key, whole := s.decodePath(names[1:], inos[1:]); whole {
			p.place, p.prefix = PlaceObject, strings.TrimSuffix(key, "/")
		} else {
			p.place, p.prefix = PlaceUnknown, "" // made by other tools: no key
		}
	case PlaceVolume:
		p.place = PlaceUnknown // a file in the root: no bucket's
	}
	return p
}
