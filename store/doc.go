// Package store maps S3 buckets and objects onto the engine (package xfs),
// so that a kernel mount of the volume shows the same tree as plain files:
//
//	/                      volume root
//	├── .xfs3/             system directory (never a bucket: starts with '.')
//	│   ├── tmp/<random>   staged PUTs, parts, completions and new upload
//	│   │                  directories, renamed into place when complete;
//	│   │                  emptied on open
//	│   └── uploads/<id>/  a multipart upload in progress (survives restarts)
//	│       ├── 00001      part 1
//	│       └── 00007      part 7
//	└── photos/            bucket "photos"
//	    ├── a.jpg          key "a.jpg"
//	    └── 2024/          key prefix "2024/" (a folder marker if it has
//	        └── b.jpg      user.xfs3.folder), key "2024/b.jpg"
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
// A key "a/b/c" is the directory path "a/b" and the file "c" in the
// bucket's directory. Rules:
//   - 1 to 1024 bytes (longer: ErrKeyTooLong; empty: ErrInvalidKey) of
//     valid UTF-8 without NUL (ErrInvalidKey);
//   - no empty component ("/a", "a//b"), no "." or ".." component
//     (ErrInvalidKey); no component over 255 bytes (ErrKeyTooLong);
//   - a key cannot be an object and a prefix at once: putting "a" while
//     "a/b" exists, or "a/b" while the object "a" exists, gives
//     ErrKeyConflict;
//   - a key ending in "/" ("photos/") is a folder marker: its directory,
//     made if missing, with the attribute user.xfs3.folder (value: the
//     marker's Last-Modified, RFC 3339). It has no content (a body gives
//     ErrInvalidKey), lists as an object of size 0 and keeps its directory
//     when the keys below it are deleted. It may coexist with keys below it.
//
// Deleting an object removes every directory above it left empty, up to
// the bucket, stopping at folder markers. Deleting a missing key succeeds.
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
// PutObject creates .xfs3/tmp/<random>, preallocates the declared size in
// one extent when it is known and over 1 MiB, streams the body in 1 MiB
// chunks (memory stays flat) computing the MD5 on the way, sets the xattrs
// in one transaction, and only then takes
// the namespace lock, makes missing parent directories and renames the file
// over the key in one engine transaction: readers see the old object or
// the new one, never a partial one. A failure removes the staging file and
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
// Conditional writes: PutObjectIf and CompleteMultipartUploadWith (CompleteOptions.If) take a
// Precondition (IfNoneMatch: no object has the key; IfMatch: the object
// has that ETag) checked inside place, under the namespace lock, just
// before the rename: no other write can place the key in between, so of
// racing IfNoneMatch writers exactly one succeeds and the others get
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
// expects (ErrBadDigest), and that the key can be placed, then joins the parts in a staging file. While the
// staging size is a multiple of the block size, a part is moved rather
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
// Lock order: an upload's own mutex (serialising its part renames,
// completion, abort and part listing; DeleteBucket takes those of its
// bucket's uploads in ID order), then the namespace lock, then the
// index and reader-count mutexes, then the engine's locks.
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
// depth-first, reading each directory it enters once, sorting its names
// with "/" appended to directories (the directory "a" is visited where
// "a/" sorts: after "a.b", since '.' < '/'), and descending in order. It
// looks up the directories Prefix names ("a/b/" in "a/b/c") instead of
// reading their parents (a Prefix component no key can have, such as ".."
// or "", matches nothing and is never looked up, so no prefix reaches
// outside the bucket), binary-searches past entries that sort before
// StartAfter, skips subtrees outside Prefix and subtrees already rolled
// into a common prefix, and stops at the first entry past MaxKeys. Memory: one sorted
// directory per level of the walk path (O(sum of those directories'
// sizes)), plus the page. Time per page: O(d log d) per directory entered
// (d its size), plus one Stat and one xattr read per object returned; with
// the delimiter "/" a common prefix costs one directory entry and its
// subtree is never read. Other delimiters read every key under Prefix up to
// the end of the page. A page holds the namespace lock shared, so writers
// wait for at most one page.
//
// Sorted directories of 512 entries or more are cached (listcache.go) while
// the directory's change count, generation and creation time are unchanged,
// up to 1 Mi entries in all (about 100 MiB at worst), least recently used
// evicted first. Paging through a quiet directory of a million keys
// therefore sorts it once (200,000 entries: 92 ms to read and sort, then
// nothing per page), not once per page; a directory that changes between
// pages is read and sorted again.
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
