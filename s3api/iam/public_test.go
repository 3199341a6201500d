package iam

import "testing"

func TestIsPublic(t *testing.T) {
	const head = `{"Version":"2012-10-17","Statement":[`
	for _, tt := range []struct {
		name   string
		stmts  string
		public bool
	}{
		{"anyone may read", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, true},
		{"AWS star", `{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, true},
		{"named user", `{"Effect":"Allow","Principal":{"AWS":["alice"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, false},
		{"deny to anyone", `{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, false},
		{"NotPrincipal", `{"Effect":"Allow","NotPrincipal":{"AWS":"alice"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, true},
		{"fixed network", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"10.1.0.0/16"}}}`, false},
		{"network of everyone", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/1"}}}`, true},
		{"negated network", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}`, true},
		{"wildcard source", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringLike":{"aws:SourceArn":"arn:*"}}}`, true},
		{"TLS only is still public", `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"Bool":{"aws:SecureTransport":"true"}}}`, true},
		{"one public among private", `{"Effect":"Allow","Principal":{"AWS":"alice"},"Action":"s3:*","Resource":"arn:aws:s3:::b/*"},{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"}`, true},
	} {
		p, err := Parse([]byte(head+tt.stmts+`]}`), Bucket, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := p.IsPublic(); got != tt.public {
			t.Errorf("%s: IsPublic = %v, want %v", tt.name, got, tt.public)
		}
	}
}

func TestUsesContext(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		uses bool
	}{
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::home/${aws:username}/*"}]}`, true},
		{`{"Version":"2008-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::home/${aws:username}/*"}]}`, false},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","NotResource":"arn:aws:s3:::${aws:username}"}]}`, true},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"true"}}}]}`, true},
	} {
		p, err := Parse([]byte(tt.doc), Identity, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.UsesContext(); got != tt.uses {
			t.Errorf("%s: UsesContext = %v, want %v", tt.doc, got, tt.uses)
		}
	}
	if (*Policy)(nil).UsesContext() {
		t.Error("a nil policy uses the context")
	}
}
