package iam

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// comparison is what an operator compares, without its negation, set
// qualifier or IfExists suffix.
type comparison int

const (
	cmpStringEquals comparison = iota
	cmpStringEqualsIgnoreCase
	cmpStringLike
	cmpNumericEquals
	cmpNumericLessThan
	cmpNumericLessThanEquals
	cmpNumericGreaterThan
	cmpNumericGreaterThanEquals
	cmpDateEquals
	cmpDateLessThan
	cmpDateLessThanEquals
	cmpDateGreaterThan
	cmpDateGreaterThanEquals
	cmpBool
	cmpIPAddress
	cmpNull
)

// operators names every base operator: its comparison, and whether it
// is the negated form, which holds exactly when the plain form does not.
var operators = map[string]struct {
	cmp     comparison
	negated bool
}{
	"StringEquals":              {cmpStringEquals, false},
	"StringNotEquals":           {cmpStringEquals, true},
	"StringEqualsIgnoreCase":    {cmpStringEqualsIgnoreCase, false},
	"StringNotEqualsIgnoreCase": {cmpStringEqualsIgnoreCase, true},
	"StringLike":                {cmpStringLike, false},
	"StringNotLike":             {cmpStringLike, true},
	"NumericEquals":             {cmpNumericEquals, false},
	"NumericNotEquals":          {cmpNumericEquals, true},
	"NumericLessThan":           {cmpNumericLessThan, false},
	"NumericLessThanEquals":     {cmpNumericLessThanEquals, false},
	"NumericGreaterThan":        {cmpNumericGreaterThan, false},
	"NumericGreaterThanEquals":  {cmpNumericGreaterThanEquals, false},
	"DateEquals":                {cmpDateEquals, false},
	"DateNotEquals":             {cmpDateEquals, true},
	"DateLessThan":              {cmpDateLessThan, false},
	"DateLessThanEquals":        {cmpDateLessThanEquals, false},
	"DateGreaterThan":           {cmpDateGreaterThan, false},
	"DateGreaterThanEquals":     {cmpDateGreaterThanEquals, false},
	"Bool":                      {cmpBool, false},
	"IpAddress":                 {cmpIPAddress, false},
	"NotIpAddress":              {cmpIPAddress, true},
	"Null":                      {cmpNull, false},
}

// set says how a key's several request values combine.
type set int

const (
	single       set = iota // no qualifier: any request value may match
	forAnyValue             // "ForAnyValue:": some value matches; none present is false
	forAllValues            // "ForAllValues:": every value matches; none present is true
)

type operator struct {
	cmp      comparison
	negated  bool
	set      set
	ifExists bool // "...IfExists": a missing key makes the condition hold
}

// parseOperator splits a condition operator into its parts. Names are
// matched with case, as AWS spells them.
func parseOperator(name string) (operator, error) {
	var op operator
	rest := name
	if r, ok := strings.CutPrefix(rest, "ForAnyValue:"); ok {
		op.set, rest = forAnyValue, r
	} else if r, ok := strings.CutPrefix(rest, "ForAllValues:"); ok {
		op.set, rest = forAllValues, r
	}
	if r, ok := strings.CutSuffix(rest, "IfExists"); ok {
		op.ifExists, rest = true, r
	}
	base, ok := operators[rest]
	if !ok {
		return operator{}, fmt.Errorf("unknown condition operator %q", name)
	}
	op.cmp, op.negated = base.cmp, base.negated
	if op.cmp == cmpNull && (op.set != single || op.ifExists) {
		return operator{}, errors.New("Null takes no ForAnyValue:, ForAllValues: or IfExists")
	}
	return op, nil
}

// validate checks the operator, the key and that every value has the
// operator's type (policy variables are expanded only in string values,
// as AWS does).
func (c *Condition) validate(vars bool) error {
	op, err := parseOperator(c.Operator)
	if err != nil {
		return err
	}
	if c.Key == "" {
		return errors.New("empty condition key")
	}
	if len(c.Values) == 0 {
		return errEmptyValues
	}
	for _, v := range c.Values {
		if err := op.checkValue(v, vars); err != nil {
			return err
		}
	}
	return nil
}

func (op operator) checkValue(v string, vars bool) error {
	ok := true
	switch op.cmp {
	case cmpStringEquals, cmpStringEqualsIgnoreCase, cmpStringLike:
		if vars {
			return checkVariables(v)
		}
	case cmpNumericEquals, cmpNumericLessThan, cmpNumericLessThanEquals, cmpNumericGreaterThan, cmpNumericGreaterThanEquals:
		_, ok = parseNumber(v)
	case cmpDateEquals, cmpDateLessThan, cmpDateLessThanEquals, cmpDateGreaterThan, cmpDateGreaterThanEquals:
		_, ok = parseDate(v)
	case cmpBool, cmpNull:
		ok = strings.EqualFold(v, "true") || strings.EqualFold(v, "false")
	case cmpIPAddress:
		_, ok = parsePrefix(v)
	}
	if !ok {
		return fmt.Errorf("%q is not a valid value for this operator", v)
	}
	return nil
}

// holds reports whether the condition holds in ctx. ok is false when
// the operator is unknown, which only a policy that skipped Validate
// can have; the caller then fails closed.
//
// The rules are AWS's: a missing key makes plain operators false and
// negated ones true, IfExists operators and ForAllValues true,
// ForAnyValue false; Null tests only presence. A key's policy values
// are ORed (for negated operators: none may match).
func (c *Condition) holds(ctx Context, vars bool) (holds, ok bool) {
	op, err := parseOperator(c.Operator)
	if err != nil {
		return false, false
	}
	got := ctx.Get(c.Key)
	if op.cmp == cmpNull {
		absent := len(got) == 0
		for _, v := range c.Values {
			if strings.EqualFold(v, "true") == absent {
				return true, true
			}
		}
		return false, true
	}
	if len(got) == 0 {
		switch {
		case op.ifExists, op.set == forAllValues:
			return true, true
		case op.set == forAnyValue:
			return false, true
		}
		return op.negated, true
	}
	want := c.expandValues(ctx, op, vars)
	matches := func(v string) bool { // the plain form, for one request value
		for _, w := range want {
			if op.compare(v, w) {
				return true
			}
		}
		return false
	}
	switch op.set {
	case forAnyValue:
		for _, v := range got {
			if matches(v) != op.negated {
				return true, true
			}
		}
		return false, true
	case forAllValues:
		for _, v := range got {
			if matches(v) == op.negated {
				return false, true
			}
		}
		return true, true
	}
	for _, v := range got {
		if matches(v) {
			return !op.negated, true
		}
	}
	return op.negated, true
}

// expandValues turns the policy values into what compare takes:
// variables substituted in string values (a value whose variable has no
// value is dropped, so it matches nothing) and StringLike values made
// patterns.
func (c *Condition) expandValues(ctx Context, op operator, vars bool) []string {
	wild := op.cmp == cmpStringLike
	switch op.cmp {
	case cmpStringEquals, cmpStringEqualsIgnoreCase, cmpStringLike:
	default:
		return c.Values
	}
	if !slices.ContainsFunc(c.Values, func(v string) bool {
		return vars && strings.Contains(v, "${") || wild && strings.Contains(v, `\`)
	}) {
		return c.Values // nothing to replace or escape: the common case
	}
	out := make([]string, 0, len(c.Values))
	for _, v := range c.Values {
		if e, ok := expand(v, ctx, vars, wild); ok {
			out = append(out, e)
		}
	}
	return out
}

// compare applies the plain (not negated) comparison to a request value
// and a policy value. A request value of the wrong type matches nothing.
func (op operator) compare(got, want string) bool {
	switch op.cmp {
	case cmpStringEquals:
		return got == want
	case cmpStringEqualsIgnoreCase:
		return strings.EqualFold(got, want)
	case cmpStringLike:
		return match(want, got, false)
	case cmpBool:
		return strings.EqualFold(got, want)
	case cmpIPAddress:
		a, okA := parseAddr(got)
		p, okP := parsePrefix(want)
		return okA && okP && p.Contains(a)
	}
	var order int
	switch op.cmp {
	case cmpNumericEquals, cmpNumericLessThan, cmpNumericLessThanEquals, cmpNumericGreaterThan, cmpNumericGreaterThanEquals:
		a, okA := parseNumber(got)
		b, okB := parseNumber(want)
		if !okA || !okB {
			return false
		}
		order = a.compare(b)
	default:
		a, okA := parseDate(got)
		b, okB := parseDate(want)
		if !okA || !okB {
			return false
		}
		order = a.Compare(b)
	}
	switch op.cmp {
	case cmpNumericEquals, cmpDateEquals:
		return order == 0
	case cmpNumericLessThan, cmpDateLessThan:
		return order < 0
	case cmpNumericLessThanEquals, cmpDateLessThanEquals:
		return order <= 0
	case cmpNumericGreaterThan, cmpDateGreaterThan:
		return order > 0
	case cmpNumericGreaterThanEquals, cmpDateGreaterThanEquals:
		return order >= 0
	}
	return false
}

// number keeps integers exact (a float64 loses them past 2^53) and
// compares them as floats only against a fraction.
type number struct {
	i     int64
	f     float64
	isInt bool
}

func parseNumber(s string) (number, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{i: i, f: float64(i), isInt: true}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return number{}, false
	}
	return number{f: f}, true
}

func (a number) compare(b number) int {
	if a.isInt && b.isInt {
		return cmp.Compare(a.i, b.i)
	}
	return cmp.Compare(a.f, b.f)
}

// dateLayouts are the ISO 8601 forms accepted besides epoch seconds.
// A time without a zone is UTC.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"}

// parseDate reads an ISO 8601 date or time, or seconds since the epoch
// (the form of aws:EpochTime).
func parseDate(s string) (time.Time, bool) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		n, err := strconv.ParseInt(s, 10, 64)
		return time.Unix(n, 0).UTC(), err == nil
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parsePrefix reads a CIDR block, or a bare address as a block of one.
// IPv4 blocks written in IPv6 form are unmapped, as request addresses
// are, so both spellings match the same clients.
func parsePrefix(s string) (netip.Prefix, bool) {
	if !strings.Contains(s, "/") {
		a, ok := parseAddr(s)
		return netip.PrefixFrom(a, a.BitLen()), ok
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p, true
}

func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}
