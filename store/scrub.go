package store

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/store/checksum"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// The scrubber's store side (package doc, "Scrub"): a pass is the
// engine's metadata scrub (xfs.Space.Scrub) in bounded batches, then every
// bucket's objects, all versions, a page at a time, each read whole and
// checked against what is stored with it: the ETag when it is the MD5 of
// the content, each part's MD5 and checksum for an object completed from
// parts, and the full-object checksum. A mismatch marks the object
// rotten; GetObject of a rotten object fails with ErrObjectCorrupt.
//
// The marks are kept in the system file scrub-rotten, not on the objects:
// an xattr could not be set on an object under object lock (its inode is
// immutable) nor on one whose inode is sick, and would count as a change
// of the object. A mark names the inode it was found in by number,
// generation and birth time, so an object overwritten (a new inode) or
// deleted (a freed one) no longer matches it: the mark is dropped the
// next time the marks are listed.

// ErrObjectCorrupt: the object's bytes no longer match the checksums
// stored with it (the scrubber found it rotten); it is not served.
var ErrObjectCorrupt = errors.New("object data is corrupt: its bytes do not match its stored checksums")

// Scrub is the role of a Store the scrubber (gc.Scrubber) drives.
type Scrub struct{ *store }

// Scrub returns the store's scrub role.
func (s *Store) Scrub() Scrub { return Scrub{s.store} }

var _ gc.Scrubbable = Scrub{}

// Bounds of a batch (tests lower them): engine work (xfs.Space.Scrub's
// budget), object versions, and bytes read.
var (
	scrubMetaBudget  = xfs.DefaultScrubBudget
	scrubObjectBatch = 64
	scrubBatchBytes  = int64(64 << 20)
)

// System files of the scrubber.
const (
	scrubCursorFile = "scrub-cursor"
	scrubRotFile    = "scrub-rotten"
)

// scrubCursor is where a pass stands: in the metadata (Meta), or in
// Bucket's versions after (Key, Version).
type scrubCursor struct {
	Phase   string          `json:"phase"`
	Meta    xfs.ScrubCursor `json:"meta"`
	Bucket  string          `json:"bucket,omitempty"`
	Key     string          `json:"key,omitempty"`
	Version string          `json:"version,omitempty"`
}

const (
	scrubPhaseMeta    = "metadata"
	scrubPhaseObjects = "objects"
)

// SaveCursor keeps a pass's cursor in .xfs3/config; it is the store's
// own work, not a client's change (settleQuietly).
func (r Scrub) SaveCursor(cursor string) (err error) {
	defer r.settleQuietly(&err)
	return SystemFiles{r.store}.write(scrubCursorFile, []byte(cursor))
}

// LoadCursor reads the cursor SaveCursor kept ("" when none).
func (r Scrub) LoadCursor() (string, error) {
	b, err := SystemFiles{r.store}.Read(scrubCursorFile)
	if errors.Is(err, ErrNoSuchSystemFile) {
		return "", nil
	}
	return string(b), err
}

// ScrubBatch does one batch of a pass.
func (r Scrub) ScrubBatch(ctx context.Context, cursor string) (string, gc.ScrubCounts, error) {
	var c gc.ScrubCounts
	var cur scrubCursor
	if cursor != "" && json.Unmarshal([]byte(cursor), &cur) != nil {
		cur = scrubCursor{} // undecodable: start over
	}
	switch cur.Phase {
	case "", scrubPhaseMeta:
		b, err := r.v.Space().Scrub(ctx, cur.Meta, scrubMetaBudget)
		c.AGHeaders, c.Blocks, c.Inodes, c.SickStructures = b.AGHeaders, b.Blocks, b.Inodes, b.Damaged
		if err != nil {
			return cursor, c, err
		}
		cur = scrubCursor{Phase: scrubPhaseMeta, Meta: b.Next}
		if b.Next.Done {
			cur = scrubCursor{Phase: scrubPhaseObjects, Bucket: r.nextBucket("")}
		}
	default:
		done, err := r.objects(ctx, &cur, &c)
		if err != nil {
			return cursor, c, err
		}
		if done {
			cur = scrubCursor{Phase: scrubPhaseObjects, Bucket: r.nextBucket(cur.Bucket)}
		}
	}
	if cur.Phase == scrubPhaseObjects && cur.Bucket == "" {
		return "", c, nil
	}
	next, err := json.Marshal(cur)
	return string(next), c, err
}

// nextBucket returns the first bucket after after by name ("" none).
func (r Scrub) nextBucket(after string) string {
	buckets, err := (&Store{r.store}).ListBuckets()
	if err != nil {
		return ""
	}
	for _, b := range buckets {
		if b.Name > after {
			return b.Name
		}
	}
	return ""
}

// objects checks a page of the cursor's bucket's versions after the
// cursor; done when the listing ended.
func (r Scrub) objects(ctx context.Context, cur *scrubCursor, c *gc.ScrubCounts) (done bool, err error) {
	page, err := r.listVersions(cur.Bucket, VersionListOptions{KeyMarker: cur.Key, VersionIDMarker: cur.Version, MaxKeys: scrubObjectBatch})
	if errors.Is(err, ErrNoSuchBucket) {
		return true, nil
	}
	if errors.Is(err, ErrSick) {
		// The listing meets sick metadata (a prefix's directory, an
		// object's inode), which the metadata phase has listed: as with
		// an unreadable object the pass goes on, to the next bucket, as
		// the listing cannot get past the damage. The rest of this
		// bucket's objects are not read this pass.
		c.Errors++
		return true, nil
	}
	if err != nil {
		return false, err
	}
	var found []RottenObject
	defer func() {
		if len(found) > 0 {
			if serr := r.rot.add(r.store, found); err == nil {
				err = serr
			}
		}
	}()
	for i, v := range page.Versions {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if !v.DeleteMarker {
			mark, n, verr := r.checkObject(cur.Bucket, v)
			c.Bytes += n
			switch {
			case verr != nil && !errors.Is(verr, ErrNoSuchKey):
				c.Errors++ // unreadable (sick metadata, I/O): the pass goes on
			case verr == nil:
				c.Objects++
			}
			if mark != nil {
				c.Rotten++
				found = append(found, *mark)
			}
		}
		cur.Key, cur.Version = v.Key, v.VersionID
		if c.Bytes >= scrubBatchBytes && i+1 < len(page.Versions) {
			return false, nil
		}
	}
	return !page.IsTruncated, nil
}

// checkObject reads version v of an object whole and checks it; it
// returns the mark of a rotten one and the bytes read.
func (r Scrub) checkObject(bucket string, v ObjectInfo) (*RottenObject, int64, error) {
	info, h, isFile, err := r.head(bucket, v.Key, v.VersionID)
	if err != nil {
		return nil, 0, err
	}
	defer h.Close()
	if !isFile {
		return nil, 0, nil // a folder marker kept on its directory: no bytes
	}
	ino := h.Ino()
	parts, err := readParts(r.v, ino)
	if err != nil {
		return nil, 0, err
	}
	sums := info.Meta.Checksums
	var alg *checksum.Algorithm
	for _, a := range checksum.All {
		if sums.Value(a) != "" {
			alg = a
			break
		}
	}
	if alg == nil && sums.Algorithm != "" {
		alg, _ = checksum.Lookup(sums.Algorithm)
	}
	// What the whole content must hash to.
	var whole []digestCheck
	if len(info.ETag) == 32 && isHexDigest(info.ETag) {
		whole = append(whole, digestCheck{"ETag (MD5)", md5.New(), info.ETag, true})
	}
	if alg != nil && sums.Value(alg) != "" && sums.Type != string(checksum.Composite) {
		whole = append(whole, digestCheck{alg.Name() + " checksum", alg.New(), sums.Value(alg), false})
	}
	// And each part, at its offset.
	var off int64
	for i := range parts {
		parts[i].Offset = off
		off += parts[i].Size
	}
	if len(parts) > 0 && off != info.Size {
		parts = nil // a parts record that does not add up is not evidence
	}
	buf := make([]byte, 1<<20)
	var pos int64
	pi := 0
	var partChecks []digestCheck
	startPart := func() {
		partChecks = partChecks[:0]
		p := parts[pi]
		if len(p.ETag) == 32 && isHexDigest(p.ETag) {
			partChecks = append(partChecks, digestCheck{fmt.Sprintf("part %d ETag (MD5)", p.PartNumber), md5.New(), p.ETag, true})
		}
		if alg != nil && p.Checksum != "" {
			partChecks = append(partChecks, digestCheck{fmt.Sprintf("part %d %s checksum", p.PartNumber, alg.Name()), alg.New(), p.Checksum, false})
		}
	}
	var bad string
	endPart := func() {
		for _, ck := range partChecks {
			if !ck.ok() && bad == "" {
				bad = ck.what
			}
		}
	}
	if len(parts) > 0 {
		startPart()
	}
	for pos < info.Size {
		n := int(min(int64(len(buf)), info.Size-pos))
		if len(parts) > 0 {
			n = int(min(int64(n), parts[pi].Offset+parts[pi].Size-pos))
		}
		got, err := r.v.Files().ReadAt(ino, buf[:n], pos)
		if err != nil && !(errors.Is(err, io.EOF) && got == n) {
			return nil, pos, err
		}
		for _, ck := range whole {
			ck.h.Write(buf[:n])
		}
		for _, ck := range partChecks {
			ck.h.Write(buf[:n])
		}
		pos += int64(n)
		if len(parts) > 0 && pos == parts[pi].Offset+parts[pi].Size {
			endPart()
			if pi++; pi < len(parts) {
				startPart()
			}
		}
	}
	for _, ck := range whole {
		if !ck.ok() && bad == "" {
			bad = ck.what
		}
	}
	if bad == "" {
		return nil, pos, nil
	}
	st, err := r.v.Stat(ino)
	if err != nil {
		return nil, pos, err
	}
	return &RottenObject{Bucket: bucket, Key: v.Key, VersionID: v.VersionID, Reason: bad + " does not match the bytes",
		Found: time.Now().UTC(), Ino: uint64(ino), Gen: st.Gen, Born: st.Crtime.UnixNano()}, pos, nil
}

// digestCheck is one digest a content must have.
type digestCheck struct {
	what string
	h    hash.Hash
	want string
	hex  bool // want is lowercase hex, else base64 (x-amz-checksum-*)
}

func (c digestCheck) ok() bool {
	sum := c.h.Sum(nil)
	if c.hex {
		return hex.EncodeToString(sum) == c.want
	}
	return checksum.WithoutPartCount(c.want) == encodeBase64(sum)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func isHexDigest(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// RottenObject is an object version the scrubber found rotten.
type RottenObject struct {
	Bucket    string    `json:"bucket"`
	Key       string    `json:"key"`
	VersionID string    `json:"version_id,omitempty"`
	Reason    string    `json:"reason"`
	Found     time.Time `json:"found"`
	// The inode the bytes were read from: number, generation and birth
	// time (Unix ns); a mark applies only while they still match.
	Ino  uint64 `json:"ino"`
	Gen  uint32 `json:"gen"`
	Born int64  `json:"born"`
}

// rotState is the store's rotten marks, loaded from scrub-rotten on
// first use; n lets GetObject skip the map while there are none.
type rotState struct {
	load  sync.Once
	mu    sync.Mutex // guards marks and file writes
	marks map[format.Ino]RottenObject
	n     atomic.Int64
}

// ensure loads the marks once; a file that does not decode is taken as
// no marks (the next scrub finds the objects again).
func (rs *rotState) ensure(s *store) {
	rs.load.Do(func() {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.marks = map[format.Ino]RottenObject{}
		b, err := SystemFiles{s}.Read(scrubRotFile)
		if err != nil {
			return
		}
		var list []RottenObject
		if json.Unmarshal(b, &list) != nil {
			return
		}
		for _, m := range list {
			rs.marks[format.Ino(m.Ino)] = m
		}
		rs.n.Store(int64(len(rs.marks)))
	})
}

// add records marks and saves them all.
func (rs *rotState) add(s *store, found []RottenObject) (err error) {
	rs.ensure(s)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, m := range found {
		rs.marks[format.Ino(m.Ino)] = m
	}
	rs.n.Store(int64(len(rs.marks)))
	return rs.saveLocked(s)
}

func (rs *rotState) saveLocked(s *store) (err error) {
	list := make([]RottenObject, 0, len(rs.marks))
	for _, m := range rs.marks {
		list = append(list, m)
	}
	slices.SortFunc(list, func(a, b RottenObject) int {
		if a.Bucket != b.Bucket {
			return cmpString(a.Bucket, b.Bucket)
		}
		if a.Key != b.Key {
			return cmpString(a.Key, b.Key)
		}
		return cmpString(a.VersionID, b.VersionID)
	})
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	defer s.settleQuietly(&err)
	return SystemFiles{s}.write(scrubRotFile, b)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// markCurrent reports whether mark m still applies to the inode it names.
func (s *store) markCurrent(m RottenObject) bool {
	st, err := s.v.Stat(format.Ino(m.Ino))
	return err == nil && st.Nlink > 0 && st.Gen == m.Gen && st.Crtime.UnixNano() == m.Born
}

// refuseRotten fails with ErrObjectCorrupt when open object o is marked
// rotten.
func (s *store) refuseRotten(o *Object) error {
	if o.ino == 0 {
		return nil
	}
	s.rot.ensure(s)
	if s.rot.n.Load() == 0 {
		return nil
	}
	s.rot.mu.Lock()
	m, ok := s.rot.marks[o.ino]
	s.rot.mu.Unlock()
	if !ok || !s.markCurrent(m) {
		return nil
	}
	return fmt.Errorf("bucket %q key %q version %q: %s: %w", m.Bucket, m.Key, m.VersionID, m.Reason, ErrObjectCorrupt)
}

// Rotten lists the objects known rotten, by bucket, key and version;
// marks of objects since overwritten or deleted are dropped.
func (r Scrub) Rotten() ([]RottenObject, error) {
	r.rot.ensure(r.store)
	r.rot.mu.Lock()
	defer r.rot.mu.Unlock()
	var out []RottenObject
	stale := false
	for ino, m := range r.rot.marks {
		if !r.markCurrent(m) {
			delete(r.rot.marks, ino)
			stale = true
			continue
		}
		out = append(out, m)
	}
	r.rot.n.Store(int64(len(r.rot.marks)))
	slices.SortFunc(out, func(a, b RottenObject) int {
		if a.Bucket != b.Bucket {
			return cmpString(a.Bucket, b.Bucket)
		}
		if a.Key != b.Key {
			return cmpString(a.Key, b.Key)
		}
		return cmpString(a.VersionID, b.VersionID)
	})
	if stale {
		return out, r.rot.saveLocked(r.store)
	}
	return out, nil
}

// The scrubber's types as the layers above see them (package gc owns
// them).
type (
	ScrubPass   = gc.ScrubPass
	ScrubStatus = gc.ScrubStatus
	ScrubCounts = gc.ScrubCounts
)

// Start asks the scrubber for a pass now (gc.Scrubber.Start).
func (r Scrub) Start() (ScrubPass, error) { return r.scrubber.Start() }

// Status is the scrubber's pass under way, last pass and totals.
func (r Scrub) Status() ScrubStatus { return r.scrubber.Status() }
