package lifecycle

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits S3 sets on a configuration.
const (
	maxRules        = 1000
	maxIDLen        = 255  // characters
	maxPrefixLen    = 1024 // bytes, as keys
	maxTagKeyLen    = 128  // characters, as object tags
	maxTagValueLen  = 256  // characters
	maxNewerVersion = 100
)

// Parse decodes and validates a PUT ?lifecycle body (LifecycleConfiguration)
// as S3 does. errors are *Error. The first refusal found wins: the
// document's shape (MalformedXML), then each rule in order.
func Parse(body []byte) (Config, error) {
	if len(body) == 0 {
		return Config{}, malformed("empty body")
	}
	var doc xmlConfig
	if err := xml.Unmarshal(body, &doc); err != nil {
		return Config{}, malformed(err.Error())
	}
	if err := unknown("LifecycleConfiguration", doc.Other); err != nil {
		return Config{}, err
	}
	switch n := len(doc.Rules); {
	case n == 0:
		return Config{}, malformed("no Rule")
	case n > maxRules:
		return Config{}, malformed(fmt.Sprintf("%d rules, at most %d", n, maxRules))
	}
	c := Config{Rules: make([]Rule, len(doc.Rules))}
	for i := range doc.Rules {
		r, err := parseRule(&doc.Rules[i])
		if err != nil {
			return Config{}, err
		}
		c.Rules[i] = r
	}
	if err := c.nameRules(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func parseRule(x *xmlRule) (Rule, error) {
	var r Rule
	if err := unknown("Rule", x.Other); err != nil {
		return r, err
	}
	if len(x.Transition) > 0 || len(x.NoncurrentVersionTransition) > 0 {
		return r, errorf("NotImplemented", "Transition and NoncurrentVersionTransition are not supported: the volume is the only storage, so there is no other storage class to move objects to.")
	}
	id, err := atMostOne("ID", x.ID)
	if err != nil {
		return r, err
	}
	if id != nil {
		if err := checkText("ID", *id); err != nil {
			return r, err
		}
		if utf8.RuneCountInString(*id) > maxIDLen {
			return r, errorf("InvalidArgument", "ID length should not exceed allowed limit of 255")
		}
		r.ID = *id
	}
	status, err := atMostOne("Status", x.Status)
	switch {
	case err != nil:
		return r, err
	case status == nil:
		return r, malformed("a Rule without Status")
	case *status != "Enabled" && *status != "Disabled":
		return r, malformed("Status is neither Enabled nor Disabled")
	}
	r.Enabled = *status == "Enabled"
	if r.Filter, err = parseRuleFilter(x); err != nil {
		return r, err
	}
	if err := r.parseActions(x); err != nil {
		return r, err
	}
	return r, nil
}

// parseRuleFilter reads the rule's Filter, or its legacy Prefix: one of
// the two, as S3 requires.
func parseRuleFilter(x *xmlRule) (Filter, error) {
	switch {
	case len(x.Filter) > 0 && len(x.Prefix) > 0:
		return Filter{}, malformed("a Rule with both Filter and Prefix")
	case len(x.Prefix) > 0:
		p, err := atMostOne("Prefix", x.Prefix)
		if err != nil {
			return Filter{}, err
		}
		return Filter{Prefix: *p}, checkPrefix(*p)
	}
	fx, err := atMostOne("Filter", x.Filter)
	switch {
	case err != nil:
		return Filter{}, err
	case fx == nil:
		return Filter{}, malformed("a Rule without Filter or Prefix")
	}
	if err := unknown("Filter", fx.Other); err != nil {
		return Filter{}, err
	}
	and, err := atMostOne("And", fx.And)
	if err != nil {
		return Filter{}, err
	}
	outside := fx.count()
	switch {
	case and != nil && outside > 0:
		return Filter{}, malformed("a Filter with And and another element")
	case outside > 1:
		return Filter{}, malformed("a Filter with more than one of Prefix, Tag, ObjectSizeGreaterThan, ObjectSizeLessThan outside And")
	case and == nil:
		return fx.parse()
	}
	if err := unknown("And", and.Other); err != nil {
		return Filter{}, err
	}
	if and.count() == 0 {
		return Filter{}, malformed("an empty And")
	}
	return and.parse()
}

// count is the number of predicates present.
func (p *xmlPredicates) count() int {
	return len(p.Prefix) + len(p.Tag) + len(p.ObjectSizeGreaterThan) + len(p.ObjectSizeLessThan)
}

func (p *xmlPredicates) parse() (Filter, error) {
	var f Filter
	prefix, err := atMostOne("Prefix", p.Prefix)
	if err != nil {
		return f, err
	}
	if prefix != nil {
		if err := checkPrefix(*prefix); err != nil {
			return f, err
		}
		f.Prefix = *prefix
	}
	for _, xt := range p.Tag {
		t, err := parseTag(&xt)
		if err != nil {
			return f, err
		}
		for _, seen := range f.Tags {
			if seen.Key == t.Key {
				return f, errorf("InvalidRequest", "Duplicate Tag Keys are not allowed.")
			}
		}
		f.Tags = append(f.Tags, t)
	}
	if f.SizeGreaterThan, err = parseSize("ObjectSizeGreaterThan", p.ObjectSizeGreaterThan); err != nil {
		return f, err
	}
	if f.SizeLessThan, err = parseSize("ObjectSizeLessThan", p.ObjectSizeLessThan); err != nil {
		return f, err
	}
	if f.SizeLessThan != 0 && f.SizeLessThan <= f.SizeGreaterThan {
		return f, errorf("InvalidArgument", "'ObjectSizeLessThan' must be greater than 'ObjectSizeGreaterThan'")
	}
	return f, nil
}

func parseTag(x *xmlTag) (Tag, error) {
	if err := unknown("Tag", x.Other); err != nil {
		return Tag{}, err
	}
	key, err := atMostOne("Key", x.Key)
	if err != nil {
		return Tag{}, err
	}
	if key == nil {
		return Tag{}, malformed("a Tag without Key")
	}
	value, err := atMostOne("Value", x.Value)
	if err != nil {
		return Tag{}, err
	}
	t := Tag{Key: *key}
	if value != nil { // no Value: objects whose tag has the empty value (S3)
		t.Value = *value
	}
	if err := checkText("Tag", t.Key+t.Value); err != nil {
		return Tag{}, err
	}
	if n := utf8.RuneCountInString(t.Key); n < 1 || n > maxTagKeyLen {
		return Tag{}, errorf("InvalidRequest", "A Tag's Key must be a length between 1 and 128")
	}
	if utf8.RuneCountInString(t.Value) > maxTagValueLen {
		return Tag{}, errorf("InvalidRequest", "A Tag's Value must be a length between 0 and 256")
	}
	return t, nil
}

// parseSize reads a size bound: a positive number of bytes (0 would be
// no bound in Filter, which "greater than 0" is not).
func parseSize(name string, vals []string) (int64, error) {
	s, err := atMostOne(name, vals)
	if err != nil || s == nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*s), 10, 64)
	if err != nil {
		return 0, malformed(name + " is not an integer")
	}
	if n <= 0 {
		return 0, errorf("InvalidArgument", "'"+name+"' must be a positive integer")
	}
	return n, nil
}

// parseActions reads the rule's actions: at least one, as S3 requires.
func (r *Rule) parseActions(x *xmlRule) error {
	e, err := atMostOne("Expiration", x.Expiration)
	if err != nil {
		return err
	}
	if e != nil {
		if r.Expiration, err = parseExpiration(e, len(r.Filter.Tags) > 0); err != nil {
			return err
		}
	}
	ne, err := atMostOne("NoncurrentVersionExpiration", x.NoncurrentVersionExpiration)
	if err != nil {
		return err
	}
	if ne != nil {
		if r.NoncurrentExpiration, err = parseNoncurrent(ne); err != nil {
			return err
		}
	}
	abort, err := atMostOne("AbortIncompleteMultipartUpload", x.AbortIncompleteMultipartUpload)
	if err != nil {
		return err
	}
	if abort != nil {
		if len(r.Filter.Tags) > 0 {
			return errorf("InvalidRequest", "Tag-based filter cannot be used with AbortIncompleteMultipartUpload action")
		}
		if err := unknown("AbortIncompleteMultipartUpload", abort.Other); err != nil {
			return err
		}
		d, err := atMostOne("DaysAfterInitiation", abort.DaysAfterInitiation)
		switch {
		case err != nil:
			return err
		case d == nil:
			return malformed("AbortIncompleteMultipartUpload without DaysAfterInitiation")
		}
		if r.AbortIncompleteUpload, err = parsePositive(*d, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer"); err != nil {
			return err
		}
	}
	if r.Expiration == nil && r.NoncurrentExpiration == nil && r.AbortIncompleteUpload == 0 {
		return errorf("InvalidRequest", "At least one action needs to be specified in a rule")
	}
	return nil
}

// parseExpiration reads an Expiration: one of Days, Date and
// ExpiredObjectDeleteMarker. One that only says
// ExpiredObjectDeleteMarker false does nothing, and is nil.
func parseExpiration(x *xmlExpiration, tagFilter bool) (*Expiration, error) {
	if err := unknown("Expiration", x.Other); err != nil {
		return nil, err
	}
	days, err := atMostOne("Days", x.Days)
	if err != nil {
		return nil, err
	}
	date, err := atMostOne("Date", x.Date)
	if err != nil {
		return nil, err
	}
	marker, err := atMostOne("ExpiredObjectDeleteMarker", x.ExpiredObjectDeleteMarker)
	if err != nil {
		return nil, err
	}
	switch {
	case days != nil && date != nil:
		return nil, malformed("an Expiration with both Days and Date")
	case marker != nil && (days != nil || date != nil):
		return nil, malformed("ExpiredObjectDeleteMarker cannot be specified with Days or Date")
	case days != nil:
		n, err := parsePositive(*days, "'Days' for Expiration action must be a positive integer")
		return &Expiration{Days: n}, err
	case date != nil:
		t, err := parseDate(*date)
		return &Expiration{Date: t}, err
	case marker == nil:
		return nil, malformed("an Expiration without Days, Date or ExpiredObjectDeleteMarker")
	}
	on, err := parseBool("ExpiredObjectDeleteMarker", *marker)
	switch {
	case err != nil || !on:
		return nil, err
	case tagFilter:
		return nil, errorf("InvalidRequest", "Tag-based filter cannot be used with ExpiredObjectDeleteMarker action")
	}
	return &Expiration{ExpiredObjectDeleteMarker: true}, nil
}

// parseNoncurrent reads a NoncurrentVersionExpiration: NoncurrentDays,
// NewerNoncurrentVersions, or both.
func parseNoncurrent(x *xmlNoncurrent) (*NoncurrentExpiration, error) {
	if err := unknown("NoncurrentVersionExpiration", x.Other); err != nil {
		return nil, err
	}
	days, err := atMostOne("NoncurrentDays", x.NoncurrentDays)
	if err != nil {
		return nil, err
	}
	newer, err := atMostOne("NewerNoncurrentVersions", x.NewerNoncurrentVersions)
	if err != nil {
		return nil, err
	}
	if days == nil && newer == nil {
		return nil, malformed("NoncurrentVersionExpiration without NoncurrentDays or NewerNoncurrentVersions")
	}
	var ne NoncurrentExpiration
	if days != nil {
		if ne.NoncurrentDays, err = parsePositive(*days, "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"); err != nil {
			return nil, err
		}
	}
	if newer != nil {
		n, err := parsePositive(*newer, "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer")
		if err != nil {
			return nil, err
		}
		if n > maxNewerVersion {
			return nil, errorf("InvalidArgument", "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must not exceed 100")
		}
		ne.NewerNoncurrentVersions = n
	}
	return &ne, nil
}

// parsePositive reads a count S3 types as a 32-bit integer that must be
// positive; refusal is the InvalidArgument message for a value <= 0.
func parsePositive(s, refusal string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil:
		return 0, malformed(strconv.Quote(s) + " is not an integer")
	case n > math.MaxInt32:
		return 0, malformed(s + " is over a 32-bit integer")
	case n <= 0:
		return 0, errorf("InvalidArgument", refusal)
	}
	return int(n), nil
}

// parseDate reads an ISO 8601 date and time, which must be midnight UTC.
func parseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, malformed("Date is not an ISO 8601 date and time")
	}
	t = t.UTC()
	if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
		return time.Time{}, errorf("InvalidArgument", "'Date' must be at midnight GMT")
	}
	return t, nil
}

// parseBool reads an xsd:boolean.
func parseBool(name, s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, malformed(name + " is neither true nor false")
}

func checkPrefix(p string) error {
	if len(p) > maxPrefixLen {
		return errorf("InvalidRequest", "The maximum size of a prefix is 1024")
	}
	return checkText("Prefix", p)
}

// checkText refuses what the decoder lets through character references
// but a document cannot hold (control characters, U+FFFE), so that what
// Parse accepts Encode writes back unchanged.
func checkText(name, s string) error {
	bad := !utf8.ValidString(s)
	for _, r := range s {
		bad = bad || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF
	}
	if bad {
		return malformed(name + " holds a character XML does not allow")
	}
	return nil
}

// nameRules gives each rule without an ID one from its position
// ("rule-3"; "rule-3.1" if a rule already has that ID), and refuses
// two rules with one ID. Encode keeps the names made.
func (c *Config) nameRules() error {
	taken := make(map[string]bool, len(c.Rules))
	for _, r := range c.Rules {
		if r.ID == "" {
			continue
		}
		if taken[r.ID] {
			return errorf("InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule")
		}
		taken[r.ID] = true
	}
	for i := range c.Rules {
		if c.Rules[i].ID != "" {
			continue
		}
		id := fmt.Sprintf("rule-%d", i+1)
		for k := 1; taken[id]; k++ {
			id = fmt.Sprintf("rule-%d.%d", i+1, k)
		}
		c.Rules[i].ID, taken[id] = id, true
	}
	return nil
}

// atMostOne is the element of xs, which the schema allows once: nil when
// absent.
func atMostOne[T any](name string, xs []T) (*T, error) {
	switch len(xs) {
	case 0:
		return nil, nil
	case 1:
		return &xs[0], nil
	}
	return nil, malformed("more than one " + name)
}

// unknown refuses elements S3's schema does not have.
func unknown(where string, other []xmlAny) error {
	if len(other) > 0 {
		return malformed("unknown element " + other[0].XMLName.Local + " in " + where)
	}
	return nil
}
