package s3api

import (
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// Checksum headers: x-amz-checksum-<algorithm> carries a value; these name
// things about checksums, not values.
const (
	hdrChecksumPrefix    = "X-Amz-Checksum-"
	hdrChecksumMode      = "X-Amz-Checksum-Mode"
	hdrChecksumType      = "X-Amz-Checksum-Type"
	hdrChecksumAlgorithm = "X-Amz-Checksum-Algorithm"
	hdrSDKAlgorithm      = "X-Amz-Sdk-Checksum-Algorithm"
)

// pendingChecksum is the additional checksum being computed over a body.
type pendingChecksum struct {
	alg     *checksum.Algorithm
	h       hash.Hash
	want    string // base64 from the header; from the trailer when trailed
	trailed bool
}

// verifyingReader passes a request body through while computing its MD5
// (when Content-MD5 was sent) and its additional checksum, and checks
// them when the body ends: a mismatch is returned instead of io.EOF, so
// the store abandons the write. It reports the checksum to the store
// (store.ChecksumReporter) once verified.
type verifyingReader struct {
	r       io.Reader // the signature-checked body (rq.body)
	md5     hash.Hash
	md5want []byte
	sum     *pendingChecksum // nil: none sent, named or needed
	err     error            // sticky end result
}

// newVerifyingReader reads the checksum headers h of a body (Content-MD5,
// x-amz-checksum-<algorithm>, x-amz-trailer, x-amz-sdk-checksum-algorithm,
// x-amz-checksum-algorithm) and wraps body to verify them. Malformed or contradictory headers fail
// here, before the body is read: a value that is not the base64 of a
// digest, an x-amz-checksum-* header of no algorithm, more than one
// checksum, an unknown algorithm name (all InvalidRequest, as S3).
func newVerifyingReader(h http.Header, body io.Reader) (*verifyingReader, error) {
	v := &verifyingReader{r: body}
	want, err := contentMD5(h)
	if err != nil {
		return nil, err
	}
	if want != nil {
		v.md5, v.md5want = md5.New(), want
	}
	var sums []*pendingChecksum
	for name, values := range h {
		suffix, ok := strings.CutPrefix(name, hdrChecksumPrefix)
		if !ok || name == hdrChecksumMode || name == hdrChecksumType || name == hdrChecksumAlgorithm {
			continue
		}
		alg, known := checksum.Lookup(suffix)
		if !known {
			return nil, errorf("InvalidRequest", "The algorithm type you specified in x-amz-checksum- header is invalid.")
		}
		if _, err := alg.Decode(values[0]); err != nil || len(values) > 1 {
			return nil, errorf("InvalidRequest", "Value for x-amz-checksum-%s header is invalid.", alg.Header())
		}
		sums = append(sums, &pendingChecksum{alg: alg, h: alg.New(), want: values[0]})
	}
	for _, name := range strings.Split(h.Get("X-Amz-Trailer"), ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		algName, ok := strings.CutPrefix(name, "x-amz-checksum-")
		alg, known := checksum.Lookup(algName)
		if !ok || !known {
			return nil, errorf("InvalidRequest", "The trailer %q is not supported.", name)
		}
		sums = append(sums, &pendingChecksum{alg: alg, h: alg.New(), trailed: true})
	}
	if len(sums) > 1 {
		return nil, errorf("InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	if len(sums) == 1 {
		v.sum = sums[0]
	}
	// Both name the body's algorithm: SDKs send the first, some clients
	// (minio-go on parts) the second.
	for _, hdr := range []string{hdrSDKAlgorithm, hdrChecksumAlgorithm} {
		if name := h.Get(hdr); name != "" {
			if err := v.need(name, hdr); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// verifyChecksum wraps body to compute the checksum of algorithm algName
// (any case: "crc32c", "SHA256") and, when want is not empty, to check it
// against want (base64, as in x-amz-checksum-*) at the end of the body; the
// checksum is reported to the store. For bodies whose checksum arrives
// otherwise than in headers (form fields).
func verifyChecksum(body io.Reader, algName, want string) (*verifyingReader, error) {
	h := http.Header{}
	if want != "" {
		h.Set(hdrChecksumPrefix+algName, want)
	}
	v, err := newVerifyingReader(h, body)
	if err != nil {
		return nil, err
	}
	if err := v.need(algName, "checksum algorithm"); err != nil {
		return nil, err
	}
	return v, nil
}

// need makes the reader compute the checksum of algorithm name, which
// source named; one already sent must be of that algorithm.
func (v *verifyingReader) need(name, source string) error {
	alg, ok := checksum.Lookup(name)
	switch {
	case !ok:
		return errorf("InvalidRequest", "Value for %s header is invalid: %q is not a checksum algorithm.", strings.ToLower(source), name)
	case v.sum == nil:
		v.sum = &pendingChecksum{alg: alg, h: alg.New()}
	case v.sum.alg != alg:
		return errorf("InvalidRequest", "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", alg.Header(), v.sum.alg.Header())
	}
	return nil
}

// algorithm is the additional checksum's algorithm, nil for none.
func (v *verifyingReader) algorithm() *checksum.Algorithm {
	if v.sum == nil {
		return nil
	}
	return v.sum.alg
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	if n > 0 {
		if v.md5 != nil {
			v.md5.Write(p[:n])
		}
		if v.sum != nil {
			v.sum.h.Write(p[:n])
		}
	}
	if err == io.EOF {
		if cerr := v.check(); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		v.err = err
	}
	return n, err
}

// errChecksumTrailer: the trailer a body announced is missing or not a
// checksum value.
var errChecksumTrailer = errors.New("checksum trailer missing or malformed")

// check compares the digests once the body has ended.
func (v *verifyingReader) check() error {
	if v.md5 != nil && string(v.md5.Sum(nil)) != string(v.md5want) {
		return &s3Error{code: "BadDigest", message: "The Content-MD5 you specified did not match what we received.", cause: store.ErrBadDigest}
	}
	s := v.sum
	if s == nil {
		return nil
	}
	if s.trailed {
		s.want = trailerOf(v.r).Get(hdrChecksumPrefix + s.alg.Header())
		if _, err := s.alg.Decode(s.want); err != nil {
			return &s3Error{code: "InvalidRequest", message: fmt.Sprintf("The trailer x-amz-checksum-%s is missing or invalid.", s.alg.Header()), cause: errChecksumTrailer}
		}
	}
	got := s.alg.Encode(s.h.Sum(nil))
	if s.want != "" && got != s.want {
		return &s3Error{
			code:    "BadDigest",
			message: fmt.Sprintf("The %s you specified did not match the calculated checksum.", s.alg.Name()),
			cause:   store.ErrBadDigest,
		}
	}
	s.want = got
	return nil
}

// declared returns the checksum known before the body is read (sent as a
// header); a trailed or computed one is known only after the end (see
// Checksums).
func (v *verifyingReader) declared() store.Checksums {
	var c store.Checksums
	if s := v.sum; s != nil && !s.trailed {
		c.Set(s.alg, s.want)
	}
	return c
}

// Checksums returns the body's checksum once it has been read to its
// verified end, including one that arrived in a trailer or was only
// named; before that, the declared one.
func (v *verifyingReader) Checksums() store.Checksums {
	if v.err != io.EOF {
		return v.declared()
	}
	var c store.Checksums
	if v.sum != nil {
		c.Set(v.sum.alg, v.sum.want)
	}
	return c
}

// setChecksumHeaders sends stored checksums as x-amz-checksum-* headers,
// with their type when withType.
func setChecksumHeaders(h http.Header, c store.Checksums, withType bool) {
	found := false
	for _, alg := range checksum.All {
		if v := c.Value(alg); v != "" {
			h.Set(hdrChecksumPrefix+alg.Header(), v)
			found = true
		}
	}
	if found && withType {
		h.Set(hdrChecksumType, checksumType(c))
	}
}

// checksumType is the type of stored checksums: FULL_OBJECT unless stored
// otherwise.
func checksumType(c store.Checksums) string {
	if c.Type == "" {
		return string(checksum.FullObject)
	}
	return c.Type
}

// checksumMode reports whether a GET or HEAD asks for checksums.
func checksumMode(h http.Header) bool {
	return strings.EqualFold(h.Get(hdrChecksumMode), "ENABLED")
}

// xmlChecksums are the checksum elements of S3's XML results (Complete,
// ListParts' parts, CopyObjectResult, GetObjectAttributes) and of the
// Complete request's parts: Checksum<algorithm name>, ChecksumXXHASH64.
type xmlChecksums struct {
	ChecksumCRC32     string `xml:",omitempty"`
	ChecksumCRC32C    string `xml:",omitempty"`
	ChecksumCRC64NVME string `xml:",omitempty"`
	ChecksumMD5       string `xml:",omitempty"`
	ChecksumSHA1      string `xml:",omitempty"`
	ChecksumSHA256    string `xml:",omitempty"`
	ChecksumSHA512    string `xml:",omitempty"`
	ChecksumXXHASH128 string `xml:",omitempty"`
	ChecksumXXHASH3   string `xml:",omitempty"`
	ChecksumXXHASH64  string `xml:",omitempty"`
}

func toXMLChecksums(c store.Checksums) xmlChecksums {
	return xmlChecksums{c.CRC32, c.CRC32C, c.CRC64NVME, c.MD5, c.SHA1, c.SHA256, c.SHA512, c.XXHASH128, c.XXHASH3, c.XXHASH64}
}

func (x xmlChecksums) store() store.Checksums {
	return store.Checksums{CRC32: x.ChecksumCRC32, CRC32C: x.ChecksumCRC32C, CRC64NVME: x.ChecksumCRC64NVME, MD5: x.ChecksumMD5,
		SHA1: x.ChecksumSHA1, SHA256: x.ChecksumSHA256, SHA512: x.ChecksumSHA512,
		XXHASH128: x.ChecksumXXHASH128, XXHASH3: x.ChecksumXXHASH3, XXHASH64: x.ChecksumXXHASH64}
}

// headerChecksums reads the x-amz-checksum-<algorithm> values of a request
// without a body of its own (CompleteMultipartUpload), refusing malformed ones.
func headerChecksums(h http.Header) (store.Checksums, error) {
	var c store.Checksums
	for _, alg := range checksum.All {
		v := h.Get(hdrChecksumPrefix + alg.Header())
		if v == "" {
			continue
		}
		if _, err := alg.Decode(checksum.WithoutPartCount(v)); err != nil {
			return c, errorf("InvalidRequest", "Value for x-amz-checksum-%s header is invalid.", alg.Header())
		}
		c.Set(alg, v)
	}
	return c, nil
}
