package iam

import (
	"slices"
	"testing"
)

func TestCanned(t *testing.T) {
	want := []string{ConsoleAdmin, Diagnostics, ReadOnly, ReadWrite, WriteOnly}
	slices.Sort(want)
	if got := CannedNames(); !slices.Equal(got, want) {
		t.Fatalf("CannedNames() = %q, want %q", got, want)
	}
	canned := make(map[string]*Policy)
	for _, name := range want {
		p, ok := Canned(name)
		if !ok || p.Name != name {
			t.Fatalf("Canned(%s) = %v, %v", name, p, ok)
		}
		canned[name] = p
	}
	if _, ok := Canned("nosuch"); ok {
		t.Error("Canned(nosuch) exists")
	}

	// Each call is a copy: changing one cannot change the next.
	p, _ := Canned(ReadOnly)
	p.Statements[0].Action[0] = "s3:*"
	if q, _ := Canned(ReadOnly); q.Statements[0].Action[0] == "s3:*" {
		t.Error("Canned returns shared policies")
	}

	obj, bucket := ObjectARN("b", "k"), BucketARN("b")
	tests := []struct {
		policy, action, resource string
		allowed                  bool
	}{
		{ReadWrite, "s3:PutObject", obj, true},
		{ReadWrite, "s3:DeleteBucket", bucket, true},
		{ReadWrite, "s3:ListAllMyBuckets", AllBucketsARN, true},
		{ReadWrite, "admin:ServerInfo", "*", false},
		{ReadOnly, "s3:GetObject", obj, true},
		{ReadOnly, "s3:GetBucketLocation", bucket, true},
		{ReadOnly, "s3:ListBucket", bucket, false},
		{ReadOnly, "s3:PutObject", obj, false},
		{WriteOnly, "s3:PutObject", obj, true},
		{WriteOnly, "s3:GetObject", obj, false},
		{Diagnostics, "admin:Prometheus", "*", true},
		{Diagnostics, "admin:ServerTrace", "*", true},
		{Diagnostics, "admin:CreateUser", "*", false},
		{Diagnostics, "s3:GetObject", obj, false},
		{ConsoleAdmin, "admin:CreateUser", "*", true},
		{ConsoleAdmin, "kms:CreateKey", "*", true},
		{ConsoleAdmin, "s3:DeleteObject", obj, true},
	}
	for _, tt := range tests {
		d := Evaluate(Request{Action: tt.action, Resource: tt.resource}, canned[tt.policy])
		if d.Allowed() != tt.allowed {
			t.Errorf("%s %s on %s: %v", tt.policy, tt.action, tt.resource, d)
		}
	}
}
