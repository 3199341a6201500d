package s3api

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"strings"

	"github.com/xfs3/xfs3/store"
)

// checksumAlgorithm is one of S3's additional checksums.
type checksumAlgorithm struct {
	name  string // as in x-amz-checksum-<name>, lower case
	size  int    // digest bytes
	new   func() hash.Hash
	field func(*store.Checksums) *string // nil: verified but not stored
}

// crc64NVME is CRC-64/NVME (reflected polynomial 0x9a6c9329ac4bc9b5),
// which newer AWS SDKs send; verified, not stored (store.Checksums has no
// field for it).
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

var checksumAlgorithms = []checksumAlgorithm{
	{"crc32", 4, func() hash.Hash { return crc32.NewIEEE() }, func(c *store.Checksums) *string { return &c.CRC32 }},
	{"crc32c", 4, func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) }, func(c *store.Checksums) *string { return &c.CRC32C }},
	{"sha1", sha1.Size, sha1.New, func(c *store.Checksums) *string { return &c.SHA1 }},
	{"sha256", sha256.Size, sha256.New, func(c *store.Checksums) *string { return &c.SHA256 }},
	{"crc64nvme", 8, func() hash.Hash { return crc64.New(crc64NVME) }, nil},
}

func algorithmNamed(name string) (checksumAlgorithm, bool) {
	name = strings.ToLower(name)
	for _, a := range checksumAlgorithms {
		if a.name == name {
			return a, true
		}
	}
	return checksumAlgorithm{}, false
}

// pendingChecksum is one checksum being computed over a body.
type pendingChecksum struct {
	alg     checksumAlgorithm
	h       hash.Hash
	want    string // base64 from the header; from the trailer when trailed
	trailed bool
}

// verifyingReader passes a request body through while computing its MD5
// (when Content-MD5 was sent) and its additional checksums, and checks
// them when the body ends: a mismatch is returned instead of io.EOF, so
// the store abandons the write.
type verifyingReader struct {
	r       io.Reader // the signature-checked body (rq.body)
	md5     hash.Hash
	md5want []byte
	sums    []*pendingChecksum
	err     error // sticky end result
}

// newVerifyingReader reads the checksum headers of r (Content-MD5,
// x-amz-checksum-*, x-amz-trailer, x-amz-sdk-checksum-algorithm) and
// wraps body to verify them. Malformed headers fail here, before the body
// is read.
func newVerifyingReader(r *http.Request, body io.Reader) (*verifyingReader, error) {
	v := &verifyingReader{r: body}
	want, err := contentMD5(r)
	if err != nil {
		return nil, err
	}
	if want != nil {
		v.md5, v.md5want = md5.New(), want
	}
	for _, alg := range checksumAlgorithms {
		value := r.Header.Get("X-Amz-Checksum-" + alg.name)
		if value == "" {
			continue
		}
		if !validDigest(value, alg.size) {
			return nil, errorf("InvalidRequest", "Value for x-amz-checksum-%s header is invalid.", alg.name)
		}
		v.sums = append(v.sums, &pendingChecksum{alg: alg, h: alg.new(), want: value})
	}
	for _, name := range strings.Split(r.Header.Get("X-Amz-Trailer"), ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		algName, ok := strings.CutPrefix(name, "x-amz-checksum-")
		alg, known := algorithmNamed(algName)
		if !ok || !known {
			return nil, errorf("InvalidRequest", "The trailer %q is not supported.", name)
		}
		v.sums = append(v.sums, &pendingChecksum{alg: alg, h: alg.new(), trailed: true})
	}
	if len(v.sums) > 1 {
		return nil, errorf("InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	if name := r.Header.Get("X-Amz-Sdk-Checksum-Algorithm"); name != "" {
		alg, ok := algorithmNamed(name)
		switch {
		case !ok:
			return nil, errorf("InvalidRequest", "Checksum algorithm %q is not supported.", name)
		case len(v.sums) == 1 && v.sums[0].alg.name != alg.name:
			return nil, errorf("InvalidRequest", "x-amz-sdk-checksum-algorithm %s does not match the checksum sent.", name)
		case len(v.sums) == 0: // named only: computed and echoed
			v.sums = append(v.sums, &pendingChecksum{alg: alg, h: alg.new()})
		}
	}
	return v, nil
}

// validDigest reports whether s is the base64 of size bytes.
func validDigest(s string, size int) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && len(b) == size
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
		for _, s := range v.sums {
			s.h.Write(p[:n])
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

// check compares the digests once the body has ended.
func (v *verifyingReader) check() error {
	if v.md5 != nil && string(v.md5.Sum(nil)) != string(v.md5want) {
		return &s3Error{code: "BadDigest", message: "The Content-MD5 you specified did not match what we received.", cause: store.ErrBadDigest}
	}
	trailer := trailerOf(v.r)
	for _, s := range v.sums {
		if s.trailed {
			s.want = trailer.Get("X-Amz-Checksum-" + s.alg.name)
			if !validDigest(s.want, s.alg.size) {
				return errorf("InvalidRequest", "The trailer x-amz-checksum-%s is missing or invalid.", s.alg.name)
			}
		}
		got := base64.StdEncoding.EncodeToString(s.h.Sum(nil))
		if s.want != "" && got != s.want {
			return &s3Error{
				code:    "BadDigest",
				message: fmt.Sprintf("The %s you specified did not match the calculated checksum.", strings.ToUpper(s.alg.name)),
				cause:   store.ErrBadDigest,
			}
		}
		s.want = got
	}
	return nil
}

// declared returns the checksums known before the body is read (sent as
// headers); trailed ones are known only after the end (see Checksums).
func (v *verifyingReader) declared() store.Checksums {
	var c store.Checksums
	for _, s := range v.sums {
		if s.alg.field != nil && !s.trailed && s.want != "" {
			*s.alg.field(&c) = s.want
		}
	}
	return c
}

// Checksums returns every checksum of the body once it has been read to
// its verified end, including those that arrived in a trailer or were only
// named by x-amz-sdk-checksum-algorithm; before that, the declared ones.
func (v *verifyingReader) Checksums() store.Checksums {
	if v.err != io.EOF {
		return v.declared()
	}
	var c store.Checksums
	for _, s := range v.sums {
		if s.alg.field != nil {
			*s.alg.field(&c) = s.want
		}
	}
	return c
}

// setChecksumHeaders sends stored checksums as x-amz-checksum-* headers.
func setChecksumHeaders(h http.Header, c store.Checksums) {
	for _, alg := range checksumAlgorithms {
		if alg.field == nil {
			continue
		}
		if v := *alg.field(&c); v != "" {
			h.Set("X-Amz-Checksum-"+alg.name, v)
		}
	}
}
