package s3api

import (
	"bytes"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCORSConfig: any document is a configuration S3 would accept or is
// refused with MalformedXML or InvalidRequest. One accepted keeps S3's
// limits, and its canonical form parses back to the same rules and is
// its own canonical form. Matching a request against it agrees with a
// model built from regular expressions.
func FuzzCORSConfig(f *testing.F) {
	for _, doc := range []string{
		corsRuleXML(getRule),
		corsRuleXML(`<ID>web</ID><AllowedOrigin>http://*.example.com</AllowedOrigin><AllowedMethod>PUT</AllowedMethod>`+
			`<AllowedMethod>POST</AllowedMethod><AllowedHeader>x-amz-*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds>`,
			`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader>`),
		corsRuleXML(`<AllowedOrigin>start*end</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>Content-*</AllowedHeader>`),
		corsRuleXML(`<AllowedOrigin>*example*.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`),
		corsRuleXML(getRule + `<MaxAgeSeconds> +7 </MaxAgeSeconds><ID>a &amp; b</ID>`),
		corsRuleXML(getRule + `<ExposeHeader>x-*</ExposeHeader>`),
		corsRuleXML(`<AllowedOrigin></AllowedOrigin><AllowedMethod/>`),
		corsRuleXML(),
		`<CORSConfiguration><CORSRule><AllowedOrigin>&#x9;*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`,
		``,
	} {
		f.Add([]byte(doc), "http://a.example.com", "GET", "Content-Type, x-amz-date")
	}
	f.Fuzz(func(t *testing.T, doc []byte, origin, method, header string) {
		d, err := parseCORS(doc)
		if err != nil {
			if code := toS3Error(err).code; code != "MalformedXML" && code != "InvalidRequest" {
				t.Fatalf("%q: %v", doc, err)
			}
			return
		}
		checkCORSLimits(t, d)
		canonical, err := d.marshal()
		if err != nil {
			t.Fatalf("%q: marshal: %v", doc, err)
		}
		again, err := parseCORS(canonical)
		if err != nil {
			t.Fatalf("canonical form %q of %q refused: %v", canonical, doc, err)
		}
		if twice, _ := again.marshal(); !bytes.Equal(twice, canonical) {
			t.Fatalf("canonical form %q is not its own: %q", canonical, twice)
		}
		cc := d.compile()
		if !reflect.DeepEqual(cc, again.compile()) {
			t.Fatalf("%q: the canonical form %q has other rules", doc, canonical)
		}

		names, ok := requestedHeaders(header)
		for _, n := range names {
			if n == "" || n != strings.ToLower(n) || strings.Trim(n, " \t") != n || strings.Contains(n, ",") {
				t.Fatalf("%q: requested name %q", header, n)
			}
		}
		if !ok || origin == "" || !utf8.ValidString(origin) || !utf8.ValidString(header) {
			return // no CORS request; or the model's regular expressions read runes, the matcher bytes
		}
		rule, allow := cc.match(origin, method, names)
		i, wantAllow := modelMatch(d, origin, method, names)
		switch {
		case i < 0 && rule != nil, i >= 0 && rule != &cc.rules[i], allow != wantAllow:
			t.Fatalf("%q: %s from %q with %q: matched %v (%q), model rule %d (%q)", canonical, method, origin, names, rule, allow, i, wantAllow)
		}
	})
}

// checkCORSLimits fails unless d keeps S3's limits.
func checkCORSLimits(t *testing.T, d *corsDocument) {
	t.Helper()
	if len(d.Rules) == 0 || len(d.Rules) > maxCORSRules {
		t.Fatalf("%d rules", len(d.Rules))
	}
	for _, r := range d.Rules {
		if len(r.AllowedOrigins) == 0 || len(r.AllowedMethods) == 0 || len(r.ID) > 1 || len(r.MaxAgeSeconds) > 1 {
			t.Fatalf("rule %+v", r)
		}
		for _, m := range r.AllowedMethods {
			if !isCORSMethod(m) {
				t.Fatalf("method %q", m)
			}
		}
		for _, p := range append(append([]string(nil), r.AllowedOrigins...), r.AllowedHeaders...) {
			if strings.Count(p, "*") > 1 {
				t.Fatalf("pattern %q", p)
			}
		}
		for _, h := range r.ExposeHeaders {
			if strings.Contains(h, "*") {
				t.Fatalf("expose header %q", h)
			}
		}
		if len(r.ID) == 1 && utf8.RuneCountInString(r.ID[0]) > maxCORSIDLen {
			t.Fatalf("ID of %d characters", utf8.RuneCountInString(r.ID[0]))
		}
		if len(r.MaxAgeSeconds) == 1 {
			if n, err := strconv.Atoi(r.MaxAgeSeconds[0]); err != nil || n < 0 || strconv.Itoa(n) != r.MaxAgeSeconds[0] {
				t.Fatalf("MaxAgeSeconds %q", r.MaxAgeSeconds[0])
			}
		}
	}
}

// modelMatch is the index of the first rule of d allowing the request
// (-1: none) and the Access-Control-Allow-Origin it answers, each
// pattern a regular expression.
func modelMatch(d *corsDocument, origin, method string, names []string) (int, string) {
	for i, r := range d.Rules {
		allow, originOK := "", false
		for _, p := range r.AllowedOrigins {
			if patternRegexp(p).MatchString(origin) {
				allow, originOK = origin, true
				if p == "*" {
					allow = "*"
				}
				break
			}
		}
		methodOK := false
		for _, m := range r.AllowedMethods {
			methodOK = methodOK || m == method
		}
		headersOK := true
		for _, n := range names {
			found := false
			for _, p := range r.AllowedHeaders {
				found = found || patternRegexp(strings.ToLower(p)).MatchString(n)
			}
			headersOK = headersOK && found
		}
		if originOK && methodOK && headersOK {
			return i, allow
		}
	}
	return -1, ""
}

// patternRegexp is a CORS pattern as an anchored regular expression.
func patternRegexp(p string) *regexp.Regexp {
	before, after, star := strings.Cut(p, "*")
	expr := regexp.QuoteMeta(before)
	if star {
		expr += "(?s:.*)" + regexp.QuoteMeta(after)
	}
	return regexp.MustCompile(`\A` + expr + `\z`)
}
