package store

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Xattrs of an object made by CompleteMultipartUpload (see the package doc).
const (
	// xattrFromUpload is the ID of the upload the object was completed
	// from: a repeated completion of it answers as the first did.
	xattrFromUpload = xattrPrefix + "upload-id"
	// xattrParts holds the part numbers and sizes as runs
	// "first[-last]:size,..." (parts first..last, consecutive numbers of
	// one size); values longer than partsChunk continue in
	// user.xfs3.parts.2, .3, ... (an xattr value holds at most 64 KiB).
	xattrParts = xattrPrefix + "parts"
)

// partsChunk bounds one xattr of the part list; tests lower it to spill
// with few parts.
var partsChunk = 48 << 10

// ObjectPart is one part of a completed multipart object, where its bytes
// are in the object.
type ObjectPart struct {
	Number int   // the part number it was uploaded and completed as
	Offset int64 // of its first byte in the object
	Size   int64
}

// partsXattrName is the name of chunk i (from 0) of the part list.
func partsXattrName(i int) string {
	if i == 0 {
		return xattrParts
	}
	return xattrParts + "." + strconv.Itoa(i+1)
}

// encodeParts writes the part list as runs, split into chunks of at most
// limit bytes at run boundaries.
func encodeParts(parts []ObjectPart, limit int) []string {
	var chunks []string
	var b strings.Builder
	for i := 0; i < len(parts); {
		j := i
		for j+1 < len(parts) && parts[j+1].Number == parts[j].Number+1 && parts[j+1].Size == parts[i].Size {
			j++
		}
		run := strconv.Itoa(parts[i].Number)
		if j > i {
			run += "-" + strconv.Itoa(parts[j].Number)
		}
		run += ":" + strconv.FormatInt(parts[i].Size, 10)
		if b.Len() > 0 && b.Len()+1+len(run) > limit {
			chunks = append(chunks, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(run)
		i = j + 1
	}
	if b.Len() > 0 {
		chunks = append(chunks, b.String())
	}
	return chunks
}

// decodeParts is the inverse of encodeParts over the joined chunks. It
// refuses anything encodeParts cannot produce: numbers out of range or
// not ascending, negative sizes, more than MaxPartNumber parts.
func decodeParts(chunks []string) ([]ObjectPart, error) {
	var parts []ObjectPart
	var off int64
	for _, chunk := range chunks {
		for run := range strings.SplitSeq(chunk, ",") {
			nums, sizeText, ok := strings.Cut(run, ":")
			if !ok {
				return nil, fmt.Errorf("part run %q has no size", run)
			}
			firstText, lastText, isRange := strings.Cut(nums, "-")
			first, err1 := strconv.Atoi(firstText)
			last := first
			var err2 error
			if isRange {
				last, err2 = strconv.Atoi(lastText)
			}
			size, err3 := strconv.ParseInt(sizeText, 10, 64)
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, fmt.Errorf("part run %q: %w", run, err)
			}
			prev := 0
			if len(parts) > 0 {
				prev = parts[len(parts)-1].Number
			}
			if first <= prev || last < first || last > MaxPartNumber || size < 0 || size > MaxPartSize {
				return nil, fmt.Errorf("part run %q out of order or range", run)
			}
			for n := first; n <= last; n++ {
				parts = append(parts, ObjectPart{Number: n, Offset: off, Size: size})
				off += size
			}
		}
	}
	return parts, nil
}

// completionXattrs adds to attrs what a completed object remembers of its
// upload: the upload ID and the parts' numbers and sizes.
func completionXattrs(attrs map[string]string, uploadID string, stored []storedPart) {
	parts := make([]ObjectPart, len(stored))
	for i, p := range stored {
		parts[i] = ObjectPart{Number: p.number, Size: p.size}
	}
	attrs[xattrFromUpload] = uploadID
	for i, chunk := range encodeParts(parts, partsChunk) {
		attrs[partsXattrName(i)] = chunk
	}
}

// readParts reads the part list of ino; nil when it was not completed
// from an upload, or when the list does not parse or does not add up to
// size (set by another tool): the object is then one part.
func readParts(v *xfs.Volume, ino format.Ino, size int64) ([]ObjectPart, error) {
	var chunks []string
	for i := 0; ; i++ {
		val, err := v.GetXattr(ino, partsXattrName(i))
		if errors.Is(err, xfs.ErrNoData) {
			break
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, string(val))
	}
	if len(chunks) == 0 {
		return nil, nil
	}
	parts, err := decodeParts(chunks)
	if err != nil || len(parts) == 0 {
		return nil, nil
	}
	if last := parts[len(parts)-1]; last.Offset+last.Size != size {
		return nil, nil
	}
	return parts, nil
}

// Parts returns the parts of a multipart object in part-number order, as
// they were completed; nil for an object stored whole (PutObject,
// CopyObject, a folder marker).
func (o *Object) Parts() ([]ObjectPart, error) {
	if o.done {
		return nil, ErrClosed
	}
	if o.ino == 0 {
		return nil, nil
	}
	return readParts(o.s.v, o.ino, o.Info.Size)
}

// repeatedCompletion answers a CompleteMultipartUpload whose upload is
// gone: when the object at key was completed from that upload with the
// same part numbers and ETags, it returns the object (ok), so a client
// that retries a completion whose answer it lost gets the same result.
func (s *Store) repeatedCompletion(bucket string, kp keyPath, uploadID string, parts []CompletePart) (ObjectInfo, bool, error) {
	s.ns.RLock()
	defer s.ns.RUnlock()
	info, ino, isFile, err := s.head(bucket, kp.key)
	if errors.Is(err, ErrNoSuchKey) || (err == nil && !isFile) {
		return ObjectInfo{}, false, nil
	}
	if err != nil {
		return ObjectInfo{}, false, err
	}
	from, err := s.v.GetXattr(ino, xattrFromUpload)
	if errors.Is(err, xfs.ErrNoData) || (err == nil && string(from) != uploadID) {
		return ObjectInfo{}, false, nil
	}
	if err != nil {
		return ObjectInfo{}, false, err
	}
	stored, err := readParts(s.v, ino, info.Size)
	if err != nil || len(stored) != len(parts) {
		return ObjectInfo{}, false, err
	}
	sums := md5.New()
	for i, p := range parts {
		sum, err := hex.DecodeString(strings.Trim(p.ETag, `"`))
		if err != nil || len(sum) != md5.Size || p.PartNumber != stored[i].Number {
			return ObjectInfo{}, false, nil
		}
		sums.Write(sum)
	}
	if etag := fmt.Sprintf("%x-%d", sums.Sum(nil), len(parts)); etag != info.ETag {
		return ObjectInfo{}, false, nil
	}
	return info, true, nil
}
