// Package store maps S3 buckets and objects onto the engine (package xfs),
// so that a kernel mount of the volume shows the same tree as plain files:
//
//	/                        volume root
//	├── .xfs3/               system directory (never a bucket: starts with '.')
//	│   ├── tmp/00 … tmp/0f  staged PUTs, parts and new upload directories,
//	│   │                    spread over 16 directories by name; emptied on open
//	│   ├── uploads/<id>/    an upload in progress: parts 00001, 00002, …
//	│   └── config/<name>    system files (SystemFiles)
//	└── photos/              bucket "photos"
//	    ├── a.jpg            key "a.jpg"
//	    ├── p/               key prefix "p/"
//	    │   ├── q            key "p/q"
//	    │   └── .xfs3.e.     key "p//" (a folder marker with content)
//	    ├── .xfs3.o.p        key "p", an object that is also a prefix
//	    └── .xfs3.versions/  other versions of keys (see Versions):
//	        ├── p/.xfs3.o.q/0ujr1…     a version of "p/q", named by its ID
//	        └── .xfs3.o.a.jpg          "a.jpg" deleted: its version (file form)
//
// It knows nothing of HTTP or S3 error codes: failures are the sentinel
// errors of errors.go, which the S3 layer maps. Full mapping of keys and
// metadata: docs/s3-compatibility.md; request paths: docs/design.md.
//
// # Model
//
// Buckets are directories under the root, named by S3's rules
// (CheckBucketName; "minio" is ReservedBucket). Each is an XFS project:
// its directory carries a project ID with the inherit flag, so the engine
// charges every block and inode below it to the bucket's dquot in the
// transaction that allocates or frees it. Limits are real XFS project
// quotas (Store.Quotas), enforced by the engine; a write over one
// fails with ErrQuotaExceeded and leaves nothing.
//
// Keys are 1 to 1024 bytes of UTF-8 (parseKey), split at every "/" into
// components: "a/b/c" is the file "c" in the directory "a/b". A component
// that cannot be its own name becomes a reserved ".xfs3.e…" name, an
// object that is also a prefix lies beside its directory as ".xfs3.o…",
// and a folder marker is its directory's user.xfs3.folder or its file
// ".xfs3.e." (names.go; the full mapping in docs/s3-compatibility.md). No
// other name starting with ".xfs3." holds a key.
//
// Metadata is user-namespace xattrs on the object's inode: user.xfs3.*
// for the ETag, standard headers, storage class, tags, checksums and the
// parts of a multipart object; user.meta.<name> for x-amz-meta-* (limits
// in Meta.check). Last-Modified is the mtime.
//
// Writes are staged and renamed. PutObject writes the body into a file in
// .xfs3/tmp charged to the bucket's project, then, under the leaf
// directory's lock, checks the Precondition and renames it over the key
// with its xattrs in one engine transaction: readers see the old object
// or the new one. A small body is made whole instead, with its data
// (xfs.Namespace.CreateFile, or NameOp.New). Each operation ends in
// settle, which forces the log (shared with concurrent operations),
// unless Options.AckBeforeDurable.
//
// Deletes only unlink: the name goes and the inode joins its AG's
// unlinked list in one transaction; gc.InodeGC frees it later (a write
// that finds the volume full flushes the gc and retries once). An Object
// from GetObject holds its inode (xfs.Handle), so it reads what it opened
// even if the key is replaced or deleted meanwhile.
//
// Multipart uploads (Store.Uploads) live in .xfs3/uploads/<id> (bucket,
// key and metadata as its xattrs), indexed in memory. A part is staged
// like a PUT and renamed over its number. Completion moves block-aligned
// parts' extents onto a staging file (AppendExtents), copies the rest,
// and places it as a PUT.
//
// # Versions
//
// A bucket's versioning state is the xattr user.xfs3.versioning of its
// directory. A key's current version stays the plain file at its key;
// ListObjects never looks elsewhere. Its other versions and delete
// markers (empty files with user.xfs3.delete-marker) are the files of the
// key's directory in .xfs3.versions, named by version ID (IDs sort by
// age; the null version's name ends ".null"). That name is also the
// file's user.xfs3.version; a file without it is the null version of its
// mtime. The tree's directories are named as in the bucket, a key's by
// besideName (versions.go).
//
// File form: a key's first marker over a current version, with nothing
// in the tree, is one rename: the version becomes the file at the name
// of the key's directory, its user.xfs3.deleted-by naming the marker
// (whose time is its user.xfs3.noncurrent-since); removing that marker
// while no version is current renames it back. Other changes first
// expand it to the directory in a transaction that changes no version
// and skips the inode quota check, so removals never fail on it.
//
// Invariant: a key's current file, if any, is its newest version; with
// none, its newest version is a delete marker. Each transition (a new
// version, a marker, a Suspended replace, a removal by ID promoting the
// next newest) is one xfs.Namespace.Apply under the key's lock and its
// directory's lock, which also makes what is new (NameOp.New), so after
// a crash a key's versions are those before or after a request. An
// Apply that releases the null version (Suspended) may not make inodes:
// it stages them first. Versions count in the bucket's project.
// ListObjectVersions walks the bucket and the versions tree side by side.
//
// Listing walks the bucket depth-first in S3's byte order, a sorted
// directory a level (listcache.go): Prefix's directories looked up by
// name, StartAfter binary-searched, subtrees outside Prefix or inside a
// common prefix skipped.
//
// # Object lock
//
// A bucket's object lock (Locks) is the xattr user.xfs3.object-lock of
// its directory; such a bucket's versioning stays Enabled. A version's
// lock is its xattrs user.xfs3.lock-mode, lock-until and legal-hold,
// written with the version (Meta.Lock or the bucket's default) or by
// Locks. The rules (checkRetentionChange, ObjectLock.protects) refuse
// with ErrObjectLocked; a delete without an ID always adds a marker.
//
// Invariant: a version under a legal hold or COMPLIANCE retention not yet
// ended carries the engine's immutable flag; a flag without such a lock
// is ended COMPLIANCE retention, cleared by the delete. Flag and xattrs
// change in one transaction (the Apply that places a version,
// xfs.Files.SetImmutable), and the store's own moves of a version are
// Apply ops with Immutable, which keep it.
//
// # Health
//
// A sick structure (xfs.SickStructure) refuses changes. Health places
// each (".." walks, the operation that met it, FindSick's walk); failing
// operations return a *SickError naming it, and Options.OnSick hears of
// each once (health.go, health_walk.go).
//
// # Lifecycle and scrub
//
// Lifecycle (gc.Lifecycle's Expirer) expires what a bucket's rules
// (xattr user.xfs3.lifecycle) say is due through deleteKey, its condition
// re-checked under the key's locks, so an object changed since it was
// judged stays. Scrub (gc.Scrubber's source) checks the engine's metadata,
// then every version against its MD5 ETag and checksums; a rotten one is
// recorded by inode, generation and birth time (an overwrite voids it)
// and getObject refuses it (ErrObjectCorrupt). Both keep their place in a
// system file.
//
// # Configuration
//
// A bucket's configuration documents (BucketConfigs: policy, public
// access block) are xattrs user.xfs3.<kind> of its directory, each change
// one transaction; Generation moves with every change so the S3 layer
// knows when what it parsed may be stale. System files (SystemFiles: IAM,
// cursors) are the files of .xfs3/config, in no project, each Write a
// whole new file renamed over the name.
//
// # Invariants
//
//   - Each state between the engine transactions of one change reads as
//     the same keys. Promoting "p" beside a new directory "p/", pruning
//     an empty directory and moving the object back, placing an object at
//     its entry or beside name: each step is one transaction, and an
//     object found under either name is the object. A crash never loses
//     or duplicates an acknowledged object.
//   - A key never names anything outside its bucket: "", "." and ".."
//     components of keys and of listing prefixes map to reserved names
//     inside it.
//   - A failed write leaves nothing: no staging file, no directory it
//     made, no change to the object it would have replaced.
//   - A listing returns each object read whole from one committed state
//     of its inode, or not at all.
//
// # Locking
//
// There is no store-wide lock. Changes in one directory meet at the
// engine's lock of that directory (one namespace change) and at the
// store's lock of that directory (dirlocks.go: one RWMutex per directory
// inode, made on demand, sharded 64 ways), held only by changes that take
// several engine calls on its names:
//
//	operation                        holds
//	PUT, Complete: place             the leaf's directory: pick the name,
//	                                 check the Precondition, rename/create
//	make a directory, promote        its parent
//	putFolder (empty marker)         the directory
//	DELETE                           the leaf's directory
//	a change of a key's versions     the key's lock, then its directory
//	a version's lock or tags         the key's lock (versioned buckets)
//	prune, per directory             its parent, then itself
//	DeleteBucket                     the bucket's directory
//	CreateMultipartUpload            the bucket's directory, shared
//	GET, HEAD of a missing leaf      the leaf's directory, shared
//
// Lock order: an upload's mutex, then a key's lock, then directory locks
// (a parent before its child, or a key's directory before one of the
// versions tree; at most two), then the uploads index (upMu) and the
// other store mutexes, then the engine's locks (package xfs). No store
// lock is taken while an engine lock is held. DeleteBucket takes its
// uploads' mutexes in ID order.
//
// Readers (GET, HEAD, listings, tagging reads) take no store lock. Every
// inode used after a lookup is held by an xfs.Handle taken under the
// directory's engine lock (xfs.Files.OpenAt), so it stays the same inode
// until the handle closes. A name added to a removed directory is refused
// by the engine, and the change starts again from the bucket (errRetry,
// at most maxAttempts times). An object moving back from beside a pruned
// directory between the lookups of its two names is looked up again under
// the directory's lock shared.
package store
