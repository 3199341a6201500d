// Package checksum holds S3's additional checksums: the algorithms
// (CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128,
// XXHASH3, XXHASH64), their wire form (base64 of the big-endian digest;
// for the xxHashes that is xxHash's canonical form, the 64-bit value, or
// the 128-bit one high half first, in big-endian) and the checksums of a
// multipart object made from its parts' checksums:
//
//	COMPOSITE    base64(H(sum(part 1) ‖ … ‖ sum(part N))) + "-N"
//	             (any algorithm but CRC64NVME)
//	FULL_OBJECT  the checksum of the whole content, which for a CRC is
//	             computed from the parts' CRCs and sizes alone
//	             (CRC32, CRC32C, CRC64NVME; the hashes have no such
//	             combination, so S3 refuses the type for them)
//
// A CRC of A‖B is crc(A)·x^(8·len(B)) mod P  xor  crc(B): the pre- and
// post-inversion of these CRCs cancel out, so finished values combine
// directly (zlib's crc32_combine does the same). Pure: no I/O.
package checksum

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/zeebo/xxh3"
)

// Algorithm is one of S3's additional checksum algorithms.
type Algorithm struct {
	name string // as S3 spells it in x-amz-checksum-algorithm
	size int    // digest bytes
	new  func() hash.Hash
	crc  *crcPoly // nil for the hashes (MD5, SHA*, XXHASH*)
}

// crcPoly is a reflected CRC's polynomial, without its x^width term,
// bit-reversed (bit width-1 is the coefficient of x^0).
type crcPoly struct {
	width uint
	poly  uint64
}

// Reflected polynomials. CRC-64/NVME is 0xad93d23594c93659 in normal form.
const (
	polyCRC64NVME = 0x9a6c9329ac4bc9b5
)

var tableCRC32C = crc32.MakeTable(crc32.Castagnoli)

// The algorithms. CRC64NVME is computed with carry-less multiplication
// where the CPU has it (minio/crc64nvme, over 20 times faster than
// hash/crc64's table on amd64): every copy of an object without a
// checksum computes one.
// The xxHashes are seedless: XXHASH64 is XXH64, XXHASH3 XXH3's 64-bit
// hash, XXHASH128 XXH3's 128-bit one.
var (
	CRC32     = &Algorithm{"CRC32", 4, func() hash.Hash { return crc32.NewIEEE() }, &crcPoly{32, crc32.IEEE}}
	CRC32C    = &Algorithm{"CRC32C", 4, func() hash.Hash { return crc32.New(tableCRC32C) }, &crcPoly{32, crc32.Castagnoli}}
	CRC64NVME = &Algorithm{"CRC64NVME", 8, func() hash.Hash { return crc64nvme.New() }, &crcPoly{64, polyCRC64NVME}}
	MD5       = &Algorithm{"MD5", md5.Size, md5.New, nil}
	SHA1      = &Algorithm{"SHA1", sha1.Size, sha1.New, nil}
	SHA256    = &Algorithm{"SHA256", sha256.Size, sha256.New, nil}
	SHA512    = &Algorithm{"SHA512", sha512.Size, sha512.New, nil}
	XXHASH128 = &Algorithm{"XXHASH128", 16, func() hash.Hash { return xxh3.New128() }, nil}
	XXHASH3   = &Algorithm{"XXHASH3", 8, func() hash.Hash { return xxh3.New() }, nil}
	XXHASH64  = &Algorithm{"XXHASH64", 8, func() hash.Hash { return xxhash.New() }, nil}
)

// All lists every algorithm, in the order S3 lists them.
var All = []*Algorithm{CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64}

// Names is the list of algorithm names as S3 quotes it in errors:
// "CRC32, CRC32C, …".
func Names() string {
	names := make([]string, len(All))
	for i, a := range All {
		names[i] = a.name
	}
	return strings.Join(names, ", ")
}

// Lookup finds an algorithm by name, in any case ("crc32c", "CRC32C").
func Lookup(name string) (*Algorithm, bool) {
	for _, a := range All {
		if strings.EqualFold(a.name, name) {
			return a, true
		}
	}
	return nil, false
}

// Name is the algorithm's name as S3 writes it: "CRC32C".
func (a *Algorithm) Name() string { return a.name }

// Header is the lower-case suffix of its header: x-amz-checksum-<Header>.
func (a *Algorithm) Header() string { return strings.ToLower(a.name) }

// Size is the digest length in bytes.
func (a *Algorithm) Size() int { return a.size }

// New returns a hash computing the algorithm; Sum gives the big-endian
// digest S3 encodes.
func (a *Algorithm) New() hash.Hash { return a.new() }

// IsCRC reports whether the algorithm is a CRC (full-object checksums of
// multipart uploads exist only for these).
func (a *Algorithm) IsCRC() bool { return a.crc != nil }

// Encode is the wire form of a digest: standard base64.
func (a *Algorithm) Encode(sum []byte) string { return base64.StdEncoding.EncodeToString(sum) }

// ErrMalformed: a checksum value that is not the base64 of a digest of
// the algorithm's size, in its one canonical spelling.
var ErrMalformed = errors.New("malformed checksum value")

// Decode parses the wire form of one digest (no "-N" suffix). The value
// must be exactly what Encode gives for it: base64 decoding alone lets
// line breaks and non-zero padding bits through ("000000==" is the CRC32
// d34d34d3, whose wire form is "00000w=="), and a value that decodes but
// differs from its digest's wire form could never be matched, stored or
// sent back as S3 compares checksums, by their text.
func (a *Algorithm) Decode(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != a.size || a.Encode(b) != v {
		return nil, fmt.Errorf("%s value %q: %w", a.name, v, ErrMalformed)
	}
	return b, nil
}

// Of is the wire form of the algorithm's checksum of data.
func (a *Algorithm) Of(data []byte) string {
	h := a.new()
	h.Write(data)
	return a.Encode(h.Sum(nil))
}

// Type is how a multipart object's checksum relates to its parts'.
type Type string

const (
	Composite  Type = "COMPOSITE"
	FullObject Type = "FULL_OBJECT"
)

// ParseType reads an x-amz-checksum-type value (exact, upper case).
func ParseType(v string) (Type, bool) {
	switch t := Type(v); t {
	case Composite, FullObject:
		return t, true
	}
	return "", false
}

// DefaultType is the type of a multipart upload that names the
// algorithm and no type: full-object for CRC64NVME, composite otherwise.
func (a *Algorithm) DefaultType() Type {
	if a == CRC64NVME {
		return FullObject
	}
	return Composite
}

// Supports reports whether a multipart object can have a checksum of
// type t with this algorithm: composite needs a hash of the part sums
// (CRC64NVME has none in S3), full-object a CRC (a hash of the whole
// content cannot be had from the parts' hashes without reading it again).
func (a *Algorithm) Supports(t Type) bool {
	switch t {
	case Composite:
		return a != CRC64NVME
	case FullObject:
		return a.IsCRC()
	}
	return false
}

// Part is a part's digest (decoded) and size in bytes.
type Part struct {
	Sum  []byte
	Size int64
}

// Multipart returns the checksum of a multipart object of type t made of
// parts, in order, in its wire form (composite: with "-N").
func (a *Algorithm) Multipart(t Type, parts []Part) (string, error) {
	if !a.Supports(t) {
		return "", fmt.Errorf("a %s checksum of algorithm %s does not exist", t, a.name)
	}
	for i, p := range parts {
		if len(p.Sum) != a.size {
			return "", fmt.Errorf("part %d: %d-byte %s digest: %w", i+1, len(p.Sum), a.name, ErrMalformed)
		}
	}
	if t == Composite {
		h := a.new()
		for _, p := range parts {
			h.Write(p.Sum)
		}
		return fmt.Sprintf("%s-%d", a.Encode(h.Sum(nil)), len(parts)), nil
	}
	// Parts but the last usually share one size: x^(8·size) is computed
	// once per size (it is most of the cost of a combination).
	shifts := map[int64]uint64{}
	crc := a.crc.empty()
	for _, p := range parts {
		shift, ok := shifts[p.Size]
		if !ok {
			shift = a.crc.xPow(8 * uint64(p.Size))
			shifts[p.Size] = shift
		}
		crc = a.crc.mulMod(shift, crc) ^ a.crc.get(p.Sum) // crc(A‖B) = crc(A)·x^(8·len B) ⊕ crc(B)
	}
	return a.Encode(a.crc.put(crc)), nil
}

// empty is the CRC of no bytes: 0 for these (init and xorout are equal).
func (c *crcPoly) empty() uint64 { return 0 }

func (c *crcPoly) get(sum []byte) uint64 {
	if c.width == 32 {
		return uint64(binary.BigEndian.Uint32(sum))
	}
	return binary.BigEndian.Uint64(sum)
}

func (c *crcPoly) put(v uint64) []byte {
	if c.width == 32 {
		return binary.BigEndian.AppendUint32(nil, uint32(v))
	}
	return binary.BigEndian.AppendUint64(nil, v)
}

// one is the polynomial 1 (x^0) in reflected form.
func (c *crcPoly) one() uint64 { return 1 << (c.width - 1) }

// mulMod multiplies two reflected polynomials modulo the CRC polynomial.
func (c *crcPoly) mulMod(a, b uint64) uint64 {
	var p uint64
	for m := c.one(); m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		// b·x: a right shift in reflected form, reduced by the polynomial.
		if b&1 != 0 {
			b = b>>1 ^ c.poly
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow returns x^n mod P by squaring.
func (c *crcPoly) xPow(n uint64) uint64 {
	result, base := c.one(), c.one()>>1 // 1 and x
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			result = c.mulMod(result, base)
		}
		base = c.mulMod(base, base)
	}
	return result
}

// WithoutPartCount drops the "-N" of a composite checksum (GetObjectAttributes
// returns the value without it).
func WithoutPartCount(v string) string {
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return v[:i]
	}
	return v
}
