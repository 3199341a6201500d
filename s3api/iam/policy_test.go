package iam

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t testing.TB, doc string, kind Kind) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc), kind, 0)
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return p
}

func TestParseForms(t *testing.T) {
	// One statement as an object, strings for lists, "*" as principal.
	p := mustParse(t, `{"Version":"2012-10-17","Id":"p1","Statement":{
		"Sid":"Public","Effect":"Allow","Principal":"*",
		"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*",
		"Condition":{"NumericLessThan":{"s3:max-keys":100},"Bool":{"aws:SecureTransport":true}}}}`, Bucket)
	want := &Policy{Version: Version2012, ID: "p1", Statements: []Statement{{
		Sid: "Public", Effect: Allow, Principal: []string{"*"},
		Action: []string{"s3:GetObject"}, Resource: []string{"arn:aws:s3:::photos/*"},
		Conditions: []Condition{
			{Operator: "Bool", Key: "aws:SecureTransport", Values: []string{"true"}},
			{Operator: "NumericLessThan", Key: "s3:max-keys", Values: []string{"100"}},
		},
	}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}

	// {"AWS": ...} principals become one sorted set without duplicates.
	p = mustParse(t, `{"Statement":[{"Effect":"Deny","NotPrincipal":{"AWS":["b","a","b"]},
		"NotAction":["s3:Get*"],"NotResource":"*"}]}`, Bucket)
	if got := p.Statements[0].NotPrincipal; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("NotPrincipal = %q", got)
	}
	p = mustParse(t, `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"*","Resource":"*"}]}`, Bucket)
	if got := p.Statements[0].Principal; !reflect.DeepEqual(got, []string{"*"}) {
		t.Errorf("Principal = %q", got)
	}
}

// TestParseErrors checks that each mistake is refused with its kind
// and location; messages are for people and not compared.
func TestParseErrors(t *testing.T) {
	const allow = `"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"`
	stmt := func(extra string) string { return `{"Statement":[{` + allow + extra + `}]}` }
	tests := []struct {
		name    string
		doc     string
		kind    Kind
		stmt    int
		element string
	}{
		{"not JSON", `{"Statement":`, Identity, -1, ""},
		{"not an object", `[]`, Identity, -1, ""},
		{"trailing data", stmt("") + "{}", Identity, -1, ""},
		{"unknown element", `{"Statements":[{` + allow + `}]}`, Identity, -1, "Statements"},
		{"element names have case", `{"statement":[{` + allow + `}]}`, Identity, -1, "statement"},
		{"bad version", `{"Version":"2020-01-01","Statement":[{` + allow + `}]}`, Identity, -1, "Version"},
		{"version not a string", `{"Version":2012,"Statement":[{` + allow + `}]}`, Identity, -1, "Version"},
		{"missing Statement", `{"Version":"2012-10-17"}`, Identity, -1, "Statement"},
		{"empty Statement", `{"Statement":[]}`, Identity, -1, "Statement"},
		{"Statement not a list", `{"Statement":"x"}`, Identity, -1, "Statement"},
		{"statement not an object", `{"Statement":[1]}`, Identity, 0, ""},
		{"unknown statement element", stmt(`,"Actions":"s3:*"`), Identity, 0, "Actions"},
		{"unknown Effect", `{"Statement":[{"Effect":"Alow","Action":"*","Resource":"*"}]}`, Identity, 0, "Effect"},
		{"missing Effect", `{"Statement":[{"Action":"*","Resource":"*"}]}`, Identity, 0, "Effect"},
		{"Action and NotAction", stmt(`,"NotAction":"s3:PutObject"`), Identity, 0, "Action"},
		{"no Action", `{"Statement":[{"Effect":"Allow","Resource":"*"}]}`, Identity, 0, "Action"},
		{"empty Action", `{"Statement":[{"Effect":"Allow","Action":[],"Resource":"*"}]}`, Identity, 0, "Action"},
		{"Action without service", `{"Statement":[{"Effect":"Allow","Action":"GetObject","Resource":"*"}]}`, Identity, 0, "Action"},
		{"Action not a string", `{"Statement":[{"Effect":"Allow","Action":[1],"Resource":"*"}]}`, Identity, 0, "Action"},
		{"no Resource", `{"Statement":[{"Effect":"Allow","Action":"*"}]}`, Identity, 0, "Resource"},
		{"malformed ARN", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"photos/*"}]}`, Identity, 0, "Resource"},
		{"short ARN", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3"}]}`, Identity, 0, "Resource"},
		{"ARN without resource", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::"}]}`, Identity, 0, "Resource"},
		{"bad variable", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::h/${aws:username"}]}`, Identity, 0, "Resource"},
		{"principal in identity policy", stmt(`,"Principal":"*"`), Identity, 0, "Principal"},
		{"no principal in bucket policy", stmt(""), Bucket, 0, "Principal"},
		{"Principal and NotPrincipal", stmt(`,"Principal":"*","NotPrincipal":"*"`), Bucket, 0, "Principal"},
		{"service principal", stmt(`,"Principal":{"Service":"logging.s3.amazonaws.com"}`), Bucket, 0, "Principal"},
		{"string principal", stmt(`,"Principal":"alice"`), Bucket, 0, "Principal"},
		{"empty principal", stmt(`,"Principal":{"AWS":[]}`), Bucket, 0, "Principal"},
		{"wildcard principal", stmt(`,"Principal":{"AWS":"arn:aws:iam::1:user/*"}`), Bucket, 0, "Principal"},
		{"duplicate Sid", `{"Statement":[{"Sid":"a",` + allow + `},{"Sid":"a",` + allow + `}]}`, Identity, 1, "Sid"},
		{"unknown operator", stmt(`,"Condition":{"StringEqual":{"s3:prefix":"a"}}`), Identity, 0, "Condition"},
		{"operator case", stmt(`,"Condition":{"stringequals":{"s3:prefix":"a"}}`), Identity, 0, "Condition"},
		{"bare IfExists", stmt(`,"Condition":{"IfExists":{"s3:prefix":"a"}}`), Identity, 0, "Condition"},
		{"qualified Null", stmt(`,"Condition":{"ForAnyValue:Null":{"s3:prefix":"true"}}`), Identity, 0, "Condition"},
		{"Null if exists", stmt(`,"Condition":{"NullIfExists":{"s3:prefix":"true"}}`), Identity, 0, "Condition"},
		{"not a number", stmt(`,"Condition":{"NumericLessThan":{"s3:max-keys":"ten"}}`), Identity, 0, "Condition"},
		{"infinite number", stmt(`,"Condition":{"NumericLessThan":{"s3:max-keys":1e400}}`), Identity, 0, "Condition"},
		{"not a date", stmt(`,"Condition":{"DateLessThan":{"aws:CurrentTime":"tomorrow"}}`), Identity, 0, "Condition"},
		{"not an address", stmt(`,"Condition":{"IpAddress":{"aws:SourceIp":"300.1.1.1/8"}}`), Identity, 0, "Condition"},
		{"not a bool", stmt(`,"Condition":{"Bool":{"aws:SecureTransport":"yes"}}`), Identity, 0, "Condition"},
		{"no values", stmt(`,"Condition":{"StringEquals":{"s3:prefix":[]}}`), Identity, 0, "Condition"},
		{"object value", stmt(`,"Condition":{"StringEquals":{"s3:prefix":{}}}`), Identity, 0, "Condition"},
		{"null value", stmt(`,"Condition":{"StringEquals":{"s3:prefix":null}}`), Identity, 0, "Condition"},
		{"empty key", stmt(`,"Condition":{"StringEquals":{"":"a"}}`), Identity, 0, "Condition"},
		{"condition not an object", stmt(`,"Condition":["a"]`), Identity, 0, "Condition"},
		{"operator not an object", stmt(`,"Condition":{"StringEquals":"a"}`), Identity, 0, "Condition"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.doc), tt.kind, 0)
		var pe *PolicyError
		switch {
		case !errors.Is(err, ErrMalformed):
			t.Errorf("%s: err = %v, want ErrMalformed", tt.name, err)
		case !errors.As(err, &pe) || pe.Statement != tt.stmt || pe.Element != tt.element:
			t.Errorf("%s: err = %v, want statement %d element %q", tt.name, err, tt.stmt, tt.element)
		}
	}
}

func TestParseVersion2008KeepsVariablesAsText(t *testing.T) {
	// Under 2008-10-17 "${" is text, so an unclosed one is no error.
	mustParse(t, `{"Version":"2008-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::h/${aws:username"}]}`, Identity)
}

func TestParseLimit(t *testing.T) {
	// A statement list that compacts to just over the limit.
	var b strings.Builder
	b.WriteString(`{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":[`)
	for b.Len() < MaxIdentityPolicySize {
		b.WriteString(`"arn:aws:s3:::bucket/some/long/prefix/*",`)
	}
	b.WriteString(`"*"]}]}`)
	big := b.String()
	_, err := Parse([]byte(big), Identity, MaxIdentityPolicySize)
	var pe *PolicyError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &pe) {
		t.Errorf("over the limit: err = %v, want ErrTooLarge", err)
	}
	if _, err := Parse([]byte(big), Identity, MaxBucketPolicySize); err != nil {
		t.Errorf("under a larger limit: %v", err)
	}

	// Indentation does not count, as in IAM.
	small := `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	padded := strings.ReplaceAll(small, ",", ",\n"+strings.Repeat(" ", 3000))
	if _, err := Parse([]byte(padded), Identity, len(small)); err != nil {
		t.Errorf("indented policy within the limit: %v", err)
	}
	if _, err := Parse([]byte(padded), Identity, len(small)-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one byte over: err = %v, want ErrTooLarge", err)
	}
}

// TestRoundTrip checks the canonical form: it is what MarshalJSON
// writes, and it parses back to an equal policy.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		doc, canonical string
		kind           Kind
	}{
		{
			`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::*"}}`,
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`,
			Identity,
		},
		{
			`{
			  "Id": "home folders",
			  "Version": "2012-10-17",
			  "Statement": [
			    {"Resource": "arn:aws:s3:::home", "Sid": "List", "Effect": "Allow", "Principal": {"AWS": ["u2", "u1"]},
			     "Action": "s3:ListBucket",
			     "Condition": {"StringLike": {"s3:prefix": ["home/${aws:username}/*", ""]},
			                   "ForAnyValue:StringEquals": {"s3:RequestObjectTagKeys": "a&b<c>"},
			                   "NumericLessThanEquals": {"s3:max-keys": 1000}}},
			    {"Effect": "Deny", "NotPrincipal": "*", "NotAction": ["s3:Get*"], "NotResource": "arn:aws:s3:::home/*",
			     "Condition": {"Bool": {"aws:SecureTransport": false}, "Null": {"aws:username": "true"}}}
			  ]
			}`,
			`{"Version":"2012-10-17","Id":"home folders","Statement":[` +
				`{"Sid":"List","Effect":"Allow","Principal":{"AWS":["u1","u2"]},"Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::home"],` +
				`"Condition":{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a&b<c>"]},"NumericLessThanEquals":{"s3:max-keys":["1000"]},"StringLike":{"s3:prefix":["home/${aws:username}/*",""]}}},` +
				`{"Effect":"Deny","NotPrincipal":{"AWS":["*"]},"NotAction":["s3:Get*"],"NotResource":["arn:aws:s3:::home/*"],` +
				`"Condition":{"Bool":{"aws:SecureTransport":["false"]},"Null":{"aws:username":["true"]}}}]}`,
			Bucket,
		},
	}
	for _, tt := range tests {
		p := mustParse(t, tt.doc, tt.kind)
		out, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != tt.canonical {
			t.Errorf("MarshalJSON:\n got %s\nwant %s", out, tt.canonical)
		}
		if q := mustParse(t, string(out), tt.kind); !reflect.DeepEqual(p, q) {
			t.Errorf("re-parsed policy differs:\n got %+v\nwant %+v", q, p)
		}
	}
}

// TestJSONEmbedding checks the encoding/json interfaces, which accept
// either kind and keep the Name, which is not part of the document.
func TestJSONEmbedding(t *testing.T) {
	var cfg struct {
		Policies []*Policy
	}
	err := json.Unmarshal([]byte(`{"Policies":[
		{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]},
		{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}]}]}`), &cfg)
	if err != nil || len(cfg.Policies) != 2 {
		t.Fatalf("Unmarshal: %v", err)
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"Policies":[{"Statement":[{"Effect":"Allow","Action":["*"],"Resource":["*"]}]},` +
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["*"],"Resource":["*"]}]}]}`
	if string(out) != want {
		t.Errorf("Marshal:\n got %s\nwant %s", out, want)
	}
	p := &Policy{Name: "kept"}
	if err := json.Unmarshal([]byte(`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`), p); err != nil || p.Name != "kept" {
		t.Errorf("Unmarshal into a named policy: %v, name %q", err, p.Name)
	}
	if err := json.Unmarshal([]byte(`{"Statement":[]}`), p); !errors.Is(err, ErrMalformed) {
		t.Errorf("Unmarshal of an invalid policy: %v", err)
	}
}

func TestValidateBuiltPolicies(t *testing.T) {
	p := &Policy{Version: Version2012, Statements: []Statement{{
		Effect: Allow, Action: []string{"s3:*"}, Resource: []string{"*"},
		Conditions: []Condition{
			{Operator: "StringEquals", Key: "s3:prefix", Values: []string{"a"}},
			{Operator: "StringEquals", Key: "s3:prefix", Values: []string{"b"}},
		},
	}}}
	var pe *PolicyError
	if err := p.Validate(Identity); !errors.As(err, &pe) || pe.Element != "Condition" {
		t.Errorf("repeated operator and key: %v", err)
	}
}
