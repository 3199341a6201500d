package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/s3api/iam"
)

// Storage keeps the identity document. Save must replace it atomically
// and durably: after a crash the document is the old one or the new one.
type Storage interface {
	Load() ([]byte, error) // nil and no error when there is none yet
	Save(doc []byte) error
}

// Kind is what an access key belongs to.
type Kind int

const (
	KindUser           Kind = iota + 1 // a user: its access key is its name
	KindServiceAccount                 // an access key of a user (or of root)
)

// Identity is what one access key may do, as of the last change. It is
// immutable: a change makes new Identities.
type Identity struct {
	AccessKey string
	SecretKey string
	Kind      Kind
	// User is the user the key acts for: the key itself for a user, the
	// parent for a service account ("" when the parent is root).
	User string
	// Root is set for a service account of the root credentials: it may
	// do anything its own policy (if any) allows.
	Root bool
	// Disabled keys (or keys of a disabled user, or expired service
	// accounts, see Usable) are refused.
	Disabled   bool
	Expiration time.Time // zero: never
	// Policies are the user's attached policies, the parent's for a
	// service account, in attachment order. Policy names that no longer
	// exist are left out.
	Policies []*iam.Policy
	// Session narrows a service account: a request must also be allowed
	// by it. Nil: the account has exactly its parent's rights.
	Session *iam.Policy
	// Sealed is set when the secret key could not be unsealed with the
	// current root credentials: the key cannot sign in until its secret
	// is set again (see the package doc).
	Sealed bool

	principals []string // see Principals
}

// Usable reports whether the key may sign requests at time now, and if
// not, why.
func (id *Identity) Usable(now time.Time) error {
	switch {
	case id.Sealed:
		return ErrSealed
	case id.Disabled:
		return ErrDisabled
	case !id.Expiration.IsZero() && !now.Before(id.Expiration):
		return ErrExpired
	}
	return nil
}

// Errors of the directory, tested with errors.Is.
var (
	ErrNoSuchUser           = errors.New("no such user")
	ErrNoSuchServiceAccount = errors.New("no such service account")
	ErrNoSuchPolicy         = errors.New("no such policy")
	ErrInvalidAccessKey     = errors.New("invalid access key")
	ErrInvalidSecretKey     = errors.New("invalid secret key")
	ErrAccessKeyInUse       = errors.New("access key already in use")
	ErrCannedPolicy         = errors.New("canned policies cannot be changed")
	ErrInvalidArgument      = errors.New("invalid argument")
	ErrDisabled             = errors.New("access key disabled")
	ErrExpired              = errors.New("access key expired")
	ErrSealed               = errors.New("secret key sealed under other root credentials")
)

// Directory is the set of users, service accounts and named policies.
// Lookups read an immutable snapshot without locking; changes are
// serialised, saved, and only then published.
type Directory struct {
	storage Storage
	sealer  *sealer
	root    string // the root access key: no user or account may take it
	now     func() time.Time

	mu    sync.Mutex // serialises changes
	state atomic.Pointer[state]
}

// state is one published version of the directory.
type state struct {
	doc    *document
	keys   map[string]*Identity   // every access key
	named  map[string]*iam.Policy // named policies, canned ones included
	sealed int                    // keys whose secret did not unseal
}

// Open loads the directory from storage. rootAccessKey and rootSecretKey
// are the root credentials, from which the key that seals secrets is
// derived. now is the clock (nil: time.Now).
func Open(storage Storage, rootAccessKey, rootSecretKey string, now func() time.Time) (*Directory, error) {
	if rootAccessKey == "" || rootSecretKey == "" {
		return nil, errors.New("identity: empty root credentials")
	}
	s, err := newSealer(rootAccessKey, rootSecretKey)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	d := &Directory{storage: storage, sealer: s, root: rootAccessKey, now: now}
	raw, err := storage.Load()
	if err != nil {
		return nil, fmt.Errorf("identity: load: %w", err)
	}
	doc, err := decodeDocument(raw)
	if err != nil {
		return nil, err
	}
	st, err := d.index(doc)
	if err != nil {
		return nil, err
	}
	d.state.Store(st)
	return d, nil
}

// SealedKeys is the number of access keys whose secret could not be
// unsealed with the current root credentials.
func (d *Directory) SealedKeys() int { return d.state.Load().sealed }

// Lookup returns the identity of an access key.
func (d *Directory) Lookup(accessKey string) (*Identity, bool) {
	id, ok := d.state.Load().keys[accessKey]
	return id, ok
}

// Policy returns a named policy (canned or created).
func (d *Directory) Policy(name string) (*iam.Policy, bool) {
	p, ok := d.state.Load().named[name]
	return p, ok
}

// index builds the lookup tables of a document.
func (d *Directory) index(doc *document) (*state, error) {
	st := &state{doc: doc, keys: map[string]*Identity{}, named: map[string]*iam.Policy{}}
	for _, name := range iam.CannedNames() {
		st.named[name], _ = iam.Canned(name)
	}
	for name, rec := range doc.Policies {
		p, err := parsePolicy(name, rec.Policy)
		if err != nil {
			return nil, fmt.Errorf("identity document: policy %q: %w", name, err)
		}
		st.named[name] = p
	}
	unseal := func(ak, sealed string) (string, bool) {
		secret, err := d.sealer.open(ak, sealed)
		if err != nil {
			st.sealed++
			return "", true
		}
		return secret, false
	}
	for ak, u := range doc.Users {
		id := &Identity{AccessKey: ak, Kind: KindUser, User: ak, Disabled: u.Disabled}
		id.SecretKey, id.Sealed = unseal(ak, u.Secret)
		for _, name := range u.Policies {
			if p, ok := st.named[name]; ok {
				id.Policies = append(id.Policies, p)
			}
		}
		id.setPrincipals()
		st.keys[ak] = id
	}
	for ak, a := range doc.ServiceAccounts {
		id := &Identity{AccessKey: ak, Kind: KindServiceAccount, Disabled: a.Disabled, Expiration: a.Expiration}
		id.SecretKey, id.Sealed = unseal(ak, a.Secret)
		if a.Parent == d.root {
			id.Root = true
		} else if parent, ok := st.keys[a.Parent]; ok && parent.Kind == KindUser {
			id.User = a.Parent
			id.Policies = parent.Policies
			id.Disabled = id.Disabled || parent.Disabled
		} else {
			// The parent is gone (or is the root of other credentials):
			// the account can do nothing.
			id.User = a.Parent
			id.Disabled = true
		}
		if len(a.Policy) > 0 {
			p, err := parsePolicy("inline policy of "+ak, a.Policy)
			if err != nil {
				return nil, fmt.Errorf("identity document: service account %q: %w", ak, err)
			}
			id.Session = p
		}
		id.setPrincipals()
		st.keys[ak] = id
	}
	return st, nil
}

// change applies fn to a copy of the document, saves the result and
// publishes it. Nothing changes when fn or the save fails.
func (d *Directory) change(fn func(doc *document, now time.Time) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc := d.state.Load().doc.clone()
	if err := fn(doc, d.now().UTC().Truncate(time.Second)); err != nil {
		return err
	}
	st, err := d.index(doc)
	if err != nil {
		return err
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := d.storage.Save(raw); err != nil {
		return fmt.Errorf("identity: save: %w", err)
	}
	d.state.Store(st)
	return nil
}

// sortedNames returns a map's keys in order.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
