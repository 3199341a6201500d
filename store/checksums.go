package store

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/store/checksum"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Checksums holds the additional checksums of an object or part, each the
// base64 of the big-endian digest as S3 sends it in x-amz-checksum-*
// (a composite one ends in "-N"); empty when not sent. MD5 is the
// x-amz-checksum-md5 one, which is kept apart from the ETag (that of a
// multipart object is not an MD5 of its content).
type Checksums struct {
	CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512 string
	XXHASH128, XXHASH3, XXHASH64                        string
	// Type is "COMPOSITE" or "FULL_OBJECT" (empty: FULL_OBJECT, the type
	// of every checksum of a single PUT).
	Type string
	// Algorithm, for a multipart upload, names the algorithm its parts
	// and its object's checksum use (CreateMultipartUpload); empty for
	// objects and parts, whose values say it.
	Algorithm string
}

// ErrInvalidChecksum: a checksum request that cannot be honoured: a part
// checksum of another algorithm than its upload's, a type the algorithm
// does not have, a Complete list without the part checksums a composite
// checksum needs.
var ErrInvalidChecksum = errors.New("invalid checksum request")

// Xattrs of checksums: user.xfs3.checksum-<algorithm, lower case> holds a
// value, and these its type and an upload's algorithm.
const (
	xattrChecksum          = xattrPrefix + "checksum-"
	xattrChecksumType      = xattrChecksum + "type"
	xattrChecksumAlgorithm = xattrChecksum + "algorithm"
)

// named pairs each checksum field with its xattr name.
func (c *Checksums) named() []attrField {
	return []attrField{
		{xattrChecksum + "crc32", &c.CRC32},
		{xattrChecksum + "crc32c", &c.CRC32C},
		{xattrChecksum + "crc64nvme", &c.CRC64NVME},
		{xattrChecksum + "md5", &c.MD5},
		{xattrChecksum + "sha1", &c.SHA1},
		{xattrChecksum + "sha256", &c.SHA256},
		{xattrChecksum + "sha512", &c.SHA512},
		{xattrChecksum + "xxhash128", &c.XXHASH128},
		{xattrChecksum + "xxhash3", &c.XXHASH3},
		{xattrChecksum + "xxhash64", &c.XXHASH64},
		{xattrChecksumType, &c.Type},
		{xattrChecksumAlgorithm, &c.Algorithm},
	}
}

// Value returns the checksum of algorithm a ("" when not set).
func (c Checksums) Value(a *checksum.Algorithm) string {
	return *c.field(a)
}

// Set sets the checksum of algorithm a.
func (c *Checksums) Set(a *checksum.Algorithm, v string) { *c.field(a) = v }

func (c *Checksums) field(a *checksum.Algorithm) *string {
	switch a {
	case checksum.CRC32:
		return &c.CRC32
	case checksum.CRC32C:
		return &c.CRC32C
	case checksum.CRC64NVME:
		return &c.CRC64NVME
	case checksum.MD5:
		return &c.MD5
	case checksum.SHA1:
		return &c.SHA1
	case checksum.SHA256:
		return &c.SHA256
	case checksum.SHA512:
		return &c.SHA512
	case checksum.XXHASH128:
		return &c.XXHASH128
	case checksum.XXHASH3:
		return &c.XXHASH3
	case checksum.XXHASH64:
		return &c.XXHASH64
	}
	// Algorithms are the package's values: another is a programming error.
	panic("store: no checksum field for algorithm " + a.Name())
}

// ChecksumReporter is a body reader that learns checksums while it is read,
// such as one that receives them in an aws-chunked trailer or computes one
// the client only named. After the body's end, PutObject and UploadPart
// store what Checksums reports in place of the values given up front.
type ChecksumReporter interface {
	Checksums() Checksums
}

// reported returns the checksums r reports once read to its end, or c when
// r reports none.
func (c Checksums) reported(r any) Checksums {
	if cr, ok := r.(ChecksumReporter); ok {
		if got := cr.Checksums(); got != (Checksums{}) {
			return got
		}
	}
	return c
}

// algorithm is the checksum algorithm of the upload, nil for none.
func (u *upload) algorithm() *checksum.Algorithm {
	a, _ := checksum.Lookup(u.info.Meta.Checksums.Algorithm)
	return a
}

// checkPartChecksums refuses the checksums of a part that do not fit its
// upload: one of another algorithm than the upload's, or none when the
// upload has one. A part of an upload without an algorithm may carry any
// (SDKs send CRC32 by default; S3 takes it), which is verified by the
// caller and kept with the part, not used for the object.
func checkPartChecksums(u *upload, sums Checksums) error {
	alg := u.algorithm()
	if alg == nil {
		return nil
	}
	for _, a := range checksum.All {
		if sums.Value(a) != "" && a != alg {
			return fmt.Errorf("checksum type mismatch: expected %s, got %s: %w", alg.Header(), a.Header(), ErrInvalidChecksum)
		}
	}
	if sums.Value(alg) == "" {
		return fmt.Errorf("upload uses %s: the part has no %s checksum: %w", alg.Name(), alg.Name(), ErrInvalidChecksum)
	}
	return nil
}

// ObjectPart is one part of a completed multipart object.
type ObjectPart struct {
	PartNumber int
	Size       int64
	ETag       string // the part's MD5, hex
	// Checksum is the part's checksum in the object's algorithm (none:
	// the upload had none).
	Checksum string
	// Offset of the part's first byte in the object (set by Object.Parts).
	Offset int64
}

// ObjectPartsResult is a page of an object's parts.
type ObjectPartsResult struct {
	Object               ObjectInfo
	Parts                []ObjectPart
	Count                int // every part of the object; 0: not a multipart object
	IsTruncated          bool
	NextPartNumberMarker int
}

// The parts of a completed multipart object are kept on it, read by
// ObjectParts: user.xfs3.parts holds their count, user.xfs3.parts.<page>
// (page 1, 2, …) partsPerPage lines "number size etag checksum" ("-" for
// no checksum), within an xattr value's 64 KiB.
const (
	xattrParts   = xattrPrefix + "parts"
	partsPerPage = 400
)

// partsXattrs adds the parts record of a completed object to attrs.
func partsXattrs(attrs map[string]string, parts []ObjectPart) {
	attrs[xattrParts] = strconv.Itoa(len(parts))
	for page := 0; page*partsPerPage < len(parts); page++ {
		var b strings.Builder
		for _, p := range parts[page*partsPerPage : min(len(parts), (page+1)*partsPerPage)] {
			sum := p.Checksum
			if sum == "" {
				sum = "-"
			}
			fmt.Fprintf(&b, "%d %d %s %s\n", p.PartNumber, p.Size, p.ETag, sum)
		}
		attrs[fmt.Sprintf("%s.%d", xattrParts, page+1)] = b.String()
	}
}

// readParts decodes the parts record of ino (nil: not a multipart object).
func readParts(v *xfs.Volume, ino format.Ino) ([]ObjectPart, error) {
	countAttr, err := v.Xattrs().Get(ino, xattrParts)
	if errors.Is(err, xfs.ErrNoData) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	count, err := strconv.Atoi(string(countAttr))
	if err != nil || count < 1 || count > MaxPartNumber {
		return nil, fmt.Errorf("parts record holds a count of %q", countAttr)
	}
	parts := make([]ObjectPart, 0, count)
	for page := 1; len(parts) < count; page++ {
		text, err := v.Xattrs().Get(ino, fmt.Sprintf("%s.%d", xattrParts, page))
		if err != nil {
			return nil, fmt.Errorf("parts record page %d: %w", page, err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
			var p ObjectPart
			if _, err := fmt.Sscanf(line, "%d %d %s %s", &p.PartNumber, &p.Size, &p.ETag, &p.Checksum); err != nil {
				return nil, fmt.Errorf("parts record line %q: %w", line, err)
			}
			if p.Checksum == "-" {
				p.Checksum = ""
			}
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// ObjectParts returns a page of the parts a multipart object was completed
// from (GetObjectAttributes), with the object's information; Count is 0
// and Parts empty for an object that was not uploaded in parts.
func (s *Store) ObjectParts(bucket, key string, opt ListPartsOptions) (ObjectPartsResult, error) {
	return s.objectParts(bucket, key, "", opt)
}

func (s *store) objectParts(bucket, key, id string, opt ListPartsOptions) (ObjectPartsResult, error) {
	info, h, isFile, err := s.head(bucket, key, id)
	if err != nil {
		return ObjectPartsResult{}, err
	}
	defer h.Close()
	ino := h.Ino()
	res := ObjectPartsResult{Object: info}
	if !isFile {
		return res, nil
	}
	all, err := readParts(s.v, ino)
	if err != nil {
		return ObjectPartsResult{}, err
	}
	res.Count = len(all)
	limit := pageSize(opt.MaxParts)
	for _, p := range all {
		if p.PartNumber <= opt.PartNumberMarker {
			continue
		}
		if len(res.Parts) == limit {
			res.IsTruncated = true
			break
		}
		res.Parts = append(res.Parts, p)
		res.NextPartNumberMarker = p.PartNumber
	}
	return res, nil
}

// uploadChecksums keeps of c what an upload keeps: its algorithm, in S3's
// spelling, and its type (the algorithm's default when not given).
func uploadChecksums(c Checksums) (Checksums, error) {
	if c.Algorithm == "" {
		return Checksums{}, nil
	}
	alg, ok := checksum.Lookup(c.Algorithm)
	if !ok {
		return Checksums{}, fmt.Errorf("checksum algorithm %q: %w", c.Algorithm, ErrInvalidChecksum)
	}
	typ := alg.DefaultType()
	if c.Type != "" {
		t, ok := checksum.ParseType(c.Type)
		if !ok || !alg.Supports(t) {
			return Checksums{}, fmt.Errorf("the %s checksum type cannot be used with the %s algorithm: %w", c.Type, alg.Header(), ErrInvalidChecksum)
		}
		typ = t
	}
	return Checksums{Algorithm: alg.Name(), Type: string(typ)}, nil
}

// objectChecksum checks the part checksums a completion lists against the
// stored ones and computes the object's checksum from the parts' (nil
// algorithm: none). A composite checksum needs every part's checksum in
// the list, as S3 demands; want is what the client expects of the object.
// It also returns the parts record kept on the object.
func objectChecksum(u *upload, listed []CompletePart, stored []storedPart, want Checksums) (Checksums, []ObjectPart, error) {
	alg := u.algorithm()
	typ := checksum.Type(u.info.Meta.Checksums.Type)
	record := make([]ObjectPart, len(stored))
	sums := make([]checksum.Part, len(stored))
	for i, sp := range stored {
		lp := listed[i]
		for _, a := range checksum.All {
			if v := lp.Checksums.Value(a); v != "" && v != sp.sums.Value(a) {
				return Checksums{}, nil, fmt.Errorf("part %d: the listed %s checksum differs from the part's: %w", sp.number, a.Name(), ErrInvalidPart)
			}
		}
		record[i] = ObjectPart{PartNumber: sp.number, Size: sp.size, ETag: fmt.Sprintf("%x", sp.md5)}
		if alg == nil {
			continue
		}
		if typ == checksum.Composite && lp.Checksums.Value(alg) == "" {
			return Checksums{}, nil, fmt.Errorf("the upload was created with a %s checksum: the complete request must list it for every part; it is missing for part %d: %w", alg.Header(), sp.number, ErrInvalidChecksum)
		}
		v := sp.sums.Value(alg)
		d, err := alg.Decode(v)
		if err != nil {
			return Checksums{}, nil, fmt.Errorf("part %d has no valid %s checksum: %w", sp.number, alg.Name(), ErrInvalidPart)
		}
		record[i].Checksum = v
		sums[i] = checksum.Part{Sum: d, Size: sp.size}
	}
	var out Checksums
	if alg != nil {
		v, err := alg.Multipart(typ, sums)
		if err != nil {
			return Checksums{}, nil, fmt.Errorf("%v: %w", err, ErrInvalidChecksum)
		}
		out.Set(alg, v)
		out.Type = string(typ)
	}
	for _, a := range checksum.All {
		v := want.Value(a)
		switch {
		case v == "":
		case a != alg:
			return Checksums{}, nil, fmt.Errorf("a %s checksum of an upload without one: %w", a.Name(), ErrInvalidChecksum)
		case v != out.Value(a) && v != checksum.WithoutPartCount(out.Value(a)):
			return Checksums{}, nil, fmt.Errorf("the object's %s is %s, not %s: %w", a.Name(), out.Value(a), v, ErrBadDigest)
		}
	}
	return out, record, nil
}

// Get describes an upload in progress (ErrNoSuchUpload if there is none
// of that ID for key in bucket).
func (s Uploads) Get(bucket, key, uploadID string) (UploadInfo, error) {
	u, err := s.findUpload(bucket, key, uploadID)
	if err != nil {
		return UploadInfo{}, err
	}
	defer u.mu.Unlock()
	info := u.info
	info.Meta = u.info.Meta.clone()
	return info, nil
}

// copyChecksummed returns the reader a copy reads its source through: r
// itself when sums can be kept, or r computing a fresh checksum (see
// CopyObject); sums then loses the values it had.
func copyChecksummed(r io.Reader, sums *Checksums) (io.Reader, error) {
	name := sums.Algorithm
	if name == "" && sums.Type == string(checksum.Composite) {
		for _, a := range checksum.All {
			if sums.Value(a) != "" {
				name = a.Name()
			}
		}
	}
	if name == "" {
		return r, nil
	}
	alg, ok := checksum.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("checksum algorithm %q: %w", name, ErrInvalidChecksum)
	}
	*sums = Checksums{}
	return &summingReader{r: r, alg: alg, h: alg.New()}, nil
}

// summingReader computes a checksum of what is read through it and reports
// it (ChecksumReporter) once the end is reached.
type summingReader struct {
	r    io.Reader
	alg  *checksum.Algorithm
	h    hash.Hash
	done bool
}

func (sr *summingReader) Read(p []byte) (int, error) {
	n, err := sr.r.Read(p)
	sr.h.Write(p[:n])
	if err == io.EOF {
		sr.done = true
	}
	return n, err
}

func (sr *summingReader) Checksums() Checksums {
	var c Checksums
	if sr.done {
		c.Set(sr.alg, sr.alg.Encode(sr.h.Sum(nil)))
		c.Type = string(checksum.FullObject)
	}
	return c
}
