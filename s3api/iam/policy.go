package iam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Policy language versions. Only Version2012 expands policy variables;
// under Version2008 (also assumed when Version is absent, as AWS does)
// "${aws:username}" is ordinary text.
const (
	Version2012 = "2012-10-17"
	Version2008 = "2008-10-17"
)

// Size limits AWS applies, for Parse. Sizes are counted on the document
// with insignificant whitespace removed, as IAM counts them, so a
// pretty-printed policy is not penalised for its indentation.
const (
	MaxBucketPolicySize   = 20 << 10 // S3 bucket policies: 20 KiB
	MaxIdentityPolicySize = 6144     // IAM managed policies
)

// Effect is what a statement does when it applies.
type Effect string

const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Kind is where a policy is attached, which decides whether its
// statements name a principal.
type Kind int

const (
	// Identity policies are attached to a user, group or service
	// account: they speak for that identity and name no Principal.
	Identity Kind = iota
	// Bucket policies are attached to a bucket: every statement says
	// whom it is about, with Principal or NotPrincipal.
	Bucket
	// anyKind accepts both shapes; json.Unmarshal uses it because it
	// cannot be told the kind.
	anyKind
)

// Anonymous is "*": in a statement's Principal it names everyone,
// requests without a signature included; in Request.Principals it marks
// such a request (as an empty list does).
const Anonymous = "*"

// Policy is a parsed policy document. Parse fills it and checks it;
// MarshalJSON writes it back in canonical form (fixed element order,
// every list as a JSON array), which parses to an equal Policy.
type Policy struct {
	// Name identifies the policy in decisions and audit logs ("readwrite",
	// "bucket policy of photos"). It is not part of the document.
	Name string

	Version    string // Version2012, Version2008 or "" (read as Version2008)
	ID         string // the optional "Id" element
	Statements []Statement
}

// Statement is one element of a policy's Statement list. A nil list
// means the element is absent; Validate rejects present but empty ones.
type Statement struct {
	Sid    string
	Effect Effect

	// Principal and NotPrincipal are sets of AWS principals: "*" (anyone,
	// anonymous included), account IDs, user ARNs, access keys. They are
	// kept sorted and without duplicates. Only bucket policies have them.
	Principal    []string
	NotPrincipal []string

	// Action and NotAction hold action patterns such as "s3:GetObject"
	// or "s3:Get*", matched without case. Exactly one is set.
	Action    []string
	NotAction []string

	// Resource and NotResource hold ARN patterns such as
	// "arn:aws:s3:::photos/*" or "*", matched with case. Exactly one is set.
	Resource    []string
	NotResource []string

	// Conditions must all hold for the statement to apply. They are
	// sorted by operator, then key, the order MarshalJSON writes them.
	Conditions []Condition
}

// Condition is one operator applied to one context key: the key's
// values in the request are compared with Values (any one of which may
// match; for negated operators, none may).
type Condition struct {
	Operator string // e.g. "StringLike", "ForAnyValue:StringEqualsIfExists"
	Key      string // e.g. "s3:prefix"; matched without case
	Values   []string
}

// Error kinds. Every error from Parse and Validate wraps one of them.
var (
	ErrMalformed = errors.New("iam: malformed policy")
	ErrTooLarge  = errors.New("iam: policy too large")
)

// PolicyError locates what is wrong with a policy document.
type PolicyError struct {
	Statement int    // index in Statement, or -1 for the document itself
	Element   string // "Effect", "Condition", ...; "" when not about one
	Reason    string
	kind      error
}

func (e *PolicyError) Error() string {
	kind := e.kind
	if kind == nil {
		kind = ErrMalformed
	}
	var b strings.Builder
	b.WriteString(kind.Error())
	if e.Statement >= 0 {
		fmt.Fprintf(&b, ": statement %d", e.Statement)
	}
	if e.Element != "" {
		fmt.Fprintf(&b, ": %s", e.Element)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	return b.String()
}

func (e *PolicyError) Unwrap() error { return e.kind }

// malformed is a PolicyError of kind ErrMalformed.
func malformed(stmt int, element, format string, args ...any) error {
	return &PolicyError{Statement: stmt, Element: element, Reason: fmt.Sprintf(format, args...), kind: ErrMalformed}
}

// Parse decodes and validates a policy document of the given kind.
// limit is the largest accepted size (MaxBucketPolicySize,
// MaxIdentityPolicySize, or 0 for none); the caller still bounds what
// it reads from the network.
func Parse(doc []byte, kind Kind, limit int) (*Policy, error) {
	if limit > 0 && len(doc) > limit {
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			return nil, malformed(-1, "", "not JSON: %v", err)
		}
		if compact.Len() > limit {
			return nil, &PolicyError{Statement: -1, Reason: fmt.Sprintf("%d bytes, over the limit of %d", compact.Len(), limit), kind: ErrTooLarge}
		}
	}
	p, err := decode(doc)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(kind); err != nil {
		return nil, err
	}
	return p, nil
}

// UnmarshalJSON decodes and validates a policy of either kind, without
// a size limit, so that policies can be embedded in other documents.
func (p *Policy) UnmarshalJSON(doc []byte) error {
	q, err := decode(doc)
	if err != nil {
		return err
	}
	if err := q.Validate(anyKind); err != nil {
		return err
	}
	name := p.Name
	*p = *q
	p.Name = name
	return nil
}

// Validate checks a policy as Parse does, for policies built in code.
// Evaluate assumes a valid policy.
func (p *Policy) Validate(kind Kind) error {
	switch p.Version {
	case "", Version2008, Version2012:
	default:
		return malformed(-1, "Version", "%q is not %s or %s", p.Version, Version2012, Version2008)
	}
	if len(p.Statements) == 0 {
		return malformed(-1, "Statement", "no statements")
	}
	sids := make(map[string]bool)
	for i := range p.Statements {
		s := &p.Statements[i]
		if s.Sid != "" {
			if sids[s.Sid] {
				return malformed(i, "Sid", "%q is used by an earlier statement", s.Sid)
			}
			sids[s.Sid] = true
		}
		if err := s.validate(i, kind, p.Version == Version2012); err != nil {
			return err
		}
	}
	return nil
}

func (s *Statement) validate(i int, kind Kind, vars bool) error {
	if s.Effect != Allow && s.Effect != Deny {
		return malformed(i, "Effect", "%q is not Allow or Deny", s.Effect)
	}
	if err := validatePrincipals(i, kind, s.Principal, s.NotPrincipal); err != nil {
		return err
	}
	if err := exactlyOne(i, "Action", s.Action, s.NotAction); err != nil {
		return err
	}
	for _, a := range slices.Concat(s.Action, s.NotAction) {
		if !validAction(a) {
			return malformed(i, "Action", "%q is not \"*\" or service:action", a)
		}
	}
	if err := exactlyOne(i, "Resource", s.Resource, s.NotResource); err != nil {
		return err
	}
	for _, r := range slices.Concat(s.Resource, s.NotResource) {
		if err := validResource(r, vars); err != nil {
			return malformed(i, "Resource", "%q: %v", r, err)
		}
	}
	seen := make(map[[2]string]bool)
	for _, c := range s.Conditions {
		if err := c.validate(vars); err != nil {
			return malformed(i, "Condition", "%s %q: %v", c.Operator, c.Key, err)
		}
		// A document cannot repeat an operator's key (JSON objects
		// merge them); a policy built in code must not either, or
		// MarshalJSON would drop one.
		pair := [2]string{c.Operator, c.Key}
		if seen[pair] {
			return malformed(i, "Condition", "%s %q is given twice", c.Operator, c.Key)
		}
		seen[pair] = true
	}
	return nil
}

// exactlyOne checks that one of an element and its Not form is given,
// and that it is not empty.
func exactlyOne(i int, element string, list, notList []string) error {
	switch {
	case list != nil && notList != nil:
		return malformed(i, element, "both %s and Not%s are given", element, element)
	case list == nil && notList == nil:
		return malformed(i, element, "neither %s nor Not%s is given", element, element)
	case len(list)+len(notList) == 0:
		return malformed(i, element, "empty list")
	}
	return nil
}

func validatePrincipals(i int, kind Kind, principal, notPrincipal []string) error {
	given := principal != nil || notPrincipal != nil
	switch {
	case kind == Identity && given:
		return malformed(i, "Principal", "identity policies name no principal: they apply to the identity they are attached to")
	case kind == Bucket && !given:
		return malformed(i, "Principal", "bucket policy statements need Principal or NotPrincipal")
	case principal != nil && notPrincipal != nil:
		return malformed(i, "Principal", "both Principal and NotPrincipal are given")
	}
	for _, p := range slices.Concat(principal, notPrincipal) {
		if p == "" || (p != Anonymous && strings.Contains(p, "*")) {
			return malformed(i, "Principal", "%q: a principal is \"*\" or a name without wildcards", p)
		}
	}
	if given && len(principal)+len(notPrincipal) == 0 {
		return malformed(i, "Principal", "empty list")
	}
	return nil
}

// validAction accepts "*" and "service:name", where name may hold
// wildcards. Unknown names are accepted: they never match a request.
func validAction(a string) bool {
	if a == "*" {
		return true
	}
	service, name, ok := strings.Cut(a, ":")
	if !ok || service == "" || name == "" {
		return false
	}
	for _, c := range service {
		if !isAlnum(c) && c != '-' {
			return false
		}
	}
	for _, c := range name {
		if !isAlnum(c) && !strings.ContainsRune("-_*?", c) {
			return false
		}
	}
	return true
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validResource accepts "*" and ARNs "arn:partition:service:region:account:resource"
// with a partition, a service and a resource; wildcards may appear
// anywhere. With vars, policy variables in it must be well formed.
func validResource(r string, vars bool) error {
	if r == "*" {
		return nil
	}
	parts := strings.SplitN(r, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return errors.New("not an ARN (arn:partition:service:region:account:resource)")
	}
	if parts[1] == "" || parts[2] == "" || parts[5] == "" {
		return errors.New("an ARN needs a partition, a service and a resource")
	}
	if vars {
		return checkVariables(r)
	}
	return nil
}
