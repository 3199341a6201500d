package iam

import (
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		fold, want bool
	}{
		{"", "", false, true},
		{"*", "", false, true},
		{"*", "anything/at/all", false, true},
		{"?", "", false, false},
		{"?", "é", false, true}, // one character, two bytes
		{"??", "é", false, false},
		{"a*b", "ab", false, true},
		{"a*b", "axxb", false, true},
		{"a*b", "axxbx", false, false},
		{"a*b*c", "abxbxc", false, true},
		{"*.jpg", "photos/2024/cat.jpg", false, true},
		{"photos/*", "Photos/x", false, false},
		{`a\*b`, "a*b", false, true},
		{`a\*b`, "axb", false, false},
		{`a\\b`, `a\b`, false, true},
		{`a\`, `a\`, false, true}, // a lone trailing escape is itself
		{"s3:Get*", "s3:getobject", true, true},
		{"S3:GETOBJECT", "s3:GetObject", true, true},
		{"s3:Get*", "s3:getobject", false, false},
		{"[", "{", true, false}, // fold only letters
		{strings.Repeat("*a", 30) + "b", strings.Repeat("a", 200), false, false},
	}
	for _, tt := range tests {
		if got := match(tt.pattern, tt.s, tt.fold); got != tt.want {
			t.Errorf("match(%q, %q, %v) = %v, want %v", tt.pattern, tt.s, tt.fold, got, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	c := ctx("aws:username", vals("a*b"), "multi", vals("x", "y"))
	tests := []struct {
		s          string
		vars, wild bool
		want       string
		ok         bool
	}{
		{"home/${aws:username}/*", true, true, `home/a\*b/*`, true},
		{"home/${aws:username}/*", true, false, "home/a*b/*", true},
		{"home/${AWS:UserName}", true, false, "home/a*b", true},
		{"home/${aws:username}", false, false, "home/${aws:username}", true},
		{`back\slash`, false, true, `back\\slash`, true},
		{"${*}${?}${$}", true, true, `\*\?$`, true},
		{"${missing}", true, false, "", false},
		{"${missing, 'x y'}", true, false, "x y", true},
		{"${ missing , 'it''s' }", true, false, "it's", true},
		{"${multi}", true, false, "", false},
		{"${multi, 'd'}", true, false, "d", true},
		{"${aws:username, '${aws:username}'}x", true, false, "a*bx", true}, // expanded once
	}
	for _, tt := range tests {
		got, ok := expand(tt.s, c, tt.vars, tt.wild)
		if got != tt.want || ok != tt.ok {
			t.Errorf("expand(%q, vars %v, wild %v) = %q, %v; want %q, %v", tt.s, tt.vars, tt.wild, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCheckVariables(t *testing.T) {
	tests := []struct {
		s    string
		want error
	}{
		{"plain $ text {}", nil},
		{"${aws:username}/${*}", nil},
		{"${key, 'default'}", nil},
		{"${aws:username", errUnclosedVariable},
		{"${}", errEmptyVariable},
		{"${ , 'x'}", errEmptyVariable},
		{"${key, default}", errBadDefault},
		{"${key, 'open}", errBadDefault},
		{"${key, 'x' y}", errBadDefault},
	}
	for _, tt := range tests {
		if err := checkVariables(tt.s); !errors.Is(err, tt.want) {
			t.Errorf("checkVariables(%q) = %v, want %v", tt.s, err, tt.want)
		}
	}
}
