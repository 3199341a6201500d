// Package identity keeps who may sign requests besides the root
// credentials: users, service accounts and named policies, as one
// document the server stores on its volume (the system file
// .xfs3/config/identities.json, through Storage).
//
//	access key ──► Directory.Lookup ──► *Identity{SecretKey, Policies, Session, Disabled, …}
//	                 (lock-free read of the published state)
//	                                      │
//	request ──► Identity.Decide(iam.Request, bucket policy) ──► iam.Decision
//
// # Model
//
// A user is an access key (its name), a secret key, a status and an
// ordered list of attached named policies. A service account is an
// access key and secret key belonging to a parent (a user, or the root
// access key), optionally narrowed by an inline policy and optionally
// expiring; it is refused while its parent is disabled or gone. Named
// policies are IAM identity policies (package iam); the canned ones
// (readwrite, readonly, writeonly, diagnostics, consoleAdmin) always
// exist and cannot be changed. No access key is shared between the
// root credentials, users and service accounts.
//
// Decide follows AWS within one account: an explicit Deny in the user's
// policies or the bucket policy wins, then an Allow in either allows,
// else the request is denied. A service account with an inline policy
// must also be allowed by that policy (the intersection of its parent's
// rights and its own); without one it has its parent's rights. A
// service account of root has every right its inline policy gives, or
// all of them.
//
// # Secrets
//
// Secret keys are stored sealed: AES-256-GCM under a key derived with
// HKDF-SHA256 from the root secret key (salted with the root access
// key), a random nonce per secret and the access key as associated
// data. The document on the volume, or a copy of it, gives no usable
// secret without the root credentials.
//
// When the root credentials change, the secrets sealed under the old
// ones no longer open: those keys are Sealed, cannot sign, and
// SealedKeys counts them (the server logs a warning at start). Users,
// their policies and service accounts stay. Setting a user's secret
// again (mc admin user add), or a service account's (mc admin user
// svcacct edit --secret-key), seals it under the current root; bringing
// the old root credentials back unseals them all.
//
// # Changes
//
// Every change copies the document, applies itself, indexes the copy
// (policies parsed, secrets unsealed), saves it through Storage, and
// only then publishes it: a failed save changes nothing, and readers
// never see a change that is not durable. Storage.Save must replace the
// document atomically (the store's SystemFiles.Write renames a complete
// new file over the old in one transaction), so after a crash the
// directory is as before or after the change. Changes are serialised by
// one mutex; lookups take no lock. The document is small (users of a
// store number in the hundreds), so each change rewrites it whole.
package identity
