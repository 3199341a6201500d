package store

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Health. The engine marks a structure sick when one of its metadata
// blocks fails verification (xfs.SickStructure: an inode, or an AG) and
// refuses every change that would touch it. The store says where such a
// structure lies: the bucket and key prefix of a directory, the key of
// an object, a system directory. A directory is found by walking ".."
// up to the root, or, when ".." is in the damaged block, from the path
// of the store operation that met the damage (those operations record
// it: noteSick); an object's file by that operation, else its bucket by
// its project ID. Operations that fail for it return a *SickError.

// ErrSick is the engine's: the operation needs a structure marked sick
// (its metadata failed verification); the volume needs xfs_repair.
var ErrSick = xfs.ErrSick

// Places of a sick structure (SickStructure.Place).
const (
	PlaceBucket   = "bucket"   // a bucket's own directory
	PlacePrefix   = "prefix"   // the directory of a key prefix (Prefix)
	PlaceObject   = "object"   // an object's file (Prefix is its key)
	PlaceVersions = "versions" // in the bucket's versions tree (Prefix: the key or prefix)
	PlaceSystem   = "system"   // under /.xfs3 (Path), an upload's directory when Bucket is set
	PlaceVolume   = "volume"   // the root directory, or an AG (space of every bucket)
	PlaceQuota    = "quota"    // quota records of buckets (Buckets)
	PlaceUnknown  = "unknown"
)

// Health states (Health.State).
const (
	HealthOK       = "ok"
	HealthDegraded = "degraded" // some structure is sick; the rest serves
)

// SickStructure is a structure the engine marked sick, and where it lies
// in the store.
type SickStructure struct {
	xfs.SickStructure
	Place  string
	Bucket string // "" when none or unknown
	// Prefix is the key prefix of a directory ("a/b/", "" for the
	// bucket's own), or the key of an object.
	Prefix string
	Path   string // from the volume's root, as a mount shows it; "" when unknown
	// Buckets are the buckets whose quota records a sick quota file block
	// holds (PlaceQuota): their writes are refused.
	Buckets []string
}

// Describe names the structure for people: what it is and where.
func (s SickStructure) Describe() string {
	var what string
	switch s.Place {
	case PlaceBucket:
		what = fmt.Sprintf("the directory of bucket %q", s.Bucket)
	case PlacePrefix:
		what = fmt.Sprintf("the directory of prefix %q in bucket %q", s.Prefix, s.Bucket)
	case PlaceObject:
		what = fmt.Sprintf("object %q in bucket %q", s.Prefix, s.Bucket)
	case PlaceVersions:
		what = fmt.Sprintf("the versions of %q in bucket %q", s.Prefix, s.Bucket)
	case PlaceSystem:
		what = "the system directory " + s.Path
	case PlaceQuota:
		what = fmt.Sprintf("the quota records of projects %d to %d", s.Projects[0], s.Projects[1])
		switch len(s.Buckets) {
		case 0:
		case 1:
			what += fmt.Sprintf(", of bucket %q", s.Buckets[0])
		default:
			quoted := make([]string, len(s.Buckets))
			for i, b := range s.Buckets {
				quoted[i] = strconv.Quote(b)
			}
			what += ", of buckets " + strings.Join(quoted, ", ")
		}
		return fmt.Sprintf("%s (quota file block %d, %s: %s)", what, s.QuotaBlock, s.Structure, s.Reason)
	case PlaceVolume:
		if s.Kind == "ag" {
			return fmt.Sprintf("allocation group %d (%s: %s)", s.AG, s.Structure, s.Reason)
		}
		what = "the volume's root directory"
	default:
		if s.Bucket != "" {
			what = fmt.Sprintf("a file of bucket %q", s.Bucket)
		} else {
			what = "a structure of unknown place"
		}
	}
	return fmt.Sprintf("%s (inode %d, %s: %s)", what, s.Ino, s.Structure, s.Reason)
}

// Health is the store's health: State, and the sick structures.
type Health struct {
	State string
	Sick  []SickStructure
}

// SickError is an operation's failure on a sick structure: errors.Is
// ErrSick. Damage is the structure, when the store found it.
type SickError struct {
	Bucket string
	Damage *SickStructure
	err    error
}

func (e *SickError) Error() string { return e.Message() + ": " + e.err.Error() }
func (e *SickError) Unwrap() error { return e.err }

// Message says what needs repair, without the engine's detail.
func (e *SickError) Message() string {
	what := "metadata it needs failed verification"
	if e.Damage != nil {
		what = e.Damage.Describe() + " failed verification"
	}
	subject := "The volume"
	if e.Bucket != "" {
		subject = fmt.Sprintf("Bucket %q", e.Bucket)
	}
	return subject + " needs repair: " + what + "; changes to it are refused until the stopped volume is repaired with xfs_repair."
}

// sickID is a sick structure's identity.
type sickID struct {
	kind string
	num  uint64
}

func idOf(s xfs.SickStructure) sickID {
	switch s.Kind {
	case "ag":
		return sickID{s.Kind, uint64(s.AG)}
	case "quota":
		return sickID{s.Kind, s.QuotaBlock}
	}
	return sickID{"inode", uint64(s.Ino)}
}

// place is where a structure lies (the SickStructure fields past the
// engine's).
type place struct {
	place, bucket, prefix, path string
	buckets                     []string
}

// healthState is the store's record of sick structures.
type healthState struct {
	// mu guards below. It is held while places are resolved (engine
	// calls, upMu), so it is taken with no other store lock held.
	mu     sync.Mutex
	closed bool
	// places are the resolved places; hints the places operations
	// found for inodes (noteSick), used when ".." fails.
	places   map[sickID]place
	hints    map[format.Ino]place
	reported map[sickID]bool
	onSick   func(SickStructure)
}

// sickReportDelay is how long a structure the engine reports sick waits
// before the store resolves and reports it: the operation that met the
// damage records its path meanwhile (and reports it at once).
const sickReportDelay = 200 * time.Millisecond

// engineSick is the engine's OnSick. It runs under engine locks, so it
// only schedules the report.
func (s *store) engineSick(xfs.SickStructure) {
	time.AfterFunc(sickReportDelay, s.reportSick)
}

// reportSick resolves the structures not yet reported and hands them to
// Options.OnSick, each once.
func (s *store) reportSick() {
	h := &s.health
	h.mu.Lock()
	if h.closed || h.onSick == nil {
		h.mu.Unlock()
		return
	}
	var fresh []SickStructure
	for _, x := range s.v.Sick() {
		id := idOf(x)
		if h.reported[id] {
			continue
		}
		if h.reported == nil {
			h.reported = map[sickID]bool{}
		}
		h.reported[id] = true
		fresh = append(fresh, s.locateLocked(x))
	}
	onSick := h.onSick
	h.mu.Unlock()
	for _, x := range fresh {
		onSick(x)
	}
}

// closeHealth stops reports: the volume is about to close.
func (s *store) closeHealth() {
	s.health.mu.Lock()
	s.health.closed = true
	s.health.mu.Unlock()
}

// Health lists the sick structures with their places.
func (s *Store) Health() Health {
	sick := s.v.Sick()
	out := Health{State: HealthOK, Sick: make([]SickStructure, 0, len(sick))}
	if len(sick) == 0 {
		return out
	}
	out.State = HealthDegraded
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range sick {
		if h.closed {
			out.Sick = append(out.Sick, SickStructure{SickStructure: x, Place: PlaceUnknown})
			continue
		}
		out.Sick = append(out.Sick, s.locateLocked(x))
	}
	return out
}

// SickKinds are the kinds of sick structures, as SickCounts counts them.
var SickKinds = [...]string{"ag", "inode", "quota"}

// SickCounts counts the sick structures by kind (SickKinds), without
// looking for their places: for metrics and probes.
func (s *Store) SickCounts() map[string]int {
	out := make(map[string]int, len(SickKinds))
	for _, x := range s.v.Sick() {
		out[x.Kind]++
	}
	return out
}

// locateLocked finds x's place, remembering what it found; h.mu is held.
func (s *store) locateLocked(x xfs.SickStructure) SickStructure {
	h := &s.health
	id := idOf(x)
	out := SickStructure{SickStructure: x}
	if p, ok := h.places[id]; ok {
		out.Place, out.Bucket, out.Prefix, out.Path, out.Buckets = p.place, p.bucket, p.prefix, p.path, p.buckets
		return out
	}
	p := place{place: PlaceUnknown}
	if x.Kind == "ag" {
		p = place{place: PlaceVolume}
	} else if x.Kind == "quota" {
		p = s.placeOfQuota(x.Projects)
	} else if hint, ok := h.hints[x.Ino]; ok {
		p = hint
	} else {
		p = s.placeOfInode(x.Ino)
	}
	if p.place != PlaceUnknown {
		if h.places == nil {
			h.places = map[sickID]place{}
		}
		h.places[id] = p // an unknown one is looked for again
	}
	out.Place, out.Bucket, out.Prefix, out.Path, out.Buckets = p.place, p.bucket, p.prefix, p.path, p.buckets
	return out
}

// placeOfQuota is the place of a quota file block holding the records of
// projects ids[0] to ids[1]: the buckets of those projects.
func (s *store) placeOfQuota(ids [2]uint32) place {
	p := place{place: PlaceQuota}
	bs, err := bucketDirs(s.v)
	if err != nil {
		return p
	}
	for _, b := range bs {
		if b.project >= ids[0] && b.project <= ids[1] {
			p.buckets = append(p.buckets, b.name)
		}
	}
	if len(p.buckets) == 1 {
		p.bucket = p.buckets[0]
	}
	return p
}

// maxDepth bounds the walk up ".." (a loop in damaged metadata).
const maxDepth = 1 << 10

// placeOfInode finds inode ino's place from the volume alone: a
// directory by its path (".." up to the root), a file by its project.
func (s *store) placeOfInode(ino format.Ino) place {
	st, err := s.v.Stat(ino)
	if err != nil {
		return place{place: PlaceUnknown}
	}
	if st.IsDir() {
		if names, inos, ok := s.pathOf(ino); ok {
			return s.placeOfPath(names, inos)
		}
	}
	if st.ProjID != 0 {
		if bs, err := bucketDirs(s.v); err == nil {
			for _, b := range bs {
				if b.project == st.ProjID {
					return place{place: PlaceUnknown, bucket: b.name}
				}
			}
		}
	}
	return place{place: PlaceUnknown}
}

// pathOf walks from directory ino up to the root: the names of the path
// from the root and the inode each names.
func (s *store) pathOf(ino format.Ino) (names []string, inos []format.Ino, ok bool) {
	root := s.v.Root()
	cur := ino
	for range maxDepth {
		if cur == root {
			return names, inos, true
		}
		parent, err := s.v.Names().Lookup(cur, "..")
		if err != nil || parent == cur {
			return nil, nil, false
		}
		ents, err := s.v.Names().ReadDir(parent)
		if err != nil {
			return nil, nil, false
		}
		found := false
		for _, e := range ents {
			if e.Ino == cur {
				names = append([]string{e.Name}, names...)
				inos = append([]format.Ino{cur}, inos...)
				found = true
				break
			}
		}
		if !found {
			return nil, nil, false
		}
		cur = parent
	}
	return nil, nil, false
}

// placeOfPath maps a path from the root (names, with the inode each
// names) to a place, decoding key components as listings do.
func (s *store) placeOfPath(names []string, inos []format.Ino) place {
	p := place{path: "/" + strings.Join(names, "/")}
	switch {
	case len(names) == 0:
		p.path, p.place = "/", PlaceVolume
		return p
	case names[0] == SysDir:
		p.place = PlaceSystem
		if len(names) >= 3 && names[1] == uploadsDir {
			s.upMu.Lock()
			if u := s.uploads[names[2]]; u != nil {
				p.bucket, p.prefix = u.info.Bucket, u.info.Key
			}
			s.upMu.Unlock()
		}
		return p
	case checkBucketName(names[0]) != nil:
		p.place = PlaceUnknown // made by other tools: no bucket
		return p
	}
	p.bucket, p.place = names[0], PlaceBucket
	rest, restInos := names[1:], inos[1:]
	if len(rest) > 0 && rest[0] == versionsDir {
		p.place = PlaceVersions
		rest, restInos = rest[1:], restInos[1:]
	} else if len(rest) > 0 {
		p.place = PlacePrefix
	}
	p.prefix, _ = s.decodePath(rest, restInos)
	return p
}

// decodePath decodes the names of directories below a bucket's (with the
// inode each names) into the key prefix they hold; whole is false when a
// name is not of the documented forms, and prefix then is the prefix up
// to it.
func (s *store) decodePath(names []string, inos []format.Ino) (prefix string, whole bool) {
	for i, name := range names {
		ino := inos[i]
		c, beside, ok := decodeName(name, func() (string, bool) {
			v, err := s.v.Xattrs().Get(ino, xattrName)
			return string(v), err == nil
		})
		if !ok {
			return prefix, false
		}
		prefix += c
		if !beside {
			prefix += "/" // beside: a key's versions directory
		}
	}
	return prefix, true
}

// noteSick runs at the end of a store operation on bucket and key (a
// key prefix for listings; "" for bucket operations): when the
// operation failed on a sick structure, it records the operation's path
// for the structures it finds on it, reports them, and wraps the error
// in a *SickError naming the damage.
func (s *store) noteSick(bucket, key string, errp *error) {
	err := *errp
	if err == nil || !errors.Is(err, ErrSick) {
		return
	}
	var se *SickError
	if errors.As(err, &se) {
		return // an inner operation noted it
	}
	var ce *format.CorruptError
	var found format.Ino
	if errors.As(err, &ce) {
		found = ce.Ino
	}
	sick := s.v.Sick()
	s.hintPath(bucket, key, found, sick)
	s.reportSick()
	out := &SickError{Bucket: bucket, err: err}
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		*errp = out
		return
	}
	// The structure the error names, else one on the operation's path.
	var best *SickStructure
	for _, x := range sick {
		if x.Kind == "quota" && bucket != "" && best == nil {
			if l := s.locateLocked(x); slices.Contains(l.Buckets, bucket) {
				best = &l
			}
		}
		if x.Kind != "inode" {
			continue
		}
		l := s.locateLocked(x)
		switch {
		case x.Ino == found:
			best = &l
		case best == nil && bucket != "" && l.Bucket == bucket && strings.HasPrefix(key, l.Prefix):
			best = &l
		}
		if best != nil && best.Ino == found {
			break
		}
	}
	if best == nil {
		for _, x := range sick {
			if l := s.locateLocked(x); l.Place == PlaceVolume {
				best = &l // the root or an AG: every bucket's
				break
			}
		}
	}
	out.Damage = best
	*errp = out
}

// hintPath records the places of the sick inodes on the path of bucket
// and key (the bucket's directory, its prefixes' directories, the
// object's file), and of found, an inode the operation met, as the
// object's when it is a file off that path.
func (s *store) hintPath(bucket, key string, found format.Ino, sick []xfs.SickStructure) {
	want := map[format.Ino]bool{}
	for _, x := range sick {
		if x.Kind == "inode" {
			want[x.Ino] = true
		}
	}
	if len(want) == 0 || checkBucketName(bucket) != nil {
		return
	}
	hints := map[format.Ino]place{}
	path := "/" + bucket
	cur, err := s.v.Names().Lookup(s.v.Root(), bucket)
	if err == nil && want[cur] {
		hints[cur] = place{place: PlaceBucket, bucket: bucket, path: path}
	}
	if err == nil && key != "" {
		comps := strings.Split(key, "/")
		prefix := ""
		for i, c := range comps {
			last := i == len(comps)-1
			if last && c == "" {
				break // a prefix ending in "/": its directories are done
			}
			name := entryName(c)
			next, err := s.v.Names().Lookup(cur, name)
			if err != nil && last {
				name = besideName(c) // an object that is also a prefix
				next, err = s.v.Names().Lookup(cur, name)
			}
			if err != nil {
				break
			}
			path += "/" + name
			if want[next] {
				st, serr := s.v.Stat(next)
				switch {
				case serr == nil && st.IsDir():
					hints[next] = place{place: PlacePrefix, bucket: bucket, prefix: prefix + c + "/", path: path}
				case last:
					hints[next] = place{place: PlaceObject, bucket: bucket, prefix: key, path: path}
				}
			}
			prefix += c + "/"
			cur = next
		}
	}
	if _, ok := hints[found]; !ok && found != 0 && want[found] {
		if st, err := s.v.Stat(found); err == nil && !st.IsDir() && key != "" {
			hints[found] = place{place: PlaceObject, bucket: bucket, prefix: key}
		}
	}
	if len(hints) == 0 {
		return
	}
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hints == nil {
		h.hints = map[format.Ino]place{}
	}
	for ino, p := range hints {
		// A listing's hint lacks the path; a place found by ".." is as
		// good as this one.
		if old, ok := h.hints[ino]; !ok || old.path == "" && p.path != "" {
			h.hints[ino] = p
			if old, ok := h.places[sickID{"inode", uint64(ino)}]; ok && old.path == "" {
				delete(h.places, sickID{"inode", uint64(ino)})
			}
		}
	}
}

// noteSickDir records the place of directory ino, met at key prefix
// prefix of bucket by a listing.
func (s *store) noteSickDir(bucket, prefix string, ino format.Ino, err error) {
	var ce *format.CorruptError
	if !errors.Is(err, ErrSick) || !errors.As(err, &ce) || ce.Ino != ino {
		return // not this directory's own damage
	}
	p := place{place: PlacePrefix, bucket: bucket, prefix: prefix}
	if prefix == "" {
		p.place = PlaceBucket
	}
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hints == nil {
		h.hints = map[format.Ino]place{}
	}
	if _, ok := h.hints[ino]; !ok {
		h.hints[ino] = p
	}
}
