package iam

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// match reports whether s matches pattern, in which '*' matches any run
// of characters (none too), '?' exactly one character, and '\' makes
// the next byte literal (expand escapes what variables produce). With
// fold, ASCII letters match without case, for action names.
//
// It walks both strings once and, on a mismatch, retries from the last
// '*' one character further on: quadratic at worst, never exponential,
// whatever a policy author writes.
func match(pattern, s string, fold bool) bool {
	p, i := 0, 0
	starP, starI := -1, 0 // where to resume after the last '*'
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				starP, starI = p+1, i
				p++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[i:])
				p++
				i += n
				continue
			default:
				width := 1
				if c == '\\' && p+1 < len(pattern) {
					c, width = pattern[p+1], 2
				}
				if sameByte(c, s[i], fold) {
					p += width
					i++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starI:])
		starI += n
		p, i = starP, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

func sameByte(a, b byte, fold bool) bool {
	if a == b {
		return true
	}
	la, lb := a|0x20, b|0x20 // ASCII lower case, for letters
	return fold && la == lb && 'a' <= la && la <= 'z'
}

// Policy variables: "${key}" stands for the single value of a context
// key, "${key, 'default'}" falls back to the quoted text ('' is a
// quote), and "${*}", "${?}", "${$}" stand for those characters taken
// literally. AWS expands them once: what a value contains is never
// expanded again.

// variable is one parsed "${...}".
type variable struct {
	key    string
	def    string
	hasDef bool
}

var (
	errUnclosedVariable = errors.New("policy variable without a closing brace")
	errEmptyVariable    = errors.New("empty policy variable")
	errBadDefault       = errors.New("a policy variable's default value must be in single quotes: ${key, 'value'}")
)

// parseVariable reads the variable at the start of s, which begins with
// "${", and returns it with the number of bytes it takes.
func parseVariable(s string) (variable, int, error) {
	i := 2
	end := strings.IndexAny(s[i:], ",}")
	if end < 0 {
		return variable{}, 0, errUnclosedVariable
	}
	v := variable{key: strings.TrimSpace(s[i : i+end])}
	i += end
	if s[i] == ',' {
		i = skipSpaces(s, i+1)
		if i >= len(s) || s[i] != '\'' {
			return variable{}, 0, errBadDefault
		}
		var def strings.Builder
		for i++; ; i++ {
			if i >= len(s) {
				return variable{}, 0, errBadDefault
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					def.WriteByte('\'')
					i++
					continue
				}
				break
			}
			def.WriteByte(s[i])
		}
		i = skipSpaces(s, i+1)
		if i >= len(s) || s[i] != '}' {
			return variable{}, 0, errBadDefault
		}
		v.def, v.hasDef = def.String(), true
	}
	if v.key == "" {
		return variable{}, 0, errEmptyVariable
	}
	return v, i + 1, nil
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// checkVariables reports the first malformed variable in s.
func checkVariables(s string) error {
	for {
		start := strings.Index(s, "${")
		if start < 0 {
			return nil
		}
		_, n, err := parseVariable(s[start:])
		if err != nil {
			return err
		}
		s = s[start+n:]
	}
}

// escapeLiteral makes text match itself in a pattern.
var escapeLiteral = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`)

// expand substitutes the variables in s with values from ctx (when vars
// is false, s is plain text). With wild, the result is a pattern for
// match: the policy's own '*' and '?' stay wildcards, while everything a
// variable produces is escaped to match literally, so a user called
// "*" gains no wildcard. ok is false when a variable has no single value
// and no default: AWS then lets the element match nothing.
func expand(s string, ctx Context, vars, wild bool) (out string, ok bool) {
	if (!vars || !strings.Contains(s, "${")) && (!wild || !strings.Contains(s, `\`)) {
		return s, true // the common case: nothing to replace or escape
	}
	var b strings.Builder
	text := func(t string) {
		if wild {
			t = strings.ReplaceAll(t, `\`, `\\`)
		}
		b.WriteString(t)
	}
	literal := func(t string) {
		if wild {
			t = escapeLiteral.Replace(t)
		}
		b.WriteString(t)
	}
	for vars {
		start := strings.Index(s, "${")
		if start < 0 {
			break
		}
		text(s[:start])
		v, n, err := parseVariable(s[start:])
		if err != nil {
			return "", false // Validate refuses these; never match on one
		}
		s = s[start+n:]
		switch {
		case !v.hasDef && (v.key == "*" || v.key == "?" || v.key == "$"):
			literal(v.key)
		default:
			if values := ctx.Get(v.key); len(values) == 1 {
				literal(values[0])
			} else if v.hasDef {
				literal(v.def)
			} else {
				return "", false
			}
		}
	}
	text(s)
	return b.String(), true
}
