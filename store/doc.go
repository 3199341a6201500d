// Package store maps S3 buckets and objects onto the engine (package xfs),
// so that a kernel mount of the volume shows the same tree as plain files:
//
//	/                      volume root
//	├── .xfs3/             system directory (never a bucket: starts with '.')
//	│   ├── tmp/<nn>/<random>  staged PUTs, parts, completions and new
//	│   │                  upload directories, renamed into place when
//	│   │                  complete; spread over 16 directories 00..0f by
//	│   │                  the name's first digit (one directory lock for
//	│   │                  every PUT would serialise them); emptied on open
//	│   └── uploads/<id>/  a multipart upload in progress (survives restarts)
//	│       ├── 00001      part 1
//	│       └── 00007      part 7
//	└── photos/            bucket "photos"
//	    ├── a.jpg          key "a.jpg"
//	    ├── 2024/          key prefix "2024/" (a folder marker if it has
//	    │   └── b.jpg      user.xfs3.folder), key "2024/b.jpg"
//	    ├── p/             key prefix "p/"
//	    │   ├── q          key "p/q"
//	    │   └── .xfs3.e.   key "p//" (a folder marker with content)
//	    └── .xfs3.o.p      key "p", an object that is also a prefix
//	                       (reserved names: see Keys)
//
// It knows nothing of HTTP or S3 error codes: failures are the sentinel
// errors in errors.go (tested with errors.Is), which the S3 layer maps.
//
// # Buckets
//
// A bucket is a directory under the root. Names follow S3
// (CheckBucketName): 3 to 63 characters of lowercase letters, digits, '.'
// and '-'; starting and ending with a letter or digit; no ".."; not four
// dot-separated numbers (an IP address); not starting with "xn--" or
// "sthree-", not ending with "-s3alias" or "--ol-s3"; not "minio"
// (ReservedBucket: the server's own endpoints live under /minio/). Breaking
// a rule gives ErrInvalidBucketName. CreateBucket on an existing bucket gives
// ErrBucketExists; DeleteBucket of a bucket holding an object
// ErrBucketNotEmpty (uploads in progress do not count: they are aborted
// with the bucket); a missing bucket ErrNoSuchBucket. ListBuckets reports the directory's
// creation time (crtime) and skips root entries that are not valid bucket
// names (the system directory, lost+found).
//
// # Keys
//
// Every S3 key is an object: 1 to 1024 bytes (longer: ErrKeyTooLong;
// empty: ErrInvalidKey) of valid UTF-8 (else ErrInvalidKey). A key is
// split at every "/" into components: "a/b/c" is the directory "a/b" and
// the file "c" in the bucket's directory, as a kernel mount shows it. The
// common case, keys whose components are usable names and no key both an
// object and a prefix, is nothing more: plain files in plain directories.
// The rest is mapped into names that start with ".xfs3.", which no client
// key gives otherwise:
//
//	component c, used as a name        its name in the directory (entry name)
//	plain: not "", ".", "..", at most  c
//	  255 bytes, no NUL, not starting
//	  with ".xfs3."
//	otherwise, if 8 + len(c) ≤ 255     ".xfs3.e." + c       (".." → ".xfs3.e...")
//	  and c has no NUL
//	otherwise                          ".xfs3.eh." + hex(SHA-256(c)), and the
//	                                   inode's xattr user.xfs3.name holds c
//
// so "a//b" is a/.xfs3.e./b, "x/../y" is x/.xfs3.e.../y, a component of
// 300 bytes is a hashed name, and a client component ".xfs3.o.p" is
// .xfs3.e..xfs3.o.p. A key ending in "/" has the empty last component: it
// is a folder marker, the object of its directory. An empty marker is
// kept as it always was, as the directory itself (made if missing) with
// the attribute user.xfs3.folder (value: its Last-Modified, RFC 3339) and
// its metadata, so a kernel mount shows a plain directory; a marker with
// content is the file named for the empty component, "m/.xfs3.e.". A
// marker file wins over the attribute (a crash between writing one and
// removing the other leaves both).
//
// A key that is an object and a prefix at once ("p" and "p/q") keeps the
// directory at the entry name and the object file beside it, under its
// beside name: ".xfs3.o." + c, or ".xfs3.oh." + hex(SHA-256(c)) with
// user.xfs3.name when that would pass 255 bytes (or c holds a NUL). A PUT
// of "p/q" while the file "p" exists first renames "p" to ".xfs3.o.p",
// then makes the directory "p"; a PUT of "p" while the directory exists
// renames the staged file to ".xfs3.o.p". When the directory "p" is
// pruned, ".xfs3.o.p" is renamed back to "p". Each of these steps is one
// engine transaction and every state between them reads as the same keys
// (an object found under either name is the object), so a crash never
// loses or duplicates an acknowledged object; lookups try the entry name,
// then the beside name. A directory with a hashed name is made in
// .xfs3/tmp, given its user.xfs3.name and renamed into place, so it never
// appears without it. Any other name starting with ".xfs3.", a name that
// is not the one form of the component it decodes to, and entries that
// are neither files nor directories hold no keys: listings skip them.
//
// Deleting an object removes every directory above it left empty, up to
// the bucket, stopping at folder markers (an attribute, or a marker file,
// which makes its directory non-empty). Deleting a missing key succeeds.
// ErrKeyConflict remains only for a name that is neither file nor
// directory (made by other tools) where the store needs one.
//
// # Metadata
//
// Stored as user-namespace xattrs, so getfattr -d shows them:
//
//	ETag (MD5 hex of the content)   user.xfs3.etag
//	Content-Type                    user.xfs3.content-type
//	Content-Encoding                user.xfs3.content-encoding
//	Content-Disposition             user.xfs3.content-disposition
//	Content-Language                user.xfs3.content-language
//	Cache-Control                   user.xfs3.cache-control
//	Expires                         user.xfs3.expires
//	x-amz-storage-class             user.xfs3.storage-class (absent: STANDARD)
//	x-amz-meta-<name>               user.meta.<name> (name lowercased)
//
//	Tags (x-amz-tagging)            user.xfs3.tagging
//	x-amz-checksum-<algorithm>      user.xfs3.checksum-<algorithm> (crc32,
//	                                crc32c, crc64nvme, sha1, sha256)
//	x-amz-checksum-type             user.xfs3.checksum-type (multipart objects;
//	                                absent: FULL_OBJECT)
//	an upload's algorithm           user.xfs3.checksum-algorithm (upload
//	                                directories)
//	parts of a multipart object     user.xfs3.parts (their count) and
//	                                user.xfs3.parts.1, .2, … (400 lines each:
//	                                "number size etag checksum", "-" for none)
//	the upload it was completed from user.xfs3.upload-id
//
// Empty standard headers are not stored. User metadata names are 1 to 245
// bytes of printable ASCII without spaces (ErrInvalidMetadata), names plus
// values at most 2 KiB (ErrMetadataTooLarge). Last-Modified is the file's
// mtime.
//
// Tags are stored as one URL query with keys sorted ("color=red&size=L"),
// so getfattr shows them readably. At most 10 tags, keys unique and 1 to
// 128 characters, values at most 256, all valid UTF-8 (else ErrInvalidTag).
// PutObject and CompleteMultipartUpload store Meta.Tags; Head and Get
// return them; Get/Put/DeleteObjectTagging read and replace them alone;
// CopyObject keeps them with nil meta (COPY) and takes meta.Tags otherwise.
// A bucket's tags (Get/Put/DeleteBucketTagging) are the same attribute on
// the bucket's directory, with up to MaxBucketTags (50); none is
// ErrNoSuchTagSet on Get.
//
// Meta.StorageClass is only stored and returned; ListObjects fills it
// (the one Meta field a listing carries: it reads the attributes for the
// ETag anyway).
//
// Checksums are stored as given (base64, as S3 sends them) and returned by
// Head and Get. The S3 layer verifies those of a body while streaming, by
// wrapping it in a reader whose last Read fails (with an error wrapping
// ErrBadDigest) on a mismatch: PutObject and UploadPart then store nothing
// (see PutObject's reader contract). The store computes checksums only
// where no body carries them, with package store/checksum: a multipart
// object's, from its parts' (COMPOSITE: the hash of the part digests with
// "-N"; FULL_OBJECT: the CRCs combined, no byte read again), and a copy's
// when asked for an algorithm or when the source's is composite (it
// describes parts the copy does not have). A copy otherwise keeps its
// source's.
//
// # Writes
//
// PutObject creates .xfs3/tmp/<nn>/<random>, preallocates the declared size in
// one extent when it is known and over 1 MiB, streams the body in 1 MiB
// chunks (memory stays flat) computing the MD5 on the way, and only then
// makes missing parent directories and, under the leaf directory's lock
// (see Locking), renames the file over the key and sets its xattrs in one
// engine transaction: readers see the old object or the new one, never a
// partial one. A body of known size up to smallObjectMax (128 KiB) is
// read into memory first instead; for a key that does not exist yet it
// is created under the key with its data and xattrs in one engine
// transaction (xfs.Volume.CreateFile, one commit per PUT instead of
// three, no staging file), and a key that exists is replaced through a
// staging file as above, since only a rename replaces a name atomically.
// A failure removes the staging file and
// any directory it made, as does any error from the body reader, even one
// returned with the final bytes. Bodies over MaxObjectSize (parts:
// MaxPartSize) give ErrEntityTooLarge. An Object returned by GetObject
// keeps reading the content it opened even if the key is overwritten or
// deleted: it holds a reference on the inode (xfs.Handle), and the engine
// keeps an inode without links on its unlinked list until the last
// reference is closed. (Volumes written before this kept such inodes alive
// with extra links in .xfs3/trash, which New empties and removes.)
// CopyObject copies the bytes.
//
// Conditional writes: PutObjectIf and CompleteMultipartUploadWith
// (CompleteOptions.If) take a Precondition (IfNoneMatch: no object has
// the key; IfMatch: the object has that ETag) checked inside place, under
// the leaf directory's lock, just before the rename or create: no other
// write can place the key in between, so of racing IfNoneMatch writers
// exactly one succeeds and the others get
// ErrPreconditionFailed (ErrNoSuchKey for IfMatch without an object).
// CheckPrecondition tests the same without writing, for callers that
// refuse before reading a body.
//
// # Deletes and garbage collection
//
// DeleteObject, an overwrite and an aborted upload only unlink: the
// transaction that removes the name also puts the inode on its AG's
// unlinked list, and the call returns once that is durable. The inode and
// its extents are freed later by the store's gc.InodeGC (Options.GC):
// per-CPU background queues by default, or inside the call (gc.Sync), or
// by a walker per AG (gc.Sweep). Space reports (the engine's Statfs)
// flush the collector first, and a write that finds the volume full
// flushes it and retries once, so deleted space counts as free at once.
// Close drains the collector; a crash leaves the inodes on their lists,
// where the next open (ours or the kernel's log recovery) frees them.
// GCStats reports the collector's counters.
//
// # Multipart uploads
//
// CreateMultipartUpload makes .xfs3/uploads/<id>, with the bucket, key,
// initiation time and metadata (tags included) as xattrs of the directory
// (user.xfs3.upload-bucket, -key, -initiated, and the object attributes
// above). IDs are 24 random bytes in URL-safe base64. The directory is
// built in .xfs3/tmp and renamed in whole, and an in-memory index of the
// uploads (loaded on open) serves lookups and ListMultipartUploads without
// reading the disk. UploadPart streams a part into .xfs3/tmp like
// PutObject, sets user.xfs3.etag (MD5 hex), user.xfs3.part-size and the
// checksums, and renames it over uploads/<id>/<number, 5 digits>: a part
// sent again replaces the old one atomically. An upload created with a
// checksum algorithm (and type) takes parts with that algorithm's checksum
// only (ErrInvalidChecksum otherwise).
//
// CompleteMultipartUpload checks the list (ascending numbers, existing
// parts with matching ETags and checksums, all but the last at least 5
// MiB; for a composite checksum every part's listed), computes the
// object's checksum from the parts' and checks the one the client
// expects (ErrBadDigest), then joins the parts in a staging file. While
// the staging size is a multiple of the block size, a part is moved rather
// than copied: xfs.Volume.AppendExtents remaps its extents onto the end of
// the staging file in one engine transaction (two inodes, no data I/O),
// so completing 1 GiB of aligned parts costs milliseconds. After a part of
// unaligned size every later part is copied. The object gets the upload's
// metadata, its checksum, the record of its parts (ObjectParts) and the
// ETag hex(md5(md5(part 1) ‖ … ‖ md5(part N)))-N, all in one transaction, is
// renamed into place as PutObject does, and the upload's directory goes
// with any unused parts. A completion that fails after moving parts
// leaves them consumed (the part file is shorter than its part-size):
// they then give ErrInvalidPart. Abort removes the directory, and so does
// DeleteBucket for every upload into a bucket without objects.
//
// The object keeps, in the xattrs set with its other metadata in one
// transaction, the upload ID and its parts' numbers and sizes
// (Object.Parts: S3's GET ?partNumber). A completion of an upload that is
// gone succeeds again when the object now at the key came from that
// upload with the same part numbers and ETags (a client retrying a
// completion whose answer it lost); otherwise ErrNoSuchUpload.
//
// An upload's own mutex serialises its part renames, completion, abort
// and part listing; DeleteBucket takes those of its bucket's uploads in
// ID order (lock order: see Locking).
//
// # Quotas
//
// Every bucket is its own XFS project: its directory carries a project ID
// (di_projid, with the inherit flag), and so does every inode below it,
// so the engine charges each block and inode to the bucket's dquot in the
// transaction that allocates or frees it. A new bucket gets one past the
// highest ID in use; at open, a bucket without one (made before quotas,
// or by the kernel) gets the next free ID for its whole tree. Staged
// writes, parts and uploads in progress live in .xfs3 but carry their
// bucket's ID, so they count too; a completed upload moves its parts'
// blocks into the object without changing the usage.
//
// SetBucketQuota sets hard and soft limits on bytes (kept in filesystem
// blocks, rounded up) and on objects (counted as inodes: objects, their
// prefix directories, uploads in progress and their parts); a soft limit
// may be passed for the grace period (SetQuotaGrace; 7 days unless set).
// A write that would pass a limit fails with ErrQuotaExceeded: a PUT of
// declared size before anything is written, others when the transaction
// that would pass it commits; either way nothing of it remains and the
// old object, if any, is untouched. Before failing, the engine waits once
// for deleted objects' space to be freed. BucketQuota and BucketQuotas
// report the exact usage from the dquots (after freeing what deleted
// objects still hold). The limits are real XFS project quotas: xfs_quota
// on a kernel with quota support reports and enforces them, and limits it
// sets are enforced here. A crash leaves them exact: the records change
// in the transactions that charge them, so a log replay, ours or a
// quota-enabled kernel's, brings back usage that matches the tree.
//
// # Listing cost
//
// XFS directories are in hash order, so ListObjects walks the bucket
// depth-first, reading each directory it enters once, decoding its names
// into components (one xattr read per hashed name), sorting them by
// component with "/" appended to directories (the directory "a" is
// visited where "a/" sorts: after "a.b", since '.' < '/'; an object beside
// its directory sorts as its own key, before it), and descending in
// order. Delimiter, prefix, marker and continuation semantics apply to
// the decoded keys, so the order is S3's byte order whatever the names. It
// looks up the directories Prefix names ("a/b/" in "a/b/c") by their
// entry names instead of reading their parents (a Prefix component such
// as ".." is looked up as ".xfs3.e...", inside the bucket, so no prefix
// reaches outside it), binary-searches past entries that sort before
// StartAfter, skips subtrees outside Prefix and subtrees already rolled
// into a common prefix, and stops at the first entry past MaxKeys. Memory: one sorted
// directory per level of the walk path (O(sum of those directories'
// sizes)), plus the page. Time per page: O(d log d) per directory entered
// (d its size), plus a lookup per directory entered and, per object
// returned, one read of its inode and attributes by the number its entry
// gave, no lookup (xfs.Volume.ReadEntryInodes, listBatch objects per
// call, only the ETag and storage class kept); a directory changed since
// it was read is looked into by name instead, object by object. With
// the delimiter "/" a common prefix costs one directory entry and its
// subtree is never read. Other delimiters read every key under Prefix up to
// the end of the page. A page takes no store lock (see Locking): writers
// never wait for a listing.
//
// Sorted directories of 512 entries or more are cached (listcache.go) while
// the directory's change count, generation and creation time are unchanged,
// up to 1 Mi entries in all (about 100 MiB at worst), least recently used
// evicted first. Paging through a quiet directory of a million keys
// therefore sorts it once (200,000 entries: 92 ms to read and sort, then
// nothing per page), not once per page; a directory that changes between
// pages is read and sorted again.
//
// # Locking
//
// There is no store-wide lock. Operations in different directories share
// nothing but the engine's per-AG and log locks; in one directory they
// meet at the engine's lock of that directory, held for one namespace
// change, and at the store's lock of that directory (dirlocks.go), held
// only by changes that take several engine calls on its names.
//
// References. Every inode the store uses after looking it up is held by
// an xfs.Handle taken under the directory's engine lock (Volume.OpenAt),
// never by a bare inode number: a removed directory or replaced object
// stays the same inode (its number is not reused) until the handle is
// closed, so lookups never reach an inode on its way out. The listing's
// objects are the one exception: it reads them by the numbers of the
// entries it read, through Volume.ReadEntryInodes, which reads them under
// the directory's engine lock shared and only while the directory is
// still at the version (generation, change count) the entries were read
// at, so each is linked by its name while it is read; a directory that
// changed is looked into by name. A path of
// directories (dirPath) holds every directory from the bucket down. The
// engine refuses to add a name to a directory that was removed (its
// Create, Mkdir and Rename give ErrNotFound), which a change takes as
// errRetry: it starts again from the bucket, at most maxAttempts times,
// and then finds the bucket or directory missing, or makes it again.
//
// Directory locks, store-level, one per directory inode, exclusive unless
// said otherwise:
//
//	operation                         holds
//	PUT, Complete: place              the leaf's directory, while it picks
//	                                  the leaf's name (entry or beside),
//	                                  checks the Precondition and renames
//	making a missing directory or     its parent, while it looks the name
//	  promoting an object to a prefix   up again and makes it
//	putFolder (empty marker)          the directory, while it checks it is
//	                                  not removed and sets the attribute
//	DELETE                            the leaf's directory, while it finds
//	                                  and unlinks the object
//	prune, per directory              its parent, then itself: rmdir and
//	                                  the move back from beside
//	DeleteBucket                      the bucket's directory
//	CreateMultipartUpload             the bucket's directory, shared
//	GET, HEAD: a missing leaf         the leaf's directory, shared, to
//	                                  look again
//
// Lock order: an upload's mutex, then directory locks, a parent before
// its child and at most those two, then the uploads index (upMu) and the
// other store mutexes, then the engine's locks (package xfs). No store
// lock is taken while an engine lock is held.
//
// Why it is safe:
//   - Every name of a bucket's directories is changed by the store only
//     under that directory's lock, so the steps that map one component
//     (promote: file to beside, then mkdir; prune: rmdir, then beside
//     back to the entry name; place's choice between entry and beside
//     name) never interleave with each other; each step is one engine
//     transaction, as before, so crashes leave the states the Keys
//     section describes.
//   - Directories that exist are looked up without a store lock: one
//     found is held; if a prune removes it meanwhile, a change into it
//     fails in the engine and starts again, a read finds it empty.
//   - prune checks a directory's marker attribute and emptiness under the
//     directory's own lock, which putFolder holds while setting a marker
//     and place while adding the object; the engine's Rmdir refuses a
//     directory that is not empty whatever the store holds.
//   - CreateBucket is one engine Mkdir. DeleteBucket holds the bucket's
//     lock from its emptiness check to its Rmdir; a name appears in the
//     bucket's directory only under that lock, so it stays empty. A PUT
//     holding the bucket fails to add to it once removed and starts again
//     to find ErrNoSuchBucket. An
//     upload is created under the bucket's lock shared, so DeleteBucket
//     sees either no bucket or the upload in the index.
//   - Readers (GET, HEAD, LIST, tagging, ObjectParts, preconditions) take
//     no lock on the path: every state between the steps of a change
//     reads as the same keys, an object found by name is held and read
//     whole even if replaced meanwhile, and a listing opens each
//     directory it enters by name and reads each object it reports
//     either by number in a directory unchanged since it was read (the
//     entry is the object, as a lookup would find it) or by its
//     component, as GET does, skipping what is gone since. Either way an
//     object is read whole from one committed version of its inode, or
//     not at all. The one state a lock-free read can miss, an object
//     moving back from beside a pruned directory between the lookups of
//     its two names, is looked up again under the directory's lock
//     shared.
//   - The listing cache (listcache.go) keys a sorted directory by inode
//     and validates it by change count, generation and creation time,
//     read from the held inode before and after the read, so a directory
//     changed or replaced meanwhile is read again, never served stale.
//
// # Example
//
//	// mkfs.Format("vol.xfs", mkfs.Options{Size: 1 << 30}) makes a volume.
//	s, err := store.Open("vol.xfs")
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	if err := s.CreateBucket("photos"); err != nil {
//		return err
//	}
//	body := strings.NewReader("hello")
//	_, err = s.PutObject("photos", "2024/a.txt", body, int64(body.Len()),
//		store.Meta{ContentType: "text/plain", User: map[string]string{"owner": "ann"}})
//	if err != nil {
//		return err
//	}
//	o, err := s.GetObject("photos", "2024/a.txt")
//	if err != nil {
//		return err
//	}
//	defer o.Close()
//	r, _ := o.Range(1, 3) // "ell"
//	io.Copy(os.Stdout, r)
//	page, err := s.ListObjects("photos", store.ListOptions{Delimiter: "/"})
//	// page.CommonPrefixes == []string{"2024/"}
//
// The store imports only the engine (xfs, and xfs/format for inode
// numbers); gc will join it.
package store
