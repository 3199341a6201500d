package s3api

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/s3api/sigv4"
)

// FuzzPostFormV2 drives the V2 form path, signature to policy: any
// policy, access key and signature, with any extra field, is accepted or
// refused with an S3 code, never an InternalError; a form is accepted
// only when its signature is the HMAC of its policy under the key's
// secret, its policy has not expired and names every field but the
// exempt ones.
func FuzzPostFormV2(f *testing.F) {
	for _, doc := range []string{
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"forms"},["starts-with","$key","foo"],{"acl":"private"},["content-length-range",0,1024]]}`,
		`{"expiration":"2030-01-01T00:00:00.000Z","conditions":[{"bucket":"forms"},{"key":"k"},["starts-with","$x-amz-meta-a",""]]}`,
		`{"EXPIRATION":"2030-01-01T00:00:00Z","conditions":[]}`,
		`{"expiration":"2030-01-01T00:00:00Z","CONDITIONS":[]}`,
		`{"expiration":"2000-01-01T00:00:00Z","conditions":[{"bucket":"forms"}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",0]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{}]}`,
		`{"expiration":null,"conditions":null}`, `[]`, `null`, ``,
	} {
		for mode := range uint8(6) {
			f.Add([]byte(doc), mode, "foo.txt", "x-amz-meta-a", "b")
		}
	}
	s := &server{verifier: &sigv4.Verifier{Credentials: sigv4.StaticCredentials{testAccessKey: testSecretKey, "other": "other-secret"}}}
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc []byte, mode uint8, key, extraName, extraValue string) {
		policy := base64.StdEncoding.EncodeToString(doc)
		if mode&8 != 0 {
			policy = string(doc) // not base64, most likely
		}
		fields := map[string]string{"policy": policy, "key": key, "acl": "private"}
		switch mode % 6 {
		case 0: // signed by the root key
			fields["awsaccesskeyid"], fields["signature"] = testAccessKey, sigv4.SignPostPolicyV2(testSecretKey, policy)
		case 1: // signed by another key
			fields["awsaccesskeyid"], fields["signature"] = "other", sigv4.SignPostPolicyV2("other-secret", policy)
		case 2: // a key's name with another's signature
			fields["awsaccesskeyid"], fields["signature"] = "other", sigv4.SignPostPolicyV2(testSecretKey, policy)
		case 3: // no signature
			fields["awsaccesskeyid"] = testAccessKey
		case 4: // an unknown key
			fields["awsaccesskeyid"], fields["signature"] = "nobody", sigv4.SignPostPolicyV2(testSecretKey, policy)
		case 5: // the signature of another document
			fields["awsaccesskeyid"], fields["signature"] = testAccessKey, sigv4.SignPostPolicyV2(testSecretKey, policy+"A")
		}
		// Any extra field but one of V4's signature, which makes a V4 form.
		if name := strings.ToLower(extraName); name != "" && fields[name] == "" && !slices.Contains(formSignatureFields, name) {
			fields[name] = extraValue
		}
		auth, p, err := s.authorizeForm(fields)
		if err != nil {
			if code := toS3Error(err).code; codes[code].status == 0 || code == "InternalError" {
				t.Fatalf("mode %d %q: %v", mode, doc, err)
			}
			return
		}
		secret, _ := s.verifier.Credentials.SecretKey(fields["awsaccesskeyid"])
		if auth.Kind != sigv4.V2PostForm || auth.AccessKey != fields["awsaccesskeyid"] || secret == "" ||
			fields["signature"] != sigv4.SignPostPolicyV2(secret, fields["policy"]) {
			t.Fatalf("mode %d: accepted %+v for %v", mode, auth, fields)
		}
		checked := map[string]string{"bucket": "forms"}
		for k, v := range fields {
			checked[k] = v
		}
		exemptFormV2Fields(checked)
		if err := p.check(now, checked); err != nil {
			if code := toS3Error(err).code; code != "AccessDenied" {
				t.Fatalf("%q: check: %v", doc, err)
			}
			return
		}
		if !now.Before(p.expiration) {
			t.Fatalf("%q: accepted at %v, expired %v", doc, now, p.expiration)
		}
		for name := range checked {
			if !exemptField(name) && name != "bucket" && !p.coveredFieldNames[name] {
				t.Fatalf("%q: accepted a form whose %s no condition names", doc, name)
			}
		}
		if _, ok := checked["awsaccesskeyid"]; ok {
			t.Fatal("the signature fields reached the policy check")
		}
	})
}
