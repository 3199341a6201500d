package s3api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/cors"
	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store"
)

// corsRuleXML is a CORSConfiguration of the rules given, each the inner
// XML of one CORSRule.
func corsRuleXML(rules ...string) string {
	var b strings.Builder
	b.WriteString(`<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, r := range rules {
		b.WriteString("<CORSRule>" + r + "</CORSRule>")
	}
	b.WriteString("</CORSConfiguration>")
	return b.String()
}

const getRule = `<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`

// TestParseCORS: S3's refusals, first one wins; the code always, the
// message where S3's wording is known.
func TestParseCORS(t *testing.T) {
	many := make([]string, 101)
	for i := range many {
		many[i] = getRule
	}
	tests := []struct {
		name, doc string
		code, msg string // code "": accepted
	}{
		{"minimal", corsRuleXML(getRule), "", ""},
		{"no namespace", `<CORSConfiguration><CORSRule>` + getRule + `</CORSRule></CORSConfiguration>`, "", ""},
		{"every element", corsRuleXML(`<ID>web</ID><AllowedOrigin>http://*.example.com</AllowedOrigin><AllowedMethod>PUT</AllowedMethod>` +
			`<AllowedMethod>POST</AllowedMethod><AllowedHeader>x-amz-*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds>`), "", ""},
		{"100 rules", corsRuleXML(many[:100]...), "", ""},
		{"empty origin", corsRuleXML(`<AllowedOrigin></AllowedOrigin><AllowedMethod>GET</AllowedMethod>`), "", ""},
		{"max age with spaces", corsRuleXML(getRule + `<MaxAgeSeconds> 30 </MaxAgeSeconds>`), "", ""},
		{"255 characters of ID", corsRuleXML(getRule + `<ID>` + strings.Repeat("é", 255) + `</ID>`), "", ""},

		{"empty body", ``, "MalformedXML", ""},
		{"not XML", `{"CORSRules": []}`, "MalformedXML", ""},
		{"another root", `<Tagging><CORSRule>` + getRule + `</CORSRule></Tagging>`, "MalformedXML", ""},
		{"no rules", corsRuleXML(), "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."},
		{"101 rules", corsRuleXML(many...), "MalformedXML", ""},
		{"empty rule", corsRuleXML(``), "MalformedXML", ""},
		{"no origin", corsRuleXML(`<AllowedMethod>GET</AllowedMethod>`), "MalformedXML", ""},
		{"no method", corsRuleXML(`<AllowedOrigin>*</AllowedOrigin>`), "MalformedXML", ""},
		{"two IDs", corsRuleXML(getRule + `<ID>a</ID><ID>b</ID>`), "MalformedXML", ""},
		{"two max ages", corsRuleXML(getRule + `<MaxAgeSeconds>1</MaxAgeSeconds><MaxAgeSeconds>2</MaxAgeSeconds>`), "MalformedXML", ""},
		{"max age not a number", corsRuleXML(getRule + `<MaxAgeSeconds>soon</MaxAgeSeconds>`), "MalformedXML", ""},
		{"max age too large", corsRuleXML(getRule + `<MaxAgeSeconds>99999999999</MaxAgeSeconds>`), "MalformedXML", ""},

		{"method PATCH", corsRuleXML(`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>`),
			"InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is PATCH"},
		{"method OPTIONS", corsRuleXML(`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>OPTIONS</AllowedMethod>`),
			"InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is OPTIONS"},
		{"method in lower case", corsRuleXML(`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod>`),
			"InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is get"},
		{"empty method", corsRuleXML(`<AllowedOrigin>*</AllowedOrigin><AllowedMethod/>`),
			"InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is "},
		{"two wildcards in an origin", corsRuleXML(`<AllowedOrigin>*example*.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`),
			"InvalidRequest", `AllowedOrigin "*example*.com" can not have more than one wildcard.`},
		{"two wildcards in a header", corsRuleXML(getRule + `<AllowedHeader>x-*-*</AllowedHeader>`),
			"InvalidRequest", `AllowedHeader "x-*-*" can not have more than one wildcard.`},
		{"wildcard in an expose header", corsRuleXML(getRule + `<ExposeHeader>x-amz-*</ExposeHeader>`),
			"InvalidRequest", `ExposeHeader "x-amz-*" contains wildcard. We currently do not support wildcard for ExposeHeader.`},
		{"256 characters of ID", corsRuleXML(getRule + `<ID>` + strings.Repeat("i", 256) + `</ID>`), "InvalidRequest", ""},
		{"negative max age", corsRuleXML(getRule + `<MaxAgeSeconds>-1</MaxAgeSeconds>`), "InvalidRequest", ""},
		{"second rule refused", corsRuleXML(getRule, `<AllowedOrigin>*</AllowedOrigin><AllowedMethod>TRACE</AllowedMethod>`),
			"InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is TRACE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCORS([]byte(tt.doc))
			if tt.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *s3Error
			if !errors.As(err, &se) || se.code != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
			if tt.msg != "" && se.Message() != tt.msg {
				t.Errorf("message %q, want %q", se.Message(), tt.msg)
			}
		})
	}
}

// TestCORSOriginPatterns follows ceph s3-tests' test_cors_origin_response:
// a '*' matches any run, the empty one included, and a pattern is
// anchored at both ends.
func TestCORSOriginPatterns(t *testing.T) {
	d, err := parseCORS([]byte(corsRuleXML(
		`<AllowedOrigin>*suffix</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`,
		`<AllowedOrigin>start*end</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`,
		`<AllowedOrigin>prefix*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`,
		`<AllowedOrigin>*.put</AllowedOrigin><AllowedMethod>PUT</AllowedMethod>`,
		`<AllowedOrigin>https://app.example.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`,
	)))
	if err != nil {
		t.Fatal(err)
	}
	cc := d.compile()
	for _, tt := range []struct {
		origin, method string
		want           bool
	}{
		{"foo.suffix", "GET", true}, {"startend", "GET", true}, {"start1end", "GET", true},
		{"start12end", "GET", true}, {"prefix", "GET", true}, {"prefix.suffix", "GET", true},
		{"foo.bar", "GET", false}, {"foo.suffix.get", "GET", false}, {"0start12end", "GET", false},
		{"bla.prefix", "GET", false}, {"foo.put", "GET", false}, {"foo.put", "PUT", true},
		{"foo.suffix", "PUT", false}, {"foo.suffix", "get", false},
		{"https://app.example.com", "GET", true}, {"http://app.example.com", "GET", false},
		{"https://app.example.com:443", "GET", false}, {"https://app.example.com/", "GET", false},
		{"https://APP.example.com", "GET", false},
	} {
		rule, allow := cc.match(tt.origin, tt.method, nil)
		if (rule != nil) != tt.want || rule != nil && allow != tt.origin {
			t.Errorf("%s %s: rule %v, allow %q; want match %v", tt.method, tt.origin, rule != nil, allow, tt.want)
		}
	}
}

// corsHeaders are the CORS headers of a response (and Vary), one value
// each.
func corsHeaders(h http.Header) map[string]string {
	m := map[string]string{}
	for k, v := range h {
		if strings.HasPrefix(k, "Access-Control-") || k == "Vary" {
			m[k] = strings.Join(v, " | ")
		}
	}
	return m
}

func wantCORSHeaders(t *testing.T, what string, h http.Header, want map[string]string) {
	t.Helper()
	got := corsHeaders(h)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: CORS headers\n%v\nwant\n%v", what, got, want)
	}
}

// allowed is what a rule naming the origin answers.
func allowed(origin, methods string, extra ...string) map[string]string {
	m := map[string]string{
		"Access-Control-Allow-Origin":      origin,
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods":     methods,
		"Vary":                             corsVary,
	}
	if origin == "*" {
		delete(m, "Access-Control-Allow-Credentials")
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// unsignedRequest sends a request without a signature, as a browser's.
func (ts *testServer) unsignedRequest(t *testing.T, method, target string, header map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req := ts.rawRequest(t, method, target, body, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func (ts *testServer) putCORS(t *testing.T, bucket, doc string) {
	t.Helper()
	resp, body := ts.do(t, "PUT", "/"+bucket+"?cors", []byte(doc), nil)
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("PutBucketCors: %d %s", resp.StatusCode, body)
	}
}

// TestBucketCORSOperations: PUT answers 200 and keeps the canonical
// form, which GET gives back; DELETE answers 204, with or without one.
func TestBucketCORSOperations(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "web")
	resp, body := ts.do(t, "GET", "/web?cors", nil, nil)
	wantError(t, resp, body, http.StatusNotFound, "NoSuchCORSConfiguration")
	var e errorBody
	if xml.Unmarshal(body, &e); e.Bucket != "web" || e.Message != "The CORS configuration does not exist" {
		t.Errorf("NoSuchCORSConfiguration body: %s", body)
	}

	sent := `<?xml version="1.0"?>
<CORSConfiguration>
  <CORSRule>
    <MaxAgeSeconds>+3000</MaxAgeSeconds>
    <AllowedOrigin>http://*.example.com</AllowedOrigin>
    <AllowedOrigin>http://test.com:80</AllowedOrigin>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedHeader>X-Amz-*</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <ID>rule &amp; one</ID>
  </CORSRule>
  <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule>
</CORSConfiguration>`
	ts.putCORS(t, "web", sent)
	want := xml.Header + `<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<CORSRule><AllowedHeader>X-Amz-*</AllowedHeader><AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod>` +
		`<AllowedOrigin>http://*.example.com</AllowedOrigin><AllowedOrigin>http://test.com:80</AllowedOrigin>` +
		`<ExposeHeader>ETag</ExposeHeader><ID>rule &amp; one</ID><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule>` +
		`<CORSRule><AllowedMethod>HEAD</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>`
	resp, body = ts.do(t, "GET", "/web?cors", nil, nil)
	if resp.StatusCode != http.StatusOK || string(body) != want || resp.Header.Get("Content-Type") != "application/xml" {
		t.Errorf("GetBucketCors: %d %s\nwant %s", resp.StatusCode, body, want)
	}
	if doc, err := ts.store.BucketConfigs().Get("web", store.ConfigCORS); err != nil || !strings.HasPrefix(want, xml.Header+string(doc)) {
		t.Errorf("stored document %q, %v", doc, err)
	}

	// A refused document leaves the one in place.
	resp, body = ts.do(t, "PUT", "/web?cors", []byte(corsRuleXML(`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>`)), nil)
	wantError(t, resp, body, http.StatusBadRequest, "InvalidRequest")
	if _, body = ts.do(t, "GET", "/web?cors", nil, nil); string(body) != want {
		t.Errorf("after a refused PUT: %s", body)
	}
	resp, body = ts.do(t, "PUT", "/web?cors", bytes.Repeat([]byte(" "), 64<<10+1), nil)
	wantError(t, resp, body, http.StatusBadRequest, "MaxMessageLengthExceeded")
	// Under 64 KiB as sent, over it in canonical form (each empty
	// element written out in full).
	grown := corsRuleXML(getRule + strings.Repeat("<AllowedHeader/>", 3500))
	resp, body = ts.do(t, "PUT", "/web?cors", []byte(grown), nil)
	wantError(t, resp, body, http.StatusBadRequest, "MaxMessageLengthExceeded")

	for range 2 {
		if resp, body = ts.do(t, "DELETE", "/web?cors", nil, nil); resp.StatusCode != http.StatusNoContent {
			t.Errorf("DeleteBucketCors: %d %s", resp.StatusCode, body)
		}
	}
	resp, body = ts.do(t, "GET", "/web?cors", nil, nil)
	wantError(t, resp, body, http.StatusNotFound, "NoSuchCORSConfiguration")

	resp, body = ts.do(t, "PUT", "/nowhere?cors", []byte(corsRuleXML(getRule)), nil)
	wantError(t, resp, body, http.StatusNotFound, "NoSuchBucket")
	resp, body = ts.do(t, "PUT", "/web/k?cors", []byte(corsRuleXML(getRule)), nil)
	wantError(t, resp, body, http.StatusNotImplemented, "NotImplemented")
	if _, err := ts.store.HeadObject("web", "k"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("PUT /web/k?cors wrote an object: %v", err)
	}
}

// TestBucketCORSMinio: minio-go's calls, as mc cors uses them.
func TestBucketCORSMinio(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "web")
	if got, err := ts.client.GetBucketCors(c, "web"); err != nil || got != nil {
		t.Fatalf("GetBucketCors without one: %v, %v", got, err)
	}
	rules := []cors.Rule{
		{AllowedOrigin: []string{"https://app.example.com"}, AllowedMethod: []string{"GET", "PUT"}, AllowedHeader: []string{"*"}, ExposeHeader: []string{"ETag"}, MaxAgeSeconds: 600, ID: "app"},
		{AllowedOrigin: []string{"*"}, AllowedMethod: []string{"HEAD"}},
	}
	if err := ts.client.SetBucketCors(c, "web", cors.NewConfig(rules)); err != nil {
		t.Fatal(err)
	}
	got, err := ts.client.GetBucketCors(c, "web")
	if err != nil || got == nil || fmt.Sprint(got.CORSRules) != fmt.Sprint(rules) {
		t.Fatalf("GetBucketCors: %+v, %v; want %+v", got, err, rules)
	}
	bad := cors.NewConfig([]cors.Rule{{AllowedOrigin: []string{"*"}, AllowedMethod: []string{"PATCH"}}})
	wantCode(t, "SetBucketCors PATCH", ts.client.SetBucketCors(c, "web", bad), "InvalidRequest")
	if err := ts.client.SetBucketCors(c, "web", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ts.client.GetBucketCors(c, "web"); err != nil || got != nil {
		t.Fatalf("GetBucketCors after removal: %v, %v", got, err)
	}
}

// TestBucketCORSPermissions: s3:GetBucketCORS reads the rules,
// s3:PutBucketCORS sets and deletes them.
func TestBucketCORSPermissions(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "web")
	root := ts.adminClient(testAccessKey, testSecretKey)
	for name, action := range map[string]string{"reader": "s3:GetBucketCORS", "writer": "s3:PutBucketCORS"} {
		doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["` + action + `"],"Resource":["arn:aws:s3:::web"]}]}`
		if err := root.AddPolicy(c, name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		if err := root.AddUser(c, name, name+"-secret-1", true); err != nil {
			t.Fatal(err)
		}
		if _, err := root.AttachPolicies(c, name, name); err != nil {
			t.Fatal(err)
		}
	}
	reader, writer := ts.clientAs(t, "reader", "reader-secret-1"), ts.clientAs(t, "writer", "writer-secret-1")
	config := cors.NewConfig([]cors.Rule{{AllowedOrigin: []string{"*"}, AllowedMethod: []string{"GET"}}})
	wantCode(t, "reader sets", reader.SetBucketCors(c, "web", config), "AccessDenied")
	if err := writer.SetBucketCors(c, "web", config); err != nil {
		t.Fatalf("writer sets: %v", err)
	}
	if got, err := reader.GetBucketCors(c, "web"); err != nil || got == nil {
		t.Fatalf("reader gets: %v, %v", got, err)
	}
	_, err := writer.GetBucketCors(c, "web")
	wantCode(t, "writer gets", err, "AccessDenied")
	wantCode(t, "reader deletes", reader.SetBucketCors(c, "web", nil), "AccessDenied")
	if err := writer.SetBucketCors(c, "web", nil); err != nil {
		t.Fatalf("writer deletes: %v", err)
	}
}

// TestCORSPreflight: OPTIONS is answered unsigned, from the bucket's
// rules, with S3's headers and S3's refusals.
func TestCORSPreflight(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "web")
	mustBucket(t, ts, "plain")
	ts.putCORS(t, "web", corsRuleXML(
		`<AllowedOrigin>https://localhost:4200</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>`+
			`<AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>Content-Type</AllowedHeader><ExposeHeader>ETag</ExposeHeader>`+
			`<ExposeHeader>x-amz-version-id</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds>`,
		`<AllowedOrigin>http://*.origin.com</AllowedOrigin><AllowedMethod>DELETE</AllowedMethod>`,
		`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader>`,
	))
	const app = "https://localhost:4200"
	type hdr = map[string]string
	ok := []struct {
		name, target string
		header       hdr
		want         map[string]string
	}{
		{"object", "/web/photos/a.jpg", hdr{"Origin": app, "Access-Control-Request-Method": "PUT"},
			allowed(app, "GET, PUT", "Access-Control-Expose-Headers", "ETag, x-amz-version-id", "Access-Control-Max-Age", "3000")},
		{"bucket", "/web", hdr{"Origin": app, "Access-Control-Request-Method": "GET"},
			allowed(app, "GET, PUT", "Access-Control-Expose-Headers", "ETag, x-amz-version-id", "Access-Control-Max-Age", "3000")},
		{"headers, lower case, in order", "/web/k", hdr{"Origin": app, "Access-Control-Request-Method": "PUT",
			"Access-Control-Request-Headers": "X-Amz-Meta-A,content-type, x-amz-date"},
			allowed(app, "GET, PUT", "Access-Control-Allow-Headers", "x-amz-meta-a, content-type, x-amz-date",
				"Access-Control-Expose-Headers", "ETag, x-amz-version-id", "Access-Control-Max-Age", "3000")},
		{"second rule, partial origin", "/web/k", hdr{"Origin": "http://test.origin.com", "Access-Control-Request-Method": "DELETE"},
			allowed("http://test.origin.com", "DELETE")},
		{"any origin", "/web/k", hdr{"Origin": "http://random:1234", "Access-Control-Request-Method": "HEAD",
			"Access-Control-Request-Headers": "range"}, allowed("*", "HEAD", "Access-Control-Allow-Headers", "range")},
		{"a signature is ignored", "/web/k?X-Amz-Signature=bad", hdr{"Origin": app, "Access-Control-Request-Method": "GET",
			"Authorization": "AWS4-HMAC-SHA256 Credential=nobody"},
			allowed(app, "GET, PUT", "Access-Control-Expose-Headers", "ETag, x-amz-version-id", "Access-Control-Max-Age", "3000")},
	}
	for _, tt := range ok {
		resp, body := ts.unsignedRequest(t, "OPTIONS", tt.target, tt.header, nil)
		if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.Header.Get("X-Amz-Request-Id") == "" {
			t.Errorf("%s: %d %s", tt.name, resp.StatusCode, body)
		}
		wantCORSHeaders(t, tt.name, resp.Header, tt.want)
	}

	refused := []struct {
		name, target string
		header       hdr
		status       int
		code, msg    string
		method, kind string
	}{
		{"no origin", "/web/k", hdr{"Access-Control-Request-Method": "GET"}, 400, "BadRequest", corsNoOrigin, "", ""},
		{"no origin, no bucket", "/nowhere/k", nil, 400, "BadRequest", corsNoOrigin, "", ""},
		{"no bucket", "/nowhere/k", hdr{"Origin": app}, 403, "AccessForbidden", corsNoBucket, "OPTIONS", "BUCKET"},
		{"service", "/", hdr{"Origin": app, "Access-Control-Request-Method": "GET"}, 403, "AccessForbidden", corsNoBucket, "GET", "BUCKET"},
		{"no configuration", "/plain/k", hdr{"Origin": app, "Access-Control-Request-Method": "PUT"}, 403, "AccessForbidden", corsNotEnabled, "PUT", "BUCKET"},
		{"no configuration, no method", "/plain/k", hdr{"Origin": app}, 403, "AccessForbidden", corsNotEnabled, "OPTIONS", "BUCKET"},
		{"no method", "/web/k", hdr{"Origin": app}, 400, "BadRequest", "Invalid Access-Control-Request-Method: null", "", ""},
		{"unknown method", "/web/k", hdr{"Origin": app, "Access-Control-Request-Method": "PATCH"}, 400, "BadRequest", "Invalid Access-Control-Request-Method: PATCH", "", ""},
		{"scheme differs", "/web/k", hdr{"Origin": "http://localhost:4200", "Access-Control-Request-Method": "PUT"}, 403, "AccessForbidden", corsNotAllowed, "PUT", "OBJECT"},
		{"trailing slash", "/web", hdr{"Origin": "http://test.origin.com/", "Access-Control-Request-Method": "DELETE"}, 403, "AccessForbidden", corsNotAllowed, "DELETE", "BUCKET"},
		{"method not allowed", "/web/k", hdr{"Origin": app, "Access-Control-Request-Method": "DELETE"}, 403, "AccessForbidden", corsNotAllowed, "DELETE", "OBJECT"},
		{"a header not allowed", "/web/k", hdr{"Origin": app, "Access-Control-Request-Method": "PUT",
			"Access-Control-Request-Headers": "x-amz-date,authorization"}, 403, "AccessForbidden", corsNotAllowed, "PUT", "OBJECT"},
		{"a rule without headers", "/web/k", hdr{"Origin": "http://a.origin.com", "Access-Control-Request-Method": "DELETE",
			"Access-Control-Request-Headers": "x-amz-date"}, 403, "AccessForbidden", corsNotAllowed, "DELETE", "OBJECT"},
		{"too many headers", "/web/k", hdr{"Origin": "http://x", "Access-Control-Request-Method": "HEAD",
			"Access-Control-Request-Headers": strings.Repeat("a,", maxRequestedHeaders+1)}, 403, "AccessForbidden", corsNotAllowed, "HEAD", "OBJECT"},
	}
	for _, tt := range refused {
		resp, body := ts.unsignedRequest(t, "OPTIONS", tt.target, tt.header, nil)
		var e corsErrorBody
		if err := xml.Unmarshal(body, &e); err != nil || resp.StatusCode != tt.status || e.Code != tt.code || e.Message != tt.msg ||
			e.Method != tt.method || e.ResourceType != tt.kind || e.RequestID != resp.Header.Get("X-Amz-Request-Id") {
			t.Errorf("%s: %d %s\nwant %d %s %q, Method %q, ResourceType %q", tt.name, resp.StatusCode, body, tt.status, tt.code, tt.msg, tt.method, tt.kind)
		}
		wantCORSHeaders(t, tt.name, resp.Header, map[string]string{})
	}
	if n := strings.Count(ts.log.String(), `"op":"`+preflightOp+`"`); n != len(ok)+len(refused) {
		t.Errorf("%d log lines of %s, want %d", n, preflightOp, len(ok)+len(refused))
	}
	if _, err := ts.store.HeadObject("web", "k"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("a preflight made an object: %v", err)
	}
}

// TestCORSHeadersOnRequests: a request from an allowed origin gets its
// rule's headers whoever sends it and however it ends, errors included;
// one from another origin, or for a method no rule allows, gets none
// and is served as usual.
func TestCORSHeadersOnRequests(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "web")
	mustPut(t, ts, "web", "k", "hello", store.Meta{})
	const app = "http://app.example"
	ts.putCORS(t, "web", corsRuleXML(
		`<AllowedOrigin>`+app+`</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod>`+
			`<AllowedMethod>PUT</AllowedMethod><AllowedMethod>POST</AllowedMethod><ExposeHeader>ETag</ExposeHeader>`,
		`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>`,
	))
	full := allowed(app, "GET, HEAD, PUT, POST", "Access-Control-Expose-Headers", "ETag")
	none := map[string]string{}
	origin := http.Header{"Origin": {app}}

	resp, body := ts.do(t, "GET", "/web/k", nil, origin)
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Fatalf("GET: %d %s", resp.StatusCode, body)
	}
	wantCORSHeaders(t, "root GET", resp.Header, full)
	resp, _ = ts.do(t, "HEAD", "/web/k", nil, origin)
	wantCORSHeaders(t, "root HEAD", resp.Header, full)
	resp, body = ts.do(t, "GET", "/web/missing", nil, origin)
	wantError(t, resp, body, 404, "NoSuchKey")
	wantCORSHeaders(t, "NoSuchKey", resp.Header, full)
	resp, body = ts.do(t, "PUT", "/web/new", []byte("x"), http.Header{"Origin": {app}, "X-Amz-Server-Side-Encryption": {"AES256"}})
	wantError(t, resp, body, 501, "NotImplemented")
	wantCORSHeaders(t, "a refused header", resp.Header, full)

	resp, body = ts.unsignedRequest(t, "GET", "/web/k", map[string]string{"Origin": app}, nil)
	wantError(t, resp, body, 403, "AccessDenied")
	wantCORSHeaders(t, "anonymous", resp.Header, full)
	bad := ts.rawRequest(t, "GET", "/web/k", nil, origin)
	bad = signed(t, bad, nil)
	authz := bad.Header.Get("Authorization")
	bad.Header.Set("Authorization", authz[:len(authz)-1]+map[bool]string{true: "1", false: "0"}[strings.HasSuffix(authz, "0")])
	resp, body = send(t, bad)
	wantError(t, resp, body, 403, "SignatureDoesNotMatch")
	wantCORSHeaders(t, "bad signature", resp.Header, full)

	u, err := ts.client.PresignedPutObject(c, "web", "pre", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req := mustRequest(t, "PUT", u.String())
	req.Body, req.ContentLength = http.NoBody, 0
	req.Header.Set("Origin", app)
	resp, body = send(t, req)
	if resp.StatusCode != 200 {
		t.Fatalf("presigned PUT: %d %s", resp.StatusCode, body)
	}
	wantCORSHeaders(t, "presigned PUT", resp.Header, full)

	fields := signedForm(t, time.Now().Add(time.Hour), []any{map[string]string{"bucket": "web"}, []any{"starts-with", "$key", ""}})
	fields = append(fields, formField{"key", "form"})
	ct, form := formBody(t, fields, "f.txt", []byte("form bytes"))
	resp, body = ts.unsignedRequest(t, "POST", "/web", map[string]string{"Origin": app, "Content-Type": ct}, form)
	if resp.StatusCode != 204 {
		t.Fatalf("form upload: %d %s", resp.StatusCode, body)
	}
	wantCORSHeaders(t, "form upload", resp.Header, full)

	// A user's request, allowed or not.
	root := ts.adminClient(testAccessKey, testSecretKey)
	if err := root.AddUser(c, "bob", "bob-secret-123", true); err != nil {
		t.Fatal(err)
	}
	resp, body = send(t, signer4(ts.rawRequest(t, "GET", "/web/k", nil, origin), "bob", "bob-secret-123"))
	wantError(t, resp, body, 403, "AccessDenied")
	wantCORSHeaders(t, "a user refused", resp.Header, full)

	// The second rule: any origin, GET only.
	resp, _ = ts.do(t, "GET", "/web/k", nil, http.Header{"Origin": {"http://other.example"}})
	wantCORSHeaders(t, "any origin", resp.Header, allowed("*", "GET"))
	for _, tt := range []struct {
		name, method, target string
		header               http.Header
		status               int // as without CORS
	}{
		{"no Origin", "GET", "/web/k", nil, 200},
		{"another origin's PUT", "PUT", "/web/other", http.Header{"Origin": {"http://other.example"}}, 200},
		{"a method no rule allows", "DELETE", "/web/pre", origin, 204},
		{"the request method header decides", "GET", "/web/k", http.Header{"Origin": {app}, "Access-Control-Request-Method": {"DELETE"}}, 200},
		{"a bucket without rules", "GET", "/plain/k", origin, 404},
		{"the service", "GET", "/", origin, 200},
		{"the server's own endpoints", "GET", "/minio/health/live", origin, 200},
	} {
		resp, body := ts.do(t, tt.method, tt.target, nil, tt.header)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.status)
		}
		wantCORSHeaders(t, tt.name, resp.Header, none)
	}

	// New rules apply at once; none once they are gone.
	ts.putCORS(t, "web", corsRuleXML(`<AllowedOrigin>`+app+`</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>5</MaxAgeSeconds>`))
	resp, _ = ts.do(t, "GET", "/web/k", nil, origin)
	wantCORSHeaders(t, "new rules", resp.Header, allowed(app, "GET", "Access-Control-Max-Age", "5"))
	if resp, body := ts.do(t, "DELETE", "/web?cors", nil, origin); resp.StatusCode != 204 {
		t.Fatalf("DeleteBucketCors: %d %s", resp.StatusCode, body)
	}
	resp, _ = ts.do(t, "GET", "/web/k", nil, origin)
	wantCORSHeaders(t, "rules removed", resp.Header, none)
}

// signer4 signs a request without a body as the access key ak.
func signer4(req *http.Request, ak, sk string) *http.Request {
	req.Header.Set("X-Amz-Content-Sha256", hexSHA256(nil))
	return signer.SignV4(*req, ak, sk, "", testRegion)
}

// TestCORSCache: the parsed rules are read once per configuration
// generation, and a missing bucket is never cached.
func TestCORSCache(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "web")
	ts.putCORS(t, "web", corsRuleXML(getRule))
	s := &server{store: ts.store}
	a, err := s.bucketCORS("web")
	if err != nil || a == nil {
		t.Fatalf("bucketCORS: %v, %v", a, err)
	}
	if b, _ := s.bucketCORS("web"); b != a {
		t.Error("read again without a change")
	}
	if _, err := s.bucketCORS("nowhere"); !errors.Is(err, store.ErrNoSuchBucket) {
		t.Errorf("missing bucket: %v", err)
	}
	if _, cached := s.cors.m["nowhere"]; cached {
		t.Error("a missing bucket was cached")
	}
	mustBucket(t, ts, "other") // any configuration change moves the generation
	if b, _ := s.bucketCORS("web"); b == a {
		t.Error("kept across a generation")
	}
	if err := ts.store.BucketConfigs().Delete("web", store.ConfigCORS); err != nil {
		t.Fatal(err)
	}
	if b, err := s.bucketCORS("web"); b != nil || err != nil {
		t.Errorf("after delete: %v, %v", b, err)
	}
}
