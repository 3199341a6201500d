package iam

import (
	"testing"
)

const (
	alice = "arn:aws:iam::111122223333:user/alice"
	bob   = "arn:aws:iam::111122223333:user/bob"
)

func named(t testing.TB, name, doc string, kind Kind) *Policy {
	t.Helper()
	p := mustParse(t, doc, kind)
	p.Name = name
	return p
}

// TestEvaluate runs AWS's documented evaluation examples. Each case is
// one request against a set of policies, with the expected effect and,
// for matched decisions, the deciding policy and statement.
func TestEvaluate(t *testing.T) {
	all := named(t, "all", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`, Identity)

	// An explicit Deny in the bucket policy beats the identity's Allow.
	noDelete := named(t, "noDelete", `{"Version":"2012-10-17","Statement":[
		{"Sid":"NoDelete","Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::photos/*"}]}`, Bucket)

	// NotAction: everything but deleting buckets.
	notAction := named(t, "notAction", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","NotAction":"s3:DeleteBucket","Resource":"*"}]}`, Identity)
	// Deny with NotAction: only reads are left.
	readsOnly := named(t, "readsOnly", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","NotAction":["s3:Get*","s3:List*"],"Resource":"*"}]}`, Identity)

	// Deny with NotResource: nothing outside public/.
	onlyPublic := named(t, "onlyPublic", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Action":"s3:*","NotResource":["arn:aws:s3:::site/public/*","arn:aws:s3:::site"]}]}`, Identity)

	// Wildcards in actions and resources.
	wild := named(t, "wild", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:Get*","Resource":["arn:aws:s3:::photos/*.jpg","arn:aws:s3:::photos/??.png"]}]}`, Identity)

	// Bucket policies: anonymous reads; one named user may write.
	public := named(t, "public", `{"Version":"2012-10-17","Statement":[
		{"Sid":"PublicRead","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::www/*"},
		{"Sid":"AliceWrites","Effect":"Allow","Principal":{"AWS":["`+alice+`"]},"Action":"s3:PutObject","Resource":"arn:aws:s3:::www/*"}]}`, Bucket)
	// NotPrincipal with Deny: everyone but alice is refused.
	onlyAlice := named(t, "onlyAlice", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","NotPrincipal":{"AWS":"`+alice+`"},"Action":"s3:*","Resource":"arn:aws:s3:::private/*"}]}`, Bucket)

	// AWS's home folder example: list and use only one's own prefix.
	home := named(t, "home", `{"Version":"2012-10-17","Statement":[
		{"Sid":"ListOwnHome","Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::home",
		 "Condition":{"StringLike":{"s3:prefix":["home/${aws:username}/*","home/${aws:username}/"]}}},
		{"Sid":"UseOwnHome","Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::home/home/${aws:username}/*"}]}`, Identity)

	// AWS's examples for bucket policies: TLS only, one address range.
	tlsOnly := named(t, "tlsOnly", `{"Version":"2012-10-17","Statement":[
		{"Sid":"TLS","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::photos","arn:aws:s3:::photos/*"],
		 "Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, Bucket)
	office := named(t, "office", `{"Version":"2012-10-17","Statement":[
		{"Sid":"Office","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::photos/*",
		 "Condition":{"NotIpAddress":{"aws:SourceIp":["192.0.2.0/24","2001:db8::/32"]}}}]}`, Bucket)

	// Version 2008: the variable is text, so the resource matches nothing real.
	old := named(t, "old", `{"Version":"2008-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::home/${aws:username}/*"}]}`, Identity)

	user := func(name string) Context { return ctx("aws:username", vals(name)) }
	secure := ctx("aws:SecureTransport", vals("true"), "aws:SourceIp", vals("192.0.2.7"))
	plain := ctx("aws:SecureTransport", vals("false"), "aws:SourceIp", vals("192.0.2.7"))

	type want struct {
		effect Effect
		policy string // "" for the implicit deny
		index  int
	}
	tests := []struct {
		name     string
		req      Request
		policies []*Policy
		want     want
	}{
		{"no policies", Request{Action: "s3:GetObject", Resource: ObjectARN("b", "k")}, nil, want{Deny, "", 0}},
		{"allow", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "k")}, []*Policy{all, noDelete}, want{Allow, "all", 0}},
		{"explicit deny wins", Request{Action: "s3:DeleteObject", Resource: ObjectARN("photos", "k"), Principals: []string{alice}}, []*Policy{all, noDelete}, want{Deny, "noDelete", 0}},
		{"deny wins in either order", Request{Action: "s3:DeleteObject", Resource: ObjectARN("photos", "k")}, []*Policy{noDelete, all}, want{Deny, "noDelete", 0}},
		{"deny elsewhere does not apply", Request{Action: "s3:DeleteObject", Resource: ObjectARN("other", "k")}, []*Policy{all, noDelete}, want{Allow, "all", 0}},
		{"first allow is reported", Request{Action: "s3:GetObject", Resource: "x"}, []*Policy{nil, notAction, all}, want{Allow, "notAction", 0}},

		{"NotAction allows the rest", Request{Action: "s3:PutObject", Resource: BucketARN("b")}, []*Policy{notAction}, want{Allow, "notAction", 0}},
		{"NotAction leaves its own", Request{Action: "s3:DeleteBucket", Resource: BucketARN("b")}, []*Policy{notAction}, want{Deny, "", 0}},
		{"deny NotAction keeps reads", Request{Action: "s3:GetObject", Resource: ObjectARN("b", "k")}, []*Policy{all, readsOnly}, want{Allow, "all", 0}},
		{"deny NotAction refuses writes", Request{Action: "s3:PutObject", Resource: ObjectARN("b", "k")}, []*Policy{all, readsOnly}, want{Deny, "readsOnly", 0}},

		{"NotResource outside", Request{Action: "s3:GetObject", Resource: ObjectARN("site", "private/x")}, []*Policy{all, onlyPublic}, want{Deny, "onlyPublic", 0}},
		{"NotResource inside", Request{Action: "s3:GetObject", Resource: ObjectARN("site", "public/x")}, []*Policy{all, onlyPublic}, want{Allow, "all", 0}},
		{"NotResource bucket", Request{Action: "s3:ListBucket", Resource: BucketARN("site")}, []*Policy{all, onlyPublic}, want{Allow, "all", 0}},

		{"action wildcard", Request{Action: "s3:GetObjectVersion", Resource: ObjectARN("photos", "a/b.jpg")}, []*Policy{wild}, want{Allow, "wild", 0}},
		{"action without case", Request{Action: "S3:GETOBJECT", Resource: ObjectARN("photos", "b.jpg")}, []*Policy{wild}, want{Allow, "wild", 0}},
		{"action outside wildcard", Request{Action: "s3:PutObject", Resource: ObjectARN("photos", "b.jpg")}, []*Policy{wild}, want{Deny, "", 0}},
		{"resource *", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "2024/12/cat.jpg")}, []*Policy{wild}, want{Allow, "wild", 0}},
		{"resource with case", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "cat.JPG")}, []*Policy{wild}, want{Deny, "", 0}},
		{"resource ?", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "ab.png")}, []*Policy{wild}, want{Allow, "wild", 0}},
		{"resource ? is one character", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "abc.png")}, []*Policy{wild}, want{Deny, "", 0}},

		{"anonymous, public statement", Request{Action: "s3:GetObject", Resource: ObjectARN("www", "index.html")}, []*Policy{public}, want{Allow, "public", 0}},
		{"anonymous as *", Request{Action: "s3:GetObject", Resource: ObjectARN("www", "index.html"), Principals: []string{Anonymous}}, []*Policy{public}, want{Allow, "public", 0}},
		{"anonymous, named statement", Request{Action: "s3:PutObject", Resource: ObjectARN("www", "index.html")}, []*Policy{public}, want{Deny, "", 0}},
		{"anonymous cannot claim *", Request{Action: "s3:PutObject", Resource: ObjectARN("www", "x"), Principals: []string{Anonymous, ""}}, []*Policy{public}, want{Deny, "", 0}},
		{"named principal", Request{Action: "s3:PutObject", Resource: ObjectARN("www", "x"), Principals: []string{"AKIAALICE", alice}}, []*Policy{public}, want{Allow, "public", 1}},
		{"other principal", Request{Action: "s3:PutObject", Resource: ObjectARN("www", "x"), Principals: []string{bob}}, []*Policy{public}, want{Deny, "", 0}},
		{"NotPrincipal spares alice", Request{Action: "s3:GetObject", Resource: ObjectARN("private", "x"), Principals: []string{alice}}, []*Policy{all, onlyAlice}, want{Allow, "all", 0}},
		{"NotPrincipal refuses bob", Request{Action: "s3:GetObject", Resource: ObjectARN("private", "x"), Principals: []string{bob}}, []*Policy{all, onlyAlice}, want{Deny, "onlyAlice", 0}},
		{"NotPrincipal refuses anonymous", Request{Action: "s3:GetObject", Resource: ObjectARN("private", "x")}, []*Policy{onlyAlice}, want{Deny, "onlyAlice", 0}},

		{"home: list own", Request{Action: "s3:ListBucket", Resource: BucketARN("home"), Context: ctx("aws:username", vals("alice"), "s3:prefix", vals("home/alice/"))}, []*Policy{home}, want{Allow, "home", 0}},
		{"home: list other", Request{Action: "s3:ListBucket", Resource: BucketARN("home"), Context: ctx("aws:username", vals("alice"), "s3:prefix", vals("home/bob/"))}, []*Policy{home}, want{Deny, "", 0}},
		{"home: list without prefix", Request{Action: "s3:ListBucket", Resource: BucketARN("home"), Context: user("alice")}, []*Policy{home}, want{Deny, "", 0}},
		{"home: read own", Request{Action: "s3:GetObject", Resource: ObjectARN("home", "home/alice/a.txt"), Context: user("alice")}, []*Policy{home}, want{Allow, "home", 1}},
		{"home: read other", Request{Action: "s3:GetObject", Resource: ObjectARN("home", "home/bob/a.txt"), Context: user("alice")}, []*Policy{home}, want{Deny, "", 0}},
		{"home: a name is no wildcard", Request{Action: "s3:GetObject", Resource: ObjectARN("home", "home/bob/a.txt"), Context: user("*")}, []*Policy{home}, want{Deny, "", 0}},
		{"home: anonymous", Request{Action: "s3:GetObject", Resource: ObjectARN("home", "home/alice/a.txt")}, []*Policy{home}, want{Deny, "", 0}},
		{"version 2008: no variables", Request{Action: "s3:GetObject", Resource: ObjectARN("home", "alice/a"), Context: user("alice")}, []*Policy{old}, want{Deny, "", 0}},
		{"version 2008: text", Request{Action: "s3:GetObject", Resource: ObjectARN("home", "${aws:username}/a"), Context: user("alice")}, []*Policy{old}, want{Allow, "old", 0}},

		{"TLS: https", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "k"), Context: secure}, []*Policy{all, tlsOnly}, want{Allow, "all", 0}},
		{"TLS: http", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "k"), Context: plain}, []*Policy{all, tlsOnly}, want{Deny, "tlsOnly", 0}},
		{"TLS: http on the bucket", Request{Action: "s3:ListBucket", Resource: BucketARN("photos"), Context: plain}, []*Policy{all, tlsOnly}, want{Deny, "tlsOnly", 0}},
		{"office: inside", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "k"), Context: secure}, []*Policy{all, office}, want{Allow, "all", 0}},
		{"office: ipv6 inside", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "k"), Context: ctx("aws:SourceIp", vals("2001:db8::5"))}, []*Policy{all, office}, want{Allow, "all", 0}},
		{"office: outside", Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "k"), Context: ctx("aws:SourceIp", vals("203.0.113.9"))}, []*Policy{all, office}, want{Deny, "office", 0}},
	}
	for _, tt := range tests {
		d := Evaluate(tt.req, tt.policies...)
		got := want{d.Effect, d.Policy, d.Index}
		if got != tt.want || d.Matched != (tt.want.policy != "") || d.Allowed() != (tt.want.effect == Allow) {
			t.Errorf("%s: %v, want %+v", tt.name, d, tt.want)
		}
	}
}

func TestDecisionString(t *testing.T) {
	tests := []struct {
		d    Decision
		want string
	}{
		{Decision{Effect: Deny}, "Deny: no statement applies"},
		{Decision{Effect: Allow, Matched: true, Policy: "readwrite"}, `Allow by "readwrite" statement 0`},
		{Decision{Effect: Deny, Matched: true, Policy: "bucket photos", Sid: "TLS", Index: 2}, `Deny by "bucket photos" statement 2 ("TLS")`},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
}

// TestEvaluateFailsClosed covers policies built in code that skipped
// Validate: an unknown operator or effect never grants access.
func TestEvaluateFailsClosed(t *testing.T) {
	broken := func(effect Effect) *Policy {
		return &Policy{Name: "broken", Statements: []Statement{{
			Effect: effect, Action: []string{"*"}, Resource: []string{"*"},
			Conditions: []Condition{{Operator: "StringEqualz", Key: "k", Values: []string{"v"}}},
		}}}
	}
	allowAll := &Policy{Name: "all", Statements: []Statement{{Effect: Allow, Action: []string{"*"}, Resource: []string{"*"}}}}
	req := Request{Action: "s3:GetObject", Resource: "x"}
	if d := Evaluate(req, broken(Allow)); d.Allowed() {
		t.Errorf("Allow with an unknown operator: %v", d)
	}
	if d := Evaluate(req, allowAll, broken(Deny)); d.Allowed() || d.Policy != "broken" {
		t.Errorf("Deny with an unknown operator: %v", d)
	}
	weird := &Policy{Name: "weird", Statements: []Statement{{Effect: "allow", Action: []string{"*"}, Resource: []string{"*"}}}}
	if d := Evaluate(req, allowAll, weird); d.Allowed() {
		t.Errorf("unknown effect: %v", d)
	}
}

func TestContextGet(t *testing.T) {
	c := Context{"aws:SourceIp": {"192.0.2.1"}}
	c.Set("S3:Prefix", "a/")
	for _, key := range []string{"aws:SourceIp", "AWS:SOURCEIP", "aws:sourceip"} {
		if got := c.Get(key); len(got) != 1 || got[0] != "192.0.2.1" {
			t.Errorf("Get(%s) = %q", key, got)
		}
	}
	if got := c.Get("s3:PREFIX"); len(got) != 1 || got[0] != "a/" {
		t.Errorf("Get(s3:PREFIX) = %q", got)
	}
	if got := Context(nil).Get("x"); got != nil {
		t.Errorf("nil context: %q", got)
	}
}

// BenchmarkEvaluate measures one check against a typical user: a canned
// policy plus a bucket policy with conditions and a variable.
func BenchmarkEvaluate(b *testing.B) {
	rw, _ := Canned(ReadWrite)
	bucket := named(b, "bucket", `{"Version":"2012-10-17","Statement":[
		{"Sid":"TLS","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::photos/*",
		 "Condition":{"Bool":{"aws:SecureTransport":"false"},"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}}},
		{"Effect":"Allow","Principal":{"AWS":"`+alice+`"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/${aws:username}/*"}]}`, Bucket)
	req := Request{Action: "s3:GetObject", Resource: ObjectARN("photos", "alice/2024/cat.jpg"), Principals: []string{alice},
		Context: ctx("aws:username", vals("alice"), "aws:SecureTransport", vals("true"), "aws:SourceIp", vals("192.0.2.7"))}
	b.ReportAllocs()
	for b.Loop() {
		if !Evaluate(req, rw, bucket).Allowed() {
			b.Fatal("denied")
		}
	}
}
