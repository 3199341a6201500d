package sigv4

import (
	"net/url"
	"testing"
)

func TestCanonicalQuery(t *testing.T) {
	cases := []struct{ raw, aws, sent string }{
		{"", "", ""},
		{"uploads", "uploads=", "uploads="},
		{"b=2&a=1", "a=1&b=2", "a=1&b=2"},
		{"k=b&k=a&k=", "k=&k=a&k=b", "k=b&k=a&k="},
		{"a-b=1&a=2", "a=2&a-b=1", "a=2&a-b=1"},
		{"x=a+b&y=a%20b&z=%7E%2a", "x=a%20b&y=a%20b&z=~%2A", "x=a%20b&y=a%20b&z=~%2A"},
		{"p=%2F%2Fa%2Fb&&q", "p=%2F%2Fa%2Fb&q=", "p=%2F%2Fa%2Fb&q="},
		{"u=%C3%A9", "u=%C3%A9", "u=%C3%A9"},
		{"%41=1", "A=1", "A=1"},
	}
	for _, c := range cases {
		pairs, err := parseQuery(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalQuery(pairs, nil); got != c.aws {
			t.Errorf("%q: AWS order %q, want %q", c.raw, got, c.aws)
		}
		if got := canonicalQueryOrder(pairs, nil, false); got != c.sent {
			t.Errorf("%q: sent order %q, want %q", c.raw, got, c.sent)
		}
	}
	if _, err := parseQuery("a=%zz"); err == nil {
		t.Error("bad escape accepted")
	}
}

func TestCanonicalURI(t *testing.T) {
	cases := []struct{ path, want string }{
		{"", "/"},
		{"/", "/"},
		{"/b/a b", "/b/a%20b"},
		{"/b/a+b", "/b/a%2Bb"},
		{"/b//c/./..", "/b//c/./.."},
		{"/b/~_-.x", "/b/~_-.x"},
		{"/b/é", "/b/%C3%A9"},
		{"/b/%", "/b/%25"},
		{"/b/*!'()", "/b/%2A%21%27%28%29"},
	}
	for _, c := range cases {
		if got := canonicalURI(&url.URL{Path: c.path}); got != c.want {
			t.Errorf("%q: %q, want %q", c.path, got, c.want)
		}
	}
}

func TestTrimAll(t *testing.T) {
	for in, want := range map[string]string{
		"  a   b  ": "a b",
		"a\t\tb":    "a b",
		"plain":     "plain",
		"":          "",
	} {
		if got := trimAll(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
