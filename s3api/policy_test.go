package s3api

import (
	"testing"
	"time"
)

// TestPostPolicyConditions: each condition form, evaluated against one
// form's fields, passes or fails with S3's code.
func TestPostPolicyConditions(t *testing.T) {
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fields := map[string]string{
		"bucket": "photos", "key": "user/eric/cat.png", "content-type": "image/png, image/gif",
		"x-amz-meta-tag": "Blue", "policy": "p", "x-amz-signature": "s", "x-ignore-me": "1",
	}
	base := `{"bucket":"photos"},["starts-with","$key",""],["starts-with","$Content-Type","image/"],["eq","$x-amz-meta-tag","Blue"]`
	cases := []struct {
		name, conditions string
		now              time.Time
		code             string // "" passes
	}{
		{"all hold", base, exp.Add(-time.Second), ""},
		{"expired at the instant", base, exp, "AccessDenied"},
		{"field names without case", `{"BUCKET":"photos"},["starts-with","$KEY","user/"],["starts-with","$content-TYPE","image/"],["eq","$X-Amz-Meta-Tag","Blue"]`, exp.Add(-time.Hour), ""},
		{"values with case", `{"bucket":"photos"},["starts-with","$key",""],["starts-with","$Content-Type","image/"],["eq","$x-amz-meta-tag","blue"]`, exp.Add(-time.Hour), "AccessDenied"},
		{"object of several fields", `{"bucket":"photos","x-amz-meta-tag":"Blue"},["starts-with","$key","user/eric/"],["starts-with","$content-type","image/"]`, exp.Add(-time.Hour), ""},
		{"one content type fails the prefix", `{"bucket":"photos"},["starts-with","$key",""],["starts-with","$Content-Type","image/p"],["eq","$x-amz-meta-tag","Blue"]`, exp.Add(-time.Hour), "AccessDenied"},
		{"field no condition names", `{"bucket":"photos"},["starts-with","$key",""],["starts-with","$Content-Type","image/"]`, exp.Add(-time.Hour), "AccessDenied"},
		{"condition on an absent field", base + `,["eq","$acl","private"]`, exp.Add(-time.Hour), "AccessDenied"},
		{"starts-with \"\" on an absent field", base + `,["starts-with","$acl",""]`, exp.Add(-time.Hour), ""},
		{"another bucket", `{"bucket":"other"},["starts-with","$key",""],["starts-with","$Content-Type","image/"],["eq","$x-amz-meta-tag","Blue"]`, exp.Add(-time.Hour), "AccessDenied"},
		{"length range as strings", base + `,["content-length-range","0","10"]`, exp.Add(-time.Hour), ""},
		{"length range reversed", base + `,["content-length-range",10,9]`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"length range negative", base + `,["content-length-range",-1,9]`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"unknown operator", base + `,["lt","$key","z"]`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"field without $", base + `,["eq","key","z"]`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"two elements", base + `,["eq","$key"]`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"number as value", base + `,{"key":5}`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"empty object", base + `,{}`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
		{"string condition", base + `,"key"`, exp.Add(-time.Hour), "InvalidPolicyDocument"},
	}
	for _, c := range cases {
		doc := `{"expiration":"2030-01-01T00:00:00.000Z","conditions":[` + c.conditions + `]}`
		p, err := parsePostPolicy([]byte(doc))
		if err == nil {
			err = p.check(c.now, fields)
		}
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (err == nil || toS3Error(err).code != c.code):
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	p, err := parsePostPolicy([]byte(`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",5,9]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := p.sizeBounds(7); lo != 5 || hi != 7 {
		t.Errorf("size bounds %d..%d, want 5..7 (the limit caps the max)", lo, hi)
	}
	for _, doc := range []string{`{"conditions":[]}`, `{"expiration":"2030-01-01","conditions":[]}`, `{"expiration":"2030-01-01T00:00:00+01:00","conditions":[]}`,
		`{"expiration":"2030-01-01T00:00:00Z"}`, `{"expiration":"2030-01-01T00:00:00Z","conditions":[]} {}`} {
		if _, err := parsePostPolicy([]byte(doc)); err == nil || toS3Error(err).code != "InvalidPolicyDocument" {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
