package iam

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// fuzzRequests are evaluated against every policy the fuzzer finds
// valid: a signed and an anonymous request, with and without context.
var fuzzRequests = []Request{
	{Action: "s3:GetObject", Resource: ObjectARN("b", "home/alice/k"), Principals: []string{alice},
		Context: ctx("aws:username", vals("alice"), "s3:prefix", vals("home/"), "aws:SourceIp", vals("192.0.2.1"),
			"aws:CurrentTime", vals("2026-01-02T00:00:00Z"), "s3:max-keys", vals("10"), "aws:SecureTransport", vals("true"),
			"s3:RequestObjectTagKeys", vals("a", "b"))},
	{Action: "s3:ListBucket", Resource: BucketARN("b")},
	{Action: "admin:ServerInfo", Resource: "*", Principals: []string{bob}, Context: ctx("aws:username", vals("*"))},
}

// FuzzPolicy parses arbitrary bytes as both kinds of policy. A refused
// document must be refused with a typed error; an accepted one must
// marshal to a canonical form that parses back equal and marshals to the
// same bytes, and must evaluate without panicking, to the same decision
// as its re-parsed copy.
func FuzzPolicy(f *testing.F) {
	for _, seed := range []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::*"}]}`,
		`{"Version":"2012-10-17","Id":"x","Statement":{"Sid":"a","Effect":"Deny","Principal":"*","NotAction":["s3:Get*"],
			"NotResource":"arn:aws:s3:::b/${aws:username}/*","Condition":{"StringLike":{"s3:prefix":["home/${aws:username, 'x'}/*"]},
			"ForAllValues:StringNotEquals":{"s3:RequestObjectTagKeys":["c"]},"Null":{"aws:userid":true}}}}`,
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":["b","a"]},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::b",
			"Condition":{"NumericLessThanEquals":{"s3:max-keys":1000},"IpAddress":{"aws:SourceIp":["192.0.2.0/24","2001:db8::/32"]},
			"DateGreaterThanIfExists":{"aws:CurrentTime":"2025-01-01"},"ForAnyValue:StringEqualsIgnoreCase":{"k":"V"},"BoolIfExists":{"aws:SecureTransport":"false"}}}]}`,
		`{"Version":"2008-10-17","Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"x"},"Action":["s3:Get?bject"],"Resource":["*"]}]}`,
		`{"Statement":[]}`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, kind := range []Kind{Identity, Bucket} {
			p, err := Parse(doc, kind, MaxBucketPolicySize)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("untyped error %v", err)
				}
				continue
			}
			out, err := p.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON: %v", err)
			}
			q, err := Parse(out, kind, 0)
			if err != nil {
				t.Fatalf("canonical form refused: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(p, q) {
				t.Fatalf("re-parsed policy differs:\n%+v\n%+v", p, q)
			}
			again, _ := q.MarshalJSON()
			if !bytes.Equal(out, again) {
				t.Fatalf("canonical form not stable:\n%s\n%s", out, again)
			}
			for _, req := range fuzzRequests {
				if d1, d2 := Evaluate(req, p), Evaluate(req, q); d1 != d2 {
					t.Fatalf("decisions differ: %v, %v", d1, d2)
				}
			}
		}
	})
}
