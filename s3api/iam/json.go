package iam

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
)

// decode reads a policy document into a Policy, checking only its JSON
// shape: which elements exist and what types their values have.
// Validate checks the meaning. Element names are matched with case, as
// AWS matches them, so a misspelt element is an error rather than
// silently ignored.
func decode(doc []byte) (*Policy, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil || top == nil {
		return nil, malformed(-1, "", "not a JSON object")
	}
	p := &Policy{}
	for _, name := range sortedKeys(top) {
		raw := top[name]
		var err error
		switch name {
		case "Version":
			p.Version, err = decodeString(-1, name, raw)
		case "Id":
			p.ID, err = decodeString(-1, name, raw)
		case "Statement":
			p.Statements, err = decodeStatements(raw)
		default:
			err = malformed(-1, name, "unknown element")
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// decodeStatements reads Statement, which is one object or an array.
func decodeStatements(raw json.RawMessage) ([]Statement, error) {
	var list []json.RawMessage
	switch firstByte(raw) {
	case '{':
		list = []json.RawMessage{raw}
	case '[':
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, malformed(-1, "Statement", "not an array of objects")
		}
	default:
		return nil, malformed(-1, "Statement", "not an object or an array of objects")
	}
	stmts := make([]Statement, len(list))
	for i, r := range list {
		if err := decodeStatement(i, r, &stmts[i]); err != nil {
			return nil, err
		}
	}
	return stmts, nil
}

func decodeStatement(i int, raw json.RawMessage, s *Statement) error {
	var elems map[string]json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || elems == nil {
		return malformed(i, "", "not a JSON object")
	}
	for _, name := range sortedKeys(elems) {
		raw := elems[name]
		var err error
		switch name {
		case "Sid":
			s.Sid, err = decodeString(i, name, raw)
		case "Effect":
			var e string
			e, err = decodeString(i, name, raw)
			s.Effect = Effect(e)
		case "Principal":
			s.Principal, err = decodePrincipal(i, name, raw)
		case "NotPrincipal":
			s.NotPrincipal, err = decodePrincipal(i, name, raw)
		case "Action":
			s.Action, err = decodeStrings(i, name, raw)
		case "NotAction":
			s.NotAction, err = decodeStrings(i, name, raw)
		case "Resource":
			s.Resource, err = decodeStrings(i, name, raw)
		case "NotResource":
			s.NotResource, err = decodeStrings(i, name, raw)
		case "Condition":
			s.Conditions, err = decodeConditions(i, raw)
		default:
			err = malformed(i, name, "unknown element")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func decodeString(i int, element string, raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", malformed(i, element, "not JSON")
	}
	s, ok := v.(string)
	if !ok {
		return "", malformed(i, element, "not a string")
	}
	return s, nil
}

// decodeStrings reads a string or an array of strings. An empty array
// gives an empty, non-nil slice, so that Validate can tell it from an
// absent element.
func decodeStrings(i int, element string, raw json.RawMessage) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, malformed(i, element, "not JSON")
	}
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, malformed(i, element, "not a string or an array of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, malformed(i, element, "not a string or an array of strings")
}

// decodePrincipal reads "*" or {"AWS": "..." | [...]} into a sorted set.
// Other principal types (Service, Federated, CanonicalUser) name
// identities this server does not have, so they are refused rather
// than kept as statements that can never apply.
func decodePrincipal(i int, element string, raw json.RawMessage) ([]string, error) {
	var set []string
	switch firstByte(raw) {
	case '"':
		s, err := decodeString(i, element, raw)
		if err != nil {
			return nil, err
		}
		if s != Anonymous {
			return nil, malformed(i, element, "a string principal must be \"*\"; name others as {\"AWS\": [...]}")
		}
		set = []string{Anonymous}
	case '{':
		var types map[string]json.RawMessage
		if err := json.Unmarshal(raw, &types); err != nil {
			return nil, malformed(i, element, "not JSON")
		}
		set = []string{}
		for _, typ := range sortedKeys(types) {
			if typ != "AWS" {
				return nil, malformed(i, element, "principal type %q is not supported, only AWS", typ)
			}
			names, err := decodeStrings(i, element, types[typ])
			if err != nil {
				return nil, err
			}
			set = append(set, names...)
		}
	default:
		return nil, malformed(i, element, "not \"*\" or an object")
	}
	slices.Sort(set)
	return slices.Compact(set), nil
}

// decodeConditions reads {operator: {key: value or [values]}} into a
// list sorted by operator, then key: the order in which encoding/json
// writes maps, so that a marshalled policy parses back equal.
func decodeConditions(i int, raw json.RawMessage) ([]Condition, error) {
	var block map[string]json.RawMessage
	if err := json.Unmarshal(raw, &block); err != nil || block == nil {
		return nil, malformed(i, "Condition", "not an object of operators")
	}
	var conds []Condition
	for _, op := range sortedKeys(block) {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(block[op], &keys); err != nil || keys == nil {
			return nil, malformed(i, "Condition", "%s: not an object of keys", op)
		}
		for _, key := range sortedKeys(keys) {
			values, err := decodeValues(keys[key])
			if err != nil {
				return nil, malformed(i, "Condition", "%s %q: %v", op, key, err)
			}
			conds = append(conds, Condition{Operator: op, Key: key, Values: values})
		}
	}
	return conds, nil
}

// decodeValues reads a condition value: a string, number or boolean, or
// a non-empty array of them. Numbers keep their JSON text.
func decodeValues(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errNotScalar
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	} else if len(list) == 0 {
		return nil, errEmptyValues
	}
	out := make([]string, len(list))
	for j, e := range list {
		switch e := e.(type) {
		case string:
			out[j] = e
		case json.Number:
			out[j] = e.String()
		case bool:
			out[j] = strconv.FormatBool(e)
		default:
			return nil, errNotScalar
		}
	}
	return out, nil
}

var (
	errNotScalar   = errors.New("values must be strings, numbers or booleans, or an array of them")
	errEmptyValues = errors.New("empty array of values")
)

// MarshalJSON writes the policy in canonical form: elements in the
// order AWS documents them, every list as an array, principals as
// {"AWS": [...]}, conditions sorted, HTML characters left unescaped.
// It has a value receiver so that a Policy marshals the same whether
// or not it is behind a pointer.
func (p Policy) MarshalJSON() ([]byte, error) {
	w := wirePolicy{Version: p.Version, ID: p.ID, Statement: make([]wireStatement, len(p.Statements))}
	for i, s := range p.Statements {
		ws := wireStatement{
			Sid: s.Sid, Effect: s.Effect,
			Principal: wirePrincipalOf(s.Principal), NotPrincipal: wirePrincipalOf(s.NotPrincipal),
			Action: s.Action, NotAction: s.NotAction,
			Resource: s.Resource, NotResource: s.NotResource,
		}
		if len(s.Conditions) > 0 {
			ws.Condition = make(map[string]map[string][]string)
			for _, c := range s.Conditions {
				if ws.Condition[c.Operator] == nil {
					ws.Condition[c.Operator] = make(map[string][]string)
				}
				ws.Condition[c.Operator][c.Key] = c.Values
			}
		}
		w.Statement[i] = ws
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "&" and "<" in keys readable
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

type wirePolicy struct {
	Version   string          `json:"Version,omitempty"`
	ID        string          `json:"Id,omitempty"`
	Statement []wireStatement `json:"Statement"`
}

type wireStatement struct {
	Sid          string                         `json:"Sid,omitempty"`
	Effect       Effect                         `json:"Effect"`
	Principal    *wirePrincipal                 `json:"Principal,omitempty"`
	NotPrincipal *wirePrincipal                 `json:"NotPrincipal,omitempty"`
	Action       []string                       `json:"Action,omitempty"`
	NotAction    []string                       `json:"NotAction,omitempty"`
	Resource     []string                       `json:"Resource,omitempty"`
	NotResource  []string                       `json:"NotResource,omitempty"`
	Condition    map[string]map[string][]string `json:"Condition,omitempty"`
}

type wirePrincipal struct {
	AWS []string `json:"AWS"`
}

func wirePrincipalOf(set []string) *wirePrincipal {
	if set == nil {
		return nil
	}
	return &wirePrincipal{AWS: set}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func firstByte(raw []byte) byte {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[0]
}
