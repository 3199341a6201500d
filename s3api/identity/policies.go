package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/xfs3/xfs3/s3api/iam"
)

// ErrNoChange: an attach or detach that would change nothing (every
// policy named is already attached, or none of them is).
var ErrNoChange = errors.New("the policy change is already in effect")

// MaxPolicyName bounds a named policy's name.
const MaxPolicyName = 128

// PolicyInfo describes a named policy.
type PolicyInfo struct {
	Name    string
	Policy  *iam.Policy
	Canned  bool
	Created time.Time // zero for canned policies
	Updated time.Time
}

// checkPolicyName refuses names that cannot be listed or attached: the
// admin API joins attached names with ','.
func checkPolicyName(name string) error {
	if name == "" || len(name) > MaxPolicyName {
		return fmt.Errorf("%w: policy name of %d characters (1 to %d)", ErrInvalidArgument, len(name), MaxPolicyName)
	}
	for _, c := range name {
		if c <= ' ' || c > '~' || c == ',' {
			return fmt.Errorf("%w: policy name %q holds %q (printable ASCII without spaces or ',')", ErrInvalidArgument, name, c)
		}
	}
	if _, canned := iam.Canned(name); canned {
		return fmt.Errorf("%w: %q", ErrCannedPolicy, name)
	}
	return nil
}

// SetPolicy creates or replaces a named policy from its JSON document.
// Users it is attached to get the new version at once.
func (d *Directory) SetPolicy(name string, doc []byte) error {
	if err := checkPolicyName(name); err != nil {
		return err
	}
	p, err := parsePolicy(name, doc)
	if err != nil {
		return err
	}
	canonical, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return d.change(func(doc *document, now time.Time) error {
		rec := &policyRecord{Policy: canonical, Created: now, Updated: now}
		if old, ok := doc.Policies[name]; ok {
			rec.Created = old.Created
		}
		doc.Policies[name] = rec
		return nil
	})
}

// RemovePolicy removes a named policy and detaches it from every user.
func (d *Directory) RemovePolicy(name string) error {
	if err := checkPolicyName(name); err != nil {
		return err
	}
	return d.change(func(doc *document, now time.Time) error {
		if _, ok := doc.Policies[name]; !ok {
			return fmt.Errorf("%w: %q", ErrNoSuchPolicy, name)
		}
		delete(doc.Policies, name)
		for ak, u := range doc.Users {
			if slices.Contains(u.Policies, name) {
				nu := *u
				nu.Policies = slices.DeleteFunc(slices.Clone(u.Policies), func(p string) bool { return p == name })
				nu.Updated = now
				doc.Users[ak] = &nu
			}
		}
		return nil
	})
}

// PolicyInfo describes one named policy.
func (d *Directory) PolicyInfo(name string) (PolicyInfo, error) {
	st := d.state.Load()
	p, ok := st.named[name]
	if !ok {
		return PolicyInfo{}, fmt.Errorf("%w: %q", ErrNoSuchPolicy, name)
	}
	return policyInfo(st, name, p), nil
}

// Policies lists every named policy, canned ones included, by name.
func (d *Directory) Policies() []PolicyInfo {
	st := d.state.Load()
	out := make([]PolicyInfo, 0, len(st.named))
	for _, name := range sortedNames(st.named) {
		out = append(out, policyInfo(st, name, st.named[name]))
	}
	return out
}

func policyInfo(st *state, name string, p *iam.Policy) PolicyInfo {
	info := PolicyInfo{Name: name, Policy: p, Canned: true}
	if rec, ok := st.doc.Policies[name]; ok {
		info.Canned, info.Created, info.Updated = false, rec.Created, rec.Updated
	}
	return info
}

// Attach attaches named policies to a user and returns those that were
// not attached before (ErrNoChange when there are none).
func (d *Directory) Attach(user string, names ...string) (attached []string, err error) {
	err = d.updateUser(user, func(u *userRecord) error {
		attached = nil
		for _, name := range names {
			if _, ok := d.state.Load().named[name]; !ok {
				return fmt.Errorf("%w: %q", ErrNoSuchPolicy, name)
			}
			if !slices.Contains(u.Policies, name) {
				u.Policies = append(u.Policies, name)
				attached = append(attached, name)
			}
		}
		if attached == nil {
			return fmt.Errorf("%w: %s attached to %q", ErrNoChange, strings.Join(names, ","), user)
		}
		return nil
	})
	return attached, err
}

// Detach detaches named policies from a user and returns those that were
// attached (ErrNoChange when there are none).
func (d *Directory) Detach(user string, names ...string) (detached []string, err error) {
	err = d.updateUser(user, func(u *userRecord) error {
		detached = nil
		for _, name := range names {
			if i := slices.Index(u.Policies, name); i >= 0 {
				u.Policies = slices.Delete(u.Policies, i, i+1)
				detached = append(detached, name)
			}
		}
		if detached == nil {
			return fmt.Errorf("%w: %s not attached to %q", ErrNoChange, strings.Join(names, ","), user)
		}
		return nil
	})
	return detached, err
}
