// Package lifecycle is S3's bucket lifecycle configuration as pure rules:
// the document a client PUTs (Parse), the canonical form the store keeps
// and GET ?lifecycle answers (Encode), and the decisions the lifecycle
// scanner and the S3 layer ask of it (Eval, Expiry, AbortUpload). It
// knows no store, no clock and no HTTP: times come in as arguments, and
// a "day" is a parameter (24h; shorter in tests and demos).
//
//	PUT body ─► Parse ─► Config ─► Encode ─► bucket xattr (canonical)
//	                       │
//	  scanner: a version ──┼─► Eval ─► ExpireCurrent | DeleteVersion |
//	                       │           DeleteMarker | None, and the rule
//	  an upload ───────────┼─► AbortUpload
//	  PUT/GET/HEAD ────────┴─► Expiry ─► x-amz-expiration
//
// # Model
//
// A Config is 1 to 1000 Rules. A rule is enabled or not, selects objects
// by its Filter (key prefix, tags that must all be present with their
// values, size strictly greater and less than bounds), and has one or
// more actions:
//
//   - Expiration: Days after a version is written (ModTime), or from a
//     Date (midnight UTC, whatever the day length), the latest version
//     expires: the scanner deletes it, or with versioning adds a delete
//     marker. The same age also removes a latest delete marker left
//     alone (no other version of its key), as S3 does; an Expiration
//     with ExpiredObjectDeleteMarker alone removes such a marker at once.
//   - NoncurrentExpiration: NoncurrentDays after a version (or marker)
//     stopped being current, it goes for good; with
//     NewerNoncurrentVersions N, only once N newer noncurrent versions of
//     its key exist (the newest N are kept). Without NoncurrentDays (mc
//     can send NewerNoncurrentVersions alone) age is no condition.
//   - AbortIncompleteUpload: DaysAfterInitiation after an upload began,
//     it is aborted. Uploads are matched by prefix only.
//
// Ages are rounded as S3 rounds them (ExpiresAt): an age of n days
// counted from t is reached at the first day boundary at or after t + n
// days: midnight UTC for 24h days. Delete markers have neither size nor
// tags: size bounds do not apply to them, and a rule with tags never
// selects one. Disabled rules decide nothing.
//
// A version's state (latest object, latest marker, noncurrent) admits one
// kind of action, so rules never conflict: Eval's answer is the first
// enabled rule in configuration order whose filter matches and whose time
// has come. Expiry is the earliest expiry over the rules that match (the
// first in order among equal ones), as S3 honours the shorter of two
// overlapping expirations.
//
// # Invariants
//
//   - Parse refuses what S3 refuses, with S3's code (Error): MalformedXML
//     for a document its schema refuses (unknown or repeated elements,
//     Days with Date, ExpiredObjectDeleteMarker with either, a Filter
//     with two predicates outside And, a Status other than Enabled or
//     Disabled); InvalidArgument for values out of range (Days,
//     NoncurrentDays, DaysAfterInitiation not positive; a Date not at
//     midnight UTC; IDs over 255 characters or repeated); InvalidRequest
//     for rules S3 refuses (no action; a tag filter with
//     AbortIncompleteMultipartUpload or ExpiredObjectDeleteMarker;
//     repeated tag keys); NotImplemented for transitions, since one
//     volume has no other storage class.
//   - Every rule Parse returns has an ID (one made from its position when
//     the client sent none) and at least one action; Encode keeps both.
//   - Parse(Encode(c)) equals c for every c Parse returned (FuzzParse).
//
// The package imports only the standard library (integration's layers
// test holds it to that).
package lifecycle
