package identity

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/xfs3/xfs3/s3api/iam"
)

// formatVersion is the version of the identity document; a document of
// a later version is refused rather than misread.
const formatVersion = 1

// document is the identity file as stored: every user, service account
// and named policy, with secret keys sealed.
type document struct {
	Format          int                       `json:"format"`
	Users           map[string]*userRecord    `json:"users"`
	ServiceAccounts map[string]*accountRecord `json:"serviceAccounts"`
	Policies        map[string]*policyRecord  `json:"policies"`
}

type userRecord struct {
	Secret   string    `json:"secret"` // sealed
	Disabled bool      `json:"disabled,omitempty"`
	Policies []string  `json:"policies,omitempty"`
	Updated  time.Time `json:"updated"`
}

type accountRecord struct {
	Parent      string          `json:"parent"`
	Secret      string          `json:"secret"` // sealed
	Disabled    bool            `json:"disabled,omitempty"`
	Policy      json.RawMessage `json:"policy,omitempty"` // canonical JSON; absent: the parent's policies
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Expiration  time.Time       `json:"expiration,omitzero"` // zero: never
	Updated     time.Time       `json:"updated"`
}

type policyRecord struct {
	Policy  json.RawMessage `json:"policy"` // canonical JSON
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
}

func newDocument() *document {
	return &document{
		Format:          formatVersion,
		Users:           map[string]*userRecord{},
		ServiceAccounts: map[string]*accountRecord{},
		Policies:        map[string]*policyRecord{},
	}
}

// decodeDocument reads a stored document; an empty one is a new
// directory.
func decodeDocument(b []byte) (*document, error) {
	d := newDocument()
	if len(b) == 0 {
		return d, nil
	}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("identity document: %w", err)
	}
	if d.Format != formatVersion {
		return nil, fmt.Errorf("identity document: format %d, this build reads %d", d.Format, formatVersion)
	}
	if d.Users == nil {
		d.Users = map[string]*userRecord{}
	}
	if d.ServiceAccounts == nil {
		d.ServiceAccounts = map[string]*accountRecord{}
	}
	if d.Policies == nil {
		d.Policies = map[string]*policyRecord{}
	}
	for ak, u := range d.Users {
		if u == nil {
			return nil, fmt.Errorf("identity document: user %q has no record", ak)
		}
	}
	for ak, a := range d.ServiceAccounts {
		if a == nil {
			return nil, fmt.Errorf("identity document: service account %q has no record", ak)
		}
		if _, ok := d.Users[ak]; ok {
			return nil, fmt.Errorf("identity document: %q is both a user and a service account", ak)
		}
	}
	for name, p := range d.Policies {
		if p == nil {
			return nil, fmt.Errorf("identity document: policy %q has no record", name)
		}
	}
	return d, nil
}

// clone copies the document deeply enough to change it: records are
// replaced, never changed in place, so they may be shared.
func (d *document) clone() *document {
	return &document{
		Format:          d.Format,
		Users:           maps.Clone(d.Users),
		ServiceAccounts: maps.Clone(d.ServiceAccounts),
		Policies:        maps.Clone(d.Policies),
	}
}

// parsePolicy reads a stored or submitted identity policy.
func parsePolicy(name string, raw []byte) (*iam.Policy, error) {
	p, err := iam.Parse(raw, iam.Identity, iam.MaxIdentityPolicySize)
	if err != nil {
		return nil, err
	}
	p.Name = name
	return p, nil
}
