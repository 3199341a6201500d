package sigv4

import (
	"net/url"
	"sort"
	"strings"
)

const upperhex = "0123456789ABCDEF"

// unreserved reports the characters SigV4 never percent-encodes:
// A-Z a-z 0-9 - _ . ~ (RFC 3986 section 2.3).
func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

// uriEncode percent-encodes every byte of s except the unreserved ones and,
// when keepSlash, '/'. Hex digits are upper case, as AWS requires.
func uriEncode(s string, keepSlash bool) string {
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) && !(keepSlash && s[i] == '/') {
			return string(appendURIEncoded(make([]byte, 0, len(s)+8), s, keepSlash))
		}
	}
	return s
}

// appendURIEncoded appends uriEncode(s, keepSlash) to dst.
func appendURIEncoded(dst []byte, s string, keepSlash bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || keepSlash && c == '/' {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', upperhex[c>>4], upperhex[c&15])
	}
	return dst
}

// canonicalURI is the S3 form of the path: the decoded path encoded once,
// segment by segment. S3 does not normalise it (no "//" or "." removal) and
// does not encode it twice, unlike other AWS services.
func canonicalURI(u *url.URL) string {
	p := u.Path
	if p == "" {
		return "/"
	}
	return uriEncode(p, true)
}

// queryPair is one decoded key=value of a query string, in order.
type queryPair struct{ key, value string }

// parseQuery splits a raw query into decoded pairs, keeping repeated and
// empty keys. It accepts ';' literally, unlike url.ParseQuery, and treats
// '+' as a space as S3 does.
func parseQuery(raw string) ([]queryPair, error) {
	var out []queryPair
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return nil, err
		}
		out = append(out, queryPair{dk, dv})
	}
	return out, nil
}

// canonicalQuery encodes every pair except those whose key skip rejects,
// sorted by encoded key and then encoded value, joined with '&'. Keys
// without a value keep a trailing '='.
func canonicalQuery(pairs []queryPair, skip func(string) bool) string {
	return canonicalQueryOrder(pairs, skip, true)
}

// canonicalQueryOrder is canonicalQuery; with byValue false, the values of
// a repeated key keep the order they were sent in (sorted by key only).
// AWS sorts by value too; minio-go and some older clients do not, so the
// verifier accepts either order.
func canonicalQueryOrder(pairs []queryPair, skip func(string) bool, byValue bool) string {
	enc := make([]string, 0, len(pairs))
	for _, p := range pairs {
		if skip != nil && skip(p.key) {
			continue
		}
		enc = append(enc, uriEncode(p.key, false)+"="+uriEncode(p.value, false))
	}
	// Sorting "k=v" strings sorts by key then value except when one key is
	// a prefix of another ("a" vs "a-b": '=' sorts after '-'), so sort the
	// split form.
	sort.SliceStable(enc, func(i, j int) bool {
		ki, vi, _ := strings.Cut(enc[i], "=")
		kj, vj, _ := strings.Cut(enc[j], "=")
		if ki != kj {
			return ki < kj
		}
		return byValue && vi < vj
	})
	return strings.Join(enc, "&")
}

// trimAll trims a header value and collapses runs of spaces to one, as
// the canonical headers require.
func trimAll(s string) string {
	t := strings.TrimSpace(s)
	if !strings.Contains(t, "  ") && !strings.Contains(t, "\t") {
		return t
	}
	return string(appendTrimmed(nil, s))
}

// appendTrimmed appends trimAll(s) to dst.
func appendTrimmed(dst []byte, s string) []byte {
	s = strings.TrimSpace(s)
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' {
			if !space {
				dst = append(dst, ' ')
			}
			space = true
			continue
		}
		space = false
		dst = append(dst, c)
	}
	return dst
}

// repeatedUnsorted reports whether some repeated key's values were not
// sent in sorted order, the only case where the two orders differ.
func repeatedUnsorted(pairs []queryPair) bool {
	last := map[string]string{}
	for _, p := range pairs {
		if v, ok := last[p.key]; ok && uriEncode(p.value, false) < uriEncode(v, false) {
			return true
		}
		last[p.key] = p.value
	}
	return false
}
