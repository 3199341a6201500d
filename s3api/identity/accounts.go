package identity

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"
)

// Lengths of generated keys: MinIO's, so that tools that check them are
// content.
const (
	generatedAccessKey = 20
	generatedSecretKey = 40
)

// AccountRequest creates a service account.
type AccountRequest struct {
	Parent      string // a user, or the root access key
	AccessKey   string // "" generates one
	SecretKey   string // "" generates one
	Policy      []byte // inline policy narrowing the parent's rights; nil: none
	Name        string
	Description string
	Expiration  time.Time // zero: never
}

// AccountUpdate changes a service account; nil fields stay.
type AccountUpdate struct {
	SecretKey   *string
	Enabled     *bool
	Policy      *[]byte // an empty document removes the inline policy
	Name        *string
	Description *string
	Expiration  *time.Time // zero: never
}

// AccountInfo describes a service account.
type AccountInfo struct {
	AccessKey   string
	Parent      string
	Enabled     bool
	Policy      []byte // canonical JSON; nil when the account has its parent's rights
	Name        string
	Description string
	Expiration  time.Time
	Updated     time.Time
}

// Credentials are a new account's keys.
type Credentials struct {
	AccessKey  string
	SecretKey  string
	Expiration time.Time
}

// randomKey makes a key of n characters from alphabet.
func randomKey(n int, alphabet string) string {
	b := make([]byte, n)
	rand.Read(b) // never fails
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

const (
	accessKeyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretKeyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// canonicalPolicy checks an inline policy and returns its canonical
// form; an empty document is no policy.
func canonicalPolicy(ak string, doc []byte) (json.RawMessage, error) {
	if len(doc) == 0 {
		return nil, nil
	}
	p, err := parsePolicy("inline policy of "+ak, doc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// AddServiceAccount creates a service account under a user or root.
func (d *Directory) AddServiceAccount(req AccountRequest) (Credentials, error) {
	if req.AccessKey == "" {
		req.AccessKey = randomKey(generatedAccessKey, accessKeyAlphabet)
	}
	if req.SecretKey == "" {
		req.SecretKey = randomKey(generatedSecretKey, secretKeyAlphabet)
	}
	if err := CheckSecretKey(req.SecretKey); err != nil {
		return Credentials{}, err
	}
	policy, err := canonicalPolicy(req.AccessKey, req.Policy)
	if err != nil {
		return Credentials{}, err
	}
	err = d.change(func(doc *document, now time.Time) error {
		if _, ok := doc.Users[req.Parent]; !ok && req.Parent != d.root {
			return fmt.Errorf("%w: %q (the parent of a service account)", ErrNoSuchUser, req.Parent)
		}
		if err := d.checkNewKey(doc, req.AccessKey, KindServiceAccount); err != nil {
			return err
		}
		if _, ok := doc.ServiceAccounts[req.AccessKey]; ok {
			return fmt.Errorf("%w: %q", ErrAccessKeyInUse, req.AccessKey)
		}
		doc.ServiceAccounts[req.AccessKey] = &accountRecord{
			Parent: req.Parent, Secret: d.sealer.seal(req.AccessKey, req.SecretKey),
			Policy: policy, Name: req.Name, Description: req.Description,
			Expiration: req.Expiration.UTC(), Updated: now,
		}
		return nil
	})
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{AccessKey: req.AccessKey, SecretKey: req.SecretKey, Expiration: req.Expiration}, nil
}

// UpdateServiceAccount changes a service account.
func (d *Directory) UpdateServiceAccount(accessKey string, u AccountUpdate) error {
	if u.SecretKey != nil {
		if err := CheckSecretKey(*u.SecretKey); err != nil {
			return err
		}
	}
	var policy json.RawMessage
	if u.Policy != nil {
		var err error
		if policy, err = canonicalPolicy(accessKey, *u.Policy); err != nil {
			return err
		}
	}
	return d.change(func(doc *document, now time.Time) error {
		old, ok := doc.ServiceAccounts[accessKey]
		if !ok {
			return fmt.Errorf("%w: %q", ErrNoSuchServiceAccount, accessKey)
		}
		a := *old
		if u.SecretKey != nil {
			a.Secret = d.sealer.seal(accessKey, *u.SecretKey)
		}
		if u.Enabled != nil {
			a.Disabled = !*u.Enabled
		}
		if u.Policy != nil {
			a.Policy = policy
		}
		if u.Name != nil {
			a.Name = *u.Name
		}
		if u.Description != nil {
			a.Description = *u.Description
		}
		if u.Expiration != nil {
			a.Expiration = u.Expiration.UTC()
		}
		a.Updated = now
		doc.ServiceAccounts[accessKey] = &a
		return nil
	})
}

// DeleteServiceAccount removes a service account.
func (d *Directory) DeleteServiceAccount(accessKey string) error {
	return d.change(func(doc *document, now time.Time) error {
		if _, ok := doc.ServiceAccounts[accessKey]; !ok {
			return fmt.Errorf("%w: %q", ErrNoSuchServiceAccount, accessKey)
		}
		delete(doc.ServiceAccounts, accessKey)
		return nil
	})
}

// ServiceAccount describes one service account.
func (d *Directory) ServiceAccount(accessKey string) (AccountInfo, error) {
	a, ok := d.state.Load().doc.ServiceAccounts[accessKey]
	if !ok {
		return AccountInfo{}, fmt.Errorf("%w: %q", ErrNoSuchServiceAccount, accessKey)
	}
	return accountInfo(accessKey, a), nil
}

// ServiceAccounts lists the service accounts of parent ("" lists all),
// by access key.
func (d *Directory) ServiceAccounts(parent string) []AccountInfo {
	accounts := d.state.Load().doc.ServiceAccounts
	var out []AccountInfo
	for _, ak := range sortedNames(accounts) {
		if a := accounts[ak]; parent == "" || a.Parent == parent {
			out = append(out, accountInfo(ak, a))
		}
	}
	return out
}

func accountInfo(ak string, a *accountRecord) AccountInfo {
	return AccountInfo{
		AccessKey: ak, Parent: a.Parent, Enabled: !a.Disabled, Policy: a.Policy,
		Name: a.Name, Description: a.Description, Expiration: a.Expiration, Updated: a.Updated,
	}
}
