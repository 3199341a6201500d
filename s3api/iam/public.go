package iam

import (
	"slices"
	"strings"
)

// restrictingKeys are the condition keys that, compared with fixed values,
// keep a statement granting to "*" from being public, as S3's Block Public
// Access defines it: they tie the grant to known networks, sources or
// accounts.
var restrictingKeys = []string{
	"aws:sourceip", "aws:sourcevpc", "aws:sourcevpce", "aws:sourcearn",
	"aws:sourceaccount", "aws:sourceowner", "aws:principalorgid",
	"aws:principalaccount", "aws:userid", "aws:username",
}

// IsPublic reports whether a bucket policy grants access to everyone:
// some Allow statement names the principal "*" (or uses NotPrincipal)
// without a condition that pins it to fixed networks, sources or
// accounts. GetBucketPolicyStatus answers it, and a public access block
// refuses or ignores such policies.
func (p *Policy) IsPublic() bool {
	for i := range p.Statements {
		s := &p.Statements[i]
		if s.Effect != Allow {
			continue
		}
		if s.NotPrincipal == nil && !slices.Contains(s.Principal, Anonymous) {
			continue
		}
		if !s.restricted() {
			return true
		}
	}
	return false
}

// restricted reports whether one of the statement's conditions compares
// a restricting key with fixed values: a plain (not negated, not
// IfExists, not ForAllValues) operator whose values hold no wildcard,
// and for addresses no block wider than /8 (IPv4) or /32 (IPv6).
func (s *Statement) restricted() bool {
	for _, c := range s.Conditions {
		if !slices.Contains(restrictingKeys, strings.ToLower(c.Key)) {
			continue
		}
		op, err := parseOperator(c.Operator)
		if err != nil || op.negated || op.ifExists || op.set == forAllValues || op.cmp == cmpNull {
			continue
		}
		fixed := len(c.Values) > 0
		for _, v := range c.Values {
			if strings.ContainsAny(v, "*?$") || (op.cmp == cmpIPAddress && !narrowBlock(v)) {
				fixed = false
			}
		}
		if fixed {
			return true
		}
	}
	return false
}

// narrowBlock reports whether an address or CIDR block is narrow enough
// not to count as "everyone".
func narrowBlock(v string) bool {
	pfx, ok := parsePrefix(v)
	if !ok {
		return false
	}
	if pfx.Addr().Is4() {
		return pfx.Bits() >= 8
	}
	return pfx.Bits() >= 32
}

// UsesKeyPrefix reports whether a condition of the policy names a key
// starting with prefix (matched without case): the server fills costly
// keys, such as an object's existing tags, only for policies that ask.
func (p *Policy) UsesKeyPrefix(prefix string) bool {
	if p == nil {
		return false
	}
	for i := range p.Statements {
		for _, c := range p.Statements[i].Conditions {
			if len(c.Key) >= len(prefix) && strings.EqualFold(c.Key[:len(prefix)], prefix) {
				return true
			}
		}
	}
	return false
}

// UsesContext reports whether deciding a request against the policy may
// read its Context: some statement has a condition, or (in Version2012)
// a policy variable in Resource or NotResource. A server can skip
// building the context of requests that no such policy decides.
func (p *Policy) UsesContext() bool {
	if p == nil {
		return false
	}
	for i := range p.Statements {
		s := &p.Statements[i]
		if len(s.Conditions) > 0 {
			return true
		}
		if p.Version == Version2012 {
			for _, r := range s.Resource {
				if strings.Contains(r, "${") {
					return true
				}
			}
			for _, r := range s.NotResource {
				if strings.Contains(r, "${") {
					return true
				}
			}
		}
	}
	return false
}
