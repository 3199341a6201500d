package identity

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Limits of access and secret keys. An access key appears in the
// credential scope of a signature ("AK/date/region/s3/aws4_request"), so
// it may hold no '/', and MinIO's admin API lists keys joined by ',' and
// '=', so those are refused too.
const (
	MinAccessKey = 3
	MaxAccessKey = 128
	MinSecretKey = 8
	MaxSecretKey = 128
)

// CheckAccessKey reports whether ak may name a user or service account.
func CheckAccessKey(ak string) error {
	if len(ak) < MinAccessKey || len(ak) > MaxAccessKey {
		return fmt.Errorf("%w: %d characters (%d to %d)", ErrInvalidAccessKey, len(ak), MinAccessKey, MaxAccessKey)
	}
	for _, c := range ak {
		if c <= ' ' || c > '~' || strings.ContainsRune("/,=", c) {
			return fmt.Errorf("%w: %q holds %q (printable ASCII without spaces, '/', ',' or '=')", ErrInvalidAccessKey, ak, c)
		}
	}
	return nil
}

// CheckSecretKey reports whether sk may be a secret key.
func CheckSecretKey(sk string) error {
	if len(sk) < MinSecretKey || len(sk) > MaxSecretKey {
		return fmt.Errorf("%w: %d characters (%d to %d)", ErrInvalidSecretKey, len(sk), MinSecretKey, MaxSecretKey)
	}
	for _, c := range sk {
		if c < ' ' || c > '~' {
			return fmt.Errorf("%w: printable ASCII only", ErrInvalidSecretKey)
		}
	}
	return nil
}

// UserInfo describes a user.
type UserInfo struct {
	AccessKey string
	Enabled   bool
	Policies  []string // attached, in order
	Updated   time.Time
}

// checkNewKey refuses an access key that the root credentials or the
// other kind of identity already use.
func (d *Directory) checkNewKey(doc *document, ak string, kind Kind) error {
	if err := CheckAccessKey(ak); err != nil {
		return err
	}
	_, user := doc.Users[ak]
	_, account := doc.ServiceAccounts[ak]
	if ak == d.root || (user && kind != KindUser) || (account && kind != KindServiceAccount) {
		return fmt.Errorf("%w: %q", ErrAccessKeyInUse, ak)
	}
	return nil
}

// AddUser creates a user, or sets an existing user's secret key and
// status (its policies and service accounts stay).
func (d *Directory) AddUser(accessKey, secretKey string, enabled bool) error {
	if err := CheckSecretKey(secretKey); err != nil {
		return err
	}
	return d.change(func(doc *document, now time.Time) error {
		if err := d.checkNewKey(doc, accessKey, KindUser); err != nil {
			return err
		}
		u := &userRecord{Secret: d.sealer.seal(accessKey, secretKey), Disabled: !enabled, Updated: now}
		if old, ok := doc.Users[accessKey]; ok {
			u.Policies = old.Policies
		}
		doc.Users[accessKey] = u
		return nil
	})
}

// RemoveUser removes a user and its service accounts.
func (d *Directory) RemoveUser(accessKey string) error {
	return d.change(func(doc *document, now time.Time) error {
		if _, ok := doc.Users[accessKey]; !ok {
			return fmt.Errorf("%w: %q", ErrNoSuchUser, accessKey)
		}
		delete(doc.Users, accessKey)
		for ak, a := range doc.ServiceAccounts {
			if a.Parent == accessKey {
				delete(doc.ServiceAccounts, ak)
			}
		}
		return nil
	})
}

// SetUserStatus enables or disables a user; a disabled user's service
// accounts are refused too.
func (d *Directory) SetUserStatus(accessKey string, enabled bool) error {
	return d.updateUser(accessKey, func(u *userRecord) error {
		u.Disabled = !enabled
		return nil
	})
}

// updateUser changes a copy of a user's record.
func (d *Directory) updateUser(accessKey string, fn func(u *userRecord) error) error {
	return d.change(func(doc *document, now time.Time) error {
		old, ok := doc.Users[accessKey]
		if !ok {
			return fmt.Errorf("%w: %q", ErrNoSuchUser, accessKey)
		}
		u := *old
		u.Policies = slices.Clone(old.Policies)
		if err := fn(&u); err != nil {
			return err
		}
		u.Updated = now
		doc.Users[accessKey] = &u
		return nil
	})
}

// User describes one user.
func (d *Directory) User(accessKey string) (UserInfo, error) {
	u, ok := d.state.Load().doc.Users[accessKey]
	if !ok {
		return UserInfo{}, fmt.Errorf("%w: %q", ErrNoSuchUser, accessKey)
	}
	return userInfo(accessKey, u), nil
}

// Users lists every user, by access key.
func (d *Directory) Users() []UserInfo {
	users := d.state.Load().doc.Users
	out := make([]UserInfo, 0, len(users))
	for _, ak := range sortedNames(users) {
		out = append(out, userInfo(ak, users[ak]))
	}
	return out
}

func userInfo(ak string, u *userRecord) UserInfo {
	return UserInfo{AccessKey: ak, Enabled: !u.Disabled, Policies: slices.Clone(u.Policies), Updated: u.Updated}
}
