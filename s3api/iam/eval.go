package iam

import (
	"fmt"
	"slices"
	"strings"
)

// Context is a request context: condition keys and their values. Keys
// are matched without case; Set stores them in lower case, the form Get
// finds fastest. A key with no values is absent.
type Context map[string][]string

// Get returns the values of key, whichever case it was stored in.
func (c Context) Get(key string) []string {
	if v, ok := c[key]; ok {
		return v
	}
	if v, ok := c[strings.ToLower(key)]; ok {
		return v
	}
	for k, v := range c {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// Set sets the values of key.
func (c Context) Set(key string, values ...string) {
	c[strings.ToLower(key)] = values
}

// Request is one permission check: may these principals perform action
// on resource, in this context?
type Request struct {
	Action   string // e.g. "s3:GetObject"; see Permissions
	Resource string // e.g. ObjectARN("photos", "cat.jpg")

	// Principals are the names the requester goes by, matched against
	// bucket policies' Principal: its user ARN, its access key, and for
	// a service account its parent's. Empty (or only Anonymous) for a
	// request without a signature, which only "*" matches.
	Principals []string

	Context Context
}

// Decision is the outcome of Evaluate, with the statement that decided
// it for audit logs.
type Decision struct {
	Effect Effect
	// Matched is false for the implicit deny: no statement applied.
	Matched bool
	// Policy, Sid and Index name the deciding statement: its policy's
	// Name, its Sid (often empty) and its position in the policy.
	Policy string
	Sid    string
	Index  int
}

// Allowed reports whether the request may go ahead.
func (d Decision) Allowed() bool { return d.Effect == Allow }

// String describes the decision in one line, e.g.
// `Allow by "readwrite" statement 0` or `Deny: no statement applies`.
func (d Decision) String() string {
	if !d.Matched {
		return string(d.Effect) + ": no statement applies"
	}
	stmt := fmt.Sprint(d.Index)
	if d.Sid != "" {
		stmt = fmt.Sprintf("%d (%q)", d.Index, d.Sid)
	}
	return fmt.Sprintf("%s by %q statement %s", d.Effect, d.Policy, stmt)
}

// Evaluate decides a request against every policy that applies to it:
// the requester's identity policies and the bucket's policy (for an
// anonymous request, only the bucket's). As AWS decides within one
// account, an explicit Deny in any of them wins; otherwise an Allow in
// any of them allows; otherwise the request is denied implicitly.
// Among several Allows the first, in argument order, is reported. Nil
// policies are skipped.
func Evaluate(req Request, policies ...*Policy) Decision {
	var allow Decision // the first Allow; Matched once found
	for _, p := range policies {
		if p == nil {
			continue
		}
		vars := p.Version == Version2012
		for i := range p.Statements {
			s := &p.Statements[i]
			if !s.applies(&req, vars) {
				continue
			}
			d := Decision{Effect: Allow, Matched: true, Policy: p.Name, Sid: s.Sid, Index: i}
			if s.Effect != Allow { // Deny, or an invalid effect: fail closed
				d.Effect = Deny
				return d
			}
			if !allow.Matched {
				allow = d
			}
		}
	}
	if allow.Matched {
		return allow
	}
	return Decision{Effect: Deny}
}

// applies reports whether the statement speaks about this request:
// principal, action, resource and every condition match.
func (s *Statement) applies(req *Request, vars bool) bool {
	if s.Principal != nil && !principalMatches(s.Principal, req.Principals) {
		return false
	}
	if s.NotPrincipal != nil && principalMatches(s.NotPrincipal, req.Principals) {
		return false
	}
	if s.Action != nil && !actionMatches(s.Action, req.Action) {
		return false
	}
	if s.NotAction != nil && actionMatches(s.NotAction, req.Action) {
		return false
	}
	if s.Resource != nil && !resourceMatches(s.Resource, req, vars) {
		return false
	}
	if s.NotResource != nil && resourceMatches(s.NotResource, req, vars) {
		return false
	}
	for i := range s.Conditions {
		holds, ok := s.Conditions[i].holds(req.Context, vars)
		if !ok {
			// Unknown operator, in a policy that skipped Validate: a
			// Deny applies and an Allow does not, whatever the request.
			return s.Effect != Allow
		}
		if !holds {
			return false
		}
	}
	return true
}

// principalMatches reports whether a statement's principal set names
// the requester. "*" names everyone; an anonymous requester matches
// nothing else.
func principalMatches(set, names []string) bool {
	if slices.Contains(set, Anonymous) {
		return true
	}
	for _, n := range names {
		if n != Anonymous && n != "" && slices.Contains(set, n) {
			return true
		}
	}
	return false
}

func actionMatches(patterns []string, action string) bool {
	for _, p := range patterns {
		if match(p, action, true) {
			return true
		}
	}
	return false
}

func resourceMatches(patterns []string, req *Request, vars bool) bool {
	for _, p := range patterns {
		if e, ok := expand(p, req.Context, vars, true); ok && match(e, req.Resource, false) {
			return true
		}
	}
	return false
}
