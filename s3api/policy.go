package s3api

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A POST policy (browser form uploads, postform.go) is a JSON document,
// sent base64 in the form and signed there:
//
//	{"expiration": "2026-12-01T12:00:00.000Z",
//	 "conditions": [
//	   {"bucket": "photos"},                 exact match
//	   ["eq", "$acl", "private"],            exact match
//	   ["starts-with", "$key", "user/"],     prefix ("" allows any value)
//	   ["content-length-range", 1, 10485760] bounds of the file's size
//	 ]}
//
// Field names are matched without case, values with case. Every form
// field but the exempt ones (policy, x-amz-signature, file, x-ignore-*)
// must be named by a condition, as S3 requires, so a signed policy fixes
// everything the form may say.

// maxPolicySize bounds the decoded policy document.
const maxPolicySize = 20 << 10

// postPolicy is a decoded policy.
type postPolicy struct {
	expiration time.Time
	conditions []policyCondition
	// lengthRange is set by a content-length-range condition.
	lengthRange       bool
	minSize, maxSize  int64
	rangeCondition    string // the condition as written, for errors
	coveredFieldNames map[string]bool
}

// policyCondition is one eq or starts-with condition on a field.
type policyCondition struct {
	op    string // "eq" or "starts-with"
	field string // lower case, without "$"
	value string
	text  string // the condition as written, for errors
}

// policyError is InvalidPolicyDocument with the reason.
func policyError(format string, args ...any) error {
	return errorf("InvalidPolicyDocument", "Invalid Policy: "+format, args...)
}

// parsePostPolicy decodes a policy document (already base64-decoded).
func parsePostPolicy(doc []byte) (*postPolicy, error) {
	if len(doc) > maxPolicySize {
		return nil, policyError("the policy document is over %d bytes.", maxPolicySize)
	}
	// The keys are matched with their case, as S3 matches them
	// ("EXPIRATION" is no expiration); encoding/json would take any case.
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&top); err != nil {
		return nil, policyError("the policy is not a JSON object: %v.", err)
	}
	if dec.More() {
		return nil, policyError("data after the policy document.")
	}
	var raw struct {
		Expiration *string
		Conditions []json.RawMessage
	}
	for _, f := range []struct {
		key string
		v   any
	}{{"expiration", &raw.Expiration}, {"conditions", &raw.Conditions}} {
		if e, ok := top[f.key]; ok {
			if err := json.Unmarshal(e, f.v); err != nil {
				return nil, policyError("the policy's %s: %v.", f.key, err)
			}
		}
	}
	if raw.Expiration == nil {
		return nil, policyError("Policy missing expiration.")
	}
	exp, err := parseExpiration(*raw.Expiration)
	if err != nil {
		return nil, err
	}
	if raw.Conditions == nil {
		return nil, policyError("Policy missing conditions.")
	}
	p := &postPolicy{expiration: exp, coveredFieldNames: map[string]bool{}}
	for _, c := range raw.Conditions {
		if err := p.addCondition(c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parseExpiration reads an ISO 8601 UTC time, with or without fractions
// of a second ("2026-12-01T12:00:00.000Z").
func parseExpiration(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		return time.Time{}, policyError("Invalid 'expiration' value: '%s'.", s)
	}
	return t, nil
}

// addCondition decodes one element of conditions: an object of exact
// matches or an array [op, "$field", value] / ["content-length-range", min, max].
func (p *postPolicy) addCondition(raw json.RawMessage) error {
	text := string(raw)
	switch first := bytes.TrimSpace(raw); {
	case len(first) > 0 && first[0] == '{':
		var m map[string]any
		if err := unmarshalNumbers(raw, &m); err != nil || len(m) == 0 {
			return policyError("condition %s is not an object of field names and values.", text)
		}
		for name, v := range m {
			s, ok := v.(string)
			if !ok {
				return policyError("condition %s: the value of %q is not a string.", text, name)
			}
			p.add(policyCondition{op: "eq", field: strings.ToLower(strings.TrimPrefix(name, "$")), value: s, text: text})
		}
		return nil
	case len(first) > 0 && first[0] == '[':
		var a []any
		if err := unmarshalNumbers(raw, &a); err != nil || len(a) != 3 {
			return policyError("condition %s is not an array of three elements.", text)
		}
		op, _ := a[0].(string)
		op = strings.ToLower(op)
		if op == "content-length-range" {
			return p.setLengthRange(a[1], a[2], text)
		}
		field, ok1 := a[1].(string)
		value, ok2 := a[2].(string)
		if !ok1 || !ok2 || !strings.HasPrefix(field, "$") {
			return policyError("condition %s must name a $field and a string value.", text)
		}
		if op != "eq" && op != "starts-with" {
			return policyError("Invalid condition operator %q in %s.", op, text)
		}
		p.add(policyCondition{op: op, field: strings.ToLower(field[1:]), value: value, text: text})
		return nil
	}
	return policyError("condition %s is neither an object nor an array.", text)
}

func (p *postPolicy) add(c policyCondition) {
	p.conditions = append(p.conditions, c)
	p.coveredFieldNames[c.field] = true
}

// setLengthRange reads content-length-range's bounds: integers (or
// strings of digits) with 0 ≤ min ≤ max.
func (p *postPolicy) setLengthRange(lo, hi any, text string) error {
	minSize, ok1 := policyInt(lo)
	maxSize, ok2 := policyInt(hi)
	if !ok1 || !ok2 || minSize < 0 || minSize > maxSize {
		return policyError("content-length-range in %s needs integers 0 ≤ min ≤ max.", text)
	}
	p.lengthRange, p.minSize, p.maxSize, p.rangeCondition = true, minSize, maxSize, text
	return nil
}

func policyInt(v any) (int64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func unmarshalNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// exemptField reports the form fields a policy need not name.
func exemptField(name string) bool {
	switch name {
	case "policy", "x-amz-signature", "file":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-")
}

// policyDenied is S3's AccessDenied for a form its policy does not allow.
func policyDenied(format string, args ...any) error {
	return errorf("AccessDenied", "Invalid according to Policy: "+format, args...)
}

// check evaluates the policy at time now against the form's fields (lower
// case names; "bucket" is the bucket addressed). The file's size is
// checked while it streams (sizeBounds).
func (p *postPolicy) check(now time.Time, fields map[string]string) error {
	if !now.Before(p.expiration) {
		return policyDenied("Policy expired.")
	}
	for _, c := range p.conditions {
		v := fields[c.field]
		ok := v == c.value
		if c.op == "starts-with" {
			ok = startsWith(c.field, v, c.value)
		}
		if !ok {
			return policyDenied("Policy Condition failed: %s", c.text)
		}
	}
	// A policy must name its bucket, as S3 requires: one that does not
	// would let its signature upload to any bucket of the signer's.
	if !p.coveredFieldNames["bucket"] {
		return policyDenied("Policy Condition failed: no condition names the bucket.")
	}
	var extra []string
	for name := range fields {
		if !exemptField(name) && name != "bucket" && !p.coveredFieldNames[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return policyDenied("Extra input fields: %s", strings.Join(extra, ", "))
	}
	return nil
}

// startsWith is the starts-with test; for Content-Type, a list of types
// separated by commas passes when each starts with the prefix.
func startsWith(field, v, prefix string) bool {
	if field != "content-type" || !strings.Contains(v, ",") {
		return strings.HasPrefix(v, prefix)
	}
	for _, t := range strings.Split(v, ",") {
		if !strings.HasPrefix(strings.TrimSpace(t), prefix) {
			return false
		}
	}
	return true
}

// sizeBounds are the file's allowed sizes: the policy's
// content-length-range, else anything up to limit.
func (p *postPolicy) sizeBounds(limit int64) (minSize, maxSize int64) {
	if !p.lengthRange {
		return 0, limit
	}
	return p.minSize, min(p.maxSize, limit)
}
