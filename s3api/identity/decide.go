package identity

import "github.com/xfs3/xfs3/s3api/iam"

// RootPolicy names the root credentials in decisions: they may do
// anything, and no policy is consulted.
const RootPolicy = "root credentials"

// AllowRoot is the decision for the root credentials.
var AllowRoot = iam.Decision{Effect: iam.Allow, Matched: true, Policy: RootPolicy}

// Principals are the names the key goes by in bucket policies' Principal
// element: its access key, its user's name and that user's ARN. The
// slice is shared: callers must not change it.
func (id *Identity) Principals() []string { return id.principals }

// setPrincipals fills what Principals returns, once, when the identity
// is made.
func (id *Identity) setPrincipals() {
	if id.User == "" || id.User == id.AccessKey {
		id.principals = []string{id.AccessKey, UserARN(id.AccessKey)}
	} else {
		id.principals = []string{id.AccessKey, id.User, UserARN(id.User)}
	}
}

// UserARN is how a bucket policy may name a user: MinIO's form, without
// an account.
func UserARN(user string) string { return "arn:aws:iam:::user/" + user }

// Decide decides one permission of a request signed by the key: as AWS
// decides within one account, an explicit Deny in the user's policies
// or the bucket's policy wins, then an Allow in either allows. A service
// account with an inline policy must also be allowed by it (the
// intersection of its parent's rights and its own). A service account
// of root is allowed everything its inline policy allows, or everything
// without one. bucketPolicy may be nil.
func (id *Identity) Decide(req iam.Request, bucketPolicy *iam.Policy) iam.Decision {
	if id.Root {
		if id.Session == nil {
			return AllowRoot
		}
		return iam.Evaluate(req, id.Session)
	}
	var buf [8]*iam.Policy
	policies := append(append(buf[:0], id.Policies...), bucketPolicy)
	d := iam.Evaluate(req, policies...)
	if !d.Allowed() || id.Session == nil {
		return d
	}
	if s := iam.Evaluate(req, id.Session); !s.Allowed() {
		return s
	}
	return d
}
