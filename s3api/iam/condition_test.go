package iam

import "testing"

// ctx builds a context from key, values... pairs; a nil slice leaves the
// key out.
func ctx(pairs ...any) Context {
	c := Context{}
	for i := 0; i < len(pairs); i += 2 {
		c.Set(pairs[i].(string), pairs[i+1].([]string)...)
	}
	return c
}

func vals(v ...string) []string { return v }

// TestConditionOperators runs every operator, qualifier and suffix
// against AWS's documented rules (see the table in doc.go).
func TestConditionOperators(t *testing.T) {
	alice := ctx("aws:username", vals("alice"))
	tags := ctx("s3:RequestObjectTagKeys", vals("project", "owner"))
	now := ctx("aws:CurrentTime", vals("2026-01-02T00:00:00Z"), "aws:EpochTime", vals("1767312000"))
	from := func(ip string) Context { return ctx("aws:SourceIp", vals(ip)) }
	none := Context{}

	tests := []struct {
		name   string
		op     string
		key    string
		values []string
		ctx    Context
		want   bool
	}{
		// Strings: values with case, keys without.
		{"equals", "StringEquals", "aws:username", vals("alice"), alice, true},
		{"equals is case-sensitive", "StringEquals", "aws:username", vals("Alice"), alice, false},
		{"key without case", "StringEquals", "AWS:UserName", vals("alice"), alice, true},
		{"values are ORed", "StringEquals", "aws:username", vals("bob", "alice"), alice, true},
		{"equals, missing key", "StringEquals", "aws:username", vals("alice"), none, false},
		{"not equals", "StringNotEquals", "aws:username", vals("bob"), alice, true},
		{"not equals is NOR", "StringNotEquals", "aws:username", vals("bob", "alice"), alice, false},
		{"not equals, missing key", "StringNotEquals", "aws:username", vals("alice"), none, true},
		{"ignore case", "StringEqualsIgnoreCase", "aws:username", vals("ALICE"), alice, true},
		{"not ignore case", "StringNotEqualsIgnoreCase", "aws:username", vals("ALICE"), alice, false},
		{"like *", "StringLike", "s3:prefix", vals("home/*"), ctx("s3:prefix", vals("home/alice/")), true},
		{"like ?", "StringLike", "s3:prefix", vals("home/?lice/"), ctx("s3:prefix", vals("home/alice/")), true},
		{"like is case-sensitive", "StringLike", "s3:prefix", vals("Home/*"), ctx("s3:prefix", vals("home/x")), false},
		{"like, missing key", "StringLike", "s3:prefix", vals("*"), none, false},
		{"not like", "StringNotLike", "s3:prefix", vals("home/*"), ctx("s3:prefix", vals("tmp/x")), true},
		{"not like, missing key", "StringNotLike", "s3:prefix", vals("home/*"), none, true},
		{"several request values, no qualifier", "StringEquals", "s3:RequestObjectTagKeys", vals("owner"), tags, true},

		// Numbers.
		{"numeric equals", "NumericEquals", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("10")), true},
		{"numeric equals a fraction", "NumericEquals", "s3:max-keys", vals("10.0"), ctx("s3:max-keys", vals("10")), true},
		{"numeric not equals", "NumericNotEquals", "s3:max-keys", vals("5"), ctx("s3:max-keys", vals("10")), true},
		{"less than", "NumericLessThan", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("5")), true},
		{"less than, equal", "NumericLessThan", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("10")), false},
		{"less than equals", "NumericLessThanEquals", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("10")), true},
		{"greater than", "NumericGreaterThan", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("11")), true},
		{"greater than equals", "NumericGreaterThanEquals", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("9")), false},
		{"big integers stay exact", "NumericLessThan", "k", vals("9007199254740993"), ctx("k", vals("9007199254740992")), true},
		{"not a number matches nothing", "NumericLessThan", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("five")), false},
		{"numeric, missing key", "NumericLessThan", "s3:max-keys", vals("10"), none, false},

		// Dates, ISO 8601 or epoch seconds on either side.
		{"date less than", "DateLessThan", "aws:CurrentTime", vals("2026-06-01T00:00:00Z"), now, true},
		{"date greater than", "DateGreaterThan", "aws:CurrentTime", vals("2026-06-01"), now, false},
		{"date equals epoch", "DateEquals", "aws:CurrentTime", vals("1767312000"), now, true},
		{"epoch key against ISO", "DateEquals", "aws:EpochTime", vals("2026-01-02T01:00:00+01:00"), now, true},
		{"date not equals", "DateNotEquals", "aws:CurrentTime", vals("2026-01-01"), now, true},
		{"date less than equals", "DateLessThanEquals", "aws:CurrentTime", vals("2026-01-02"), now, true},
		{"date greater than equals", "DateGreaterThanEquals", "aws:CurrentTime", vals("2026-01-02T00:00:01Z"), now, false},

		// Bool.
		{"bool", "Bool", "aws:SecureTransport", vals("true"), ctx("aws:SecureTransport", vals("true")), true},
		{"bool differs", "Bool", "aws:SecureTransport", vals("true"), ctx("aws:SecureTransport", vals("false")), false},
		{"bool without case", "Bool", "aws:SecureTransport", vals("TRUE"), ctx("aws:SecureTransport", vals("true")), true},
		{"bool, missing key", "Bool", "aws:SecureTransport", vals("false"), none, false},
		{"bool if exists, missing key", "BoolIfExists", "aws:SecureTransport", vals("false"), none, true},

		// Addresses.
		{"ipv4 in block", "IpAddress", "aws:SourceIp", vals("192.0.2.0/24"), from("192.0.2.10"), true},
		{"ipv4 outside", "IpAddress", "aws:SourceIp", vals("192.0.2.0/24"), from("192.0.3.1"), false},
		{"ipv6 in block", "IpAddress", "aws:SourceIp", vals("2001:DB8::/32"), from("2001:db8::1"), true},
		{"ipv6 against ipv4 block", "IpAddress", "aws:SourceIp", vals("192.0.2.0/24"), from("2001:db8::1"), false},
		{"mapped ipv4", "IpAddress", "aws:SourceIp", vals("192.0.2.0/24"), from("::ffff:192.0.2.10"), true},
		{"mapped block", "IpAddress", "aws:SourceIp", vals("::ffff:192.0.2.0/120"), from("192.0.2.10"), true},
		{"single address", "IpAddress", "aws:SourceIp", vals("192.0.2.10"), from("192.0.2.10"), true},
		{"not ip address", "NotIpAddress", "aws:SourceIp", vals("192.0.2.0/24"), from("192.0.3.1"), true},
		{"not ip address, inside", "NotIpAddress", "aws:SourceIp", vals("192.0.2.0/24", "10.0.0.0/8"), from("10.1.2.3"), false},
		{"ip address, missing key", "IpAddress", "aws:SourceIp", vals("0.0.0.0/0"), none, false},
		{"not ip address, missing key", "NotIpAddress", "aws:SourceIp", vals("0.0.0.0/0"), none, true},

		// Null tests presence only.
		{"null true, absent", "Null", "aws:username", vals("true"), none, true},
		{"null true, present", "Null", "aws:username", vals("true"), alice, false},
		{"null false, present", "Null", "aws:username", vals("false"), alice, true},
		{"null false, absent", "Null", "aws:username", vals("false"), none, false},

		// IfExists.
		{"if exists, missing key", "StringEqualsIfExists", "aws:username", vals("bob"), none, true},
		{"if exists, present", "StringEqualsIfExists", "aws:username", vals("bob"), alice, false},
		{"not equals if exists, present", "StringNotEqualsIfExists", "aws:username", vals("alice"), alice, false},
		{"numeric if exists", "NumericLessThanIfExists", "s3:max-keys", vals("10"), ctx("s3:max-keys", vals("20")), false},

		// Set qualifiers over a multivalued key.
		{"any value", "ForAnyValue:StringEquals", "s3:RequestObjectTagKeys", vals("owner", "cost"), tags, true},
		{"any value, none", "ForAnyValue:StringEquals", "s3:RequestObjectTagKeys", vals("cost"), tags, false},
		{"any value, missing key", "ForAnyValue:StringEquals", "s3:RequestObjectTagKeys", vals("cost"), none, false},
		{"any value if exists, missing key", "ForAnyValue:StringEqualsIfExists", "s3:RequestObjectTagKeys", vals("cost"), none, true},
		{"any value like", "ForAnyValue:StringLike", "s3:RequestObjectTagKeys", vals("pro*"), tags, true},
		{"any value not equals", "ForAnyValue:StringNotEquals", "s3:RequestObjectTagKeys", vals("owner"), tags, true},
		{"any value not equals, all listed", "ForAnyValue:StringNotEquals", "s3:RequestObjectTagKeys", vals("owner", "project"), tags, false},
		{"all values", "ForAllValues:StringEquals", "s3:RequestObjectTagKeys", vals("owner", "project", "cost"), tags, true},
		{"all values, one unlisted", "ForAllValues:StringEquals", "s3:RequestObjectTagKeys", vals("owner"), tags, false},
		{"all values, missing key", "ForAllValues:StringEquals", "s3:RequestObjectTagKeys", vals("owner"), none, true},
		{"all values not equals", "ForAllValues:StringNotEquals", "s3:RequestObjectTagKeys", vals("secret"), tags, true},
		{"all values not equals, one listed", "ForAllValues:StringNotEquals", "s3:RequestObjectTagKeys", vals("owner"), tags, false},
	}
	for _, tt := range tests {
		c := Condition{Operator: tt.op, Key: tt.key, Values: tt.values}
		if err := c.validate(true); err != nil {
			t.Errorf("%s: validate: %v", tt.name, err)
			continue
		}
		got, ok := c.holds(tt.ctx, true)
		if !ok || got != tt.want {
			t.Errorf("%s: %s %s %q = %v (ok %v), want %v", tt.name, tt.op, tt.key, tt.values, got, ok, tt.want)
		}
	}
}

// TestConditionVariables covers policy variables in condition values.
func TestConditionVariables(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		values []string
		vars   bool // a Version2012 policy
		ctx    Context
		want   bool
	}{
		{"substituted", "StringEquals", vals("home/${aws:username}/"), true,
			ctx("aws:username", vals("alice"), "s3:prefix", vals("home/alice/")), true},
		{"other user", "StringEquals", vals("home/${aws:username}/"), true,
			ctx("aws:username", vals("bob"), "s3:prefix", vals("home/alice/")), false},
		{"in a pattern", "StringLike", vals("home/${aws:username}/*"), true,
			ctx("aws:username", vals("alice"), "s3:prefix", vals("home/alice/photos/")), true},
		{"a value is never a wildcard", "StringLike", vals("home/${aws:username}/*"), true,
			ctx("aws:username", vals("*"), "s3:prefix", vals("home/bob/x")), false},
		{"a value matches itself", "StringLike", vals("home/${aws:username}/*"), true,
			ctx("aws:username", vals("*"), "s3:prefix", vals("home/*/x")), true},
		{"escaped star", "StringLike", vals("a${*}b"), true, ctx("s3:prefix", vals("a*b")), true},
		{"escaped star is literal", "StringLike", vals("a${*}b"), true, ctx("s3:prefix", vals("axb")), false},
		{"escaped question mark and dollar", "StringEquals", vals("${?}${$}"), true, ctx("s3:prefix", vals("?$")), true},
		{"missing variable drops the value", "StringEquals", vals("${aws:username}"), true,
			ctx("s3:prefix", vals("")), false},
		{"missing variable, negated", "StringNotEquals", vals("${aws:username}"), true,
			ctx("s3:prefix", vals("")), true},
		{"default value", "StringEquals", vals("${aws:username, 'anon''s'}"), true,
			ctx("s3:prefix", vals("anon's")), true},
		{"several values are no variable", "StringEquals", vals("${s3:RequestObjectTagKeys}"), true,
			ctx("s3:RequestObjectTagKeys", vals("a", "b"), "s3:prefix", vals("a")), false},
		{"version 2008 keeps the text", "StringEquals", vals("${aws:username}"), false,
			ctx("aws:username", vals("alice"), "s3:prefix", vals("${aws:username}")), true},
	}
	for _, tt := range tests {
		c := Condition{Operator: tt.op, Key: "s3:prefix", Values: tt.values}
		if err := c.validate(tt.vars); err != nil {
			t.Errorf("%s: validate: %v", tt.name, err)
			continue
		}
		if got, _ := c.holds(tt.ctx, tt.vars); got != tt.want {
			t.Errorf("%s: %s %q = %v, want %v", tt.name, tt.op, tt.values, got, tt.want)
		}
	}
}
