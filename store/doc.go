// Package store will map S3 buckets and objects onto the engine: buckets as
// directories under the volume root, keys as paths, metadata as user.*
// xattrs, staged writes renamed into place, multipart uploads, listings in
// byte-wise key order, and bucket quotas as XFS project quotas.
//
// It arrives with the S3 front end issue; it may import xfs and gc only.
package store
