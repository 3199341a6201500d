package store

import (
	"io"
	"time"
)

// Multipart limits, as S3 sets them.
const (
	MinPartSize   = 5 << 20 // every part but the last
	MaxPartSize   = 5 << 30
	MaxPartNumber = 10000
	// MaxObjectSize bounds PutObject and a completed upload.
	MaxObjectSize = 5 << 40
)

// UploadInfo describes a multipart upload in progress.
type UploadInfo struct {
	Bucket    string
	Key       string
	UploadID  string
	Initiated time.Time
	Meta      Meta // what CreateMultipartUpload was given; the object gets it
}

// PartInfo describes one uploaded part.
type PartInfo struct {
	PartNumber   int
	Size         int64
	ETag         string // MD5 of the part, lowercase hex, unquoted
	LastModified time.Time
	Checksums    Checksums // those sent with the part
}

// CompletePart names a part in CompleteMultipartUpload, as the client lists it.
type CompletePart struct {
	PartNumber int
	ETag       string // quoted or not
}

// ListPartsOptions selects a page of ListParts.
type ListPartsOptions struct {
	PartNumberMarker int // only parts after this number
	MaxParts         int // 0: 1000
}

// ListPartsResult is one page of parts, in part-number order.
type ListPartsResult struct {
	Upload               UploadInfo
	Parts                []PartInfo
	IsTruncated          bool
	NextPartNumberMarker int
}

// ListUploadsOptions selects a page of ListMultipartUploads.
type ListUploadsOptions struct {
	Prefix         string
	Delimiter      string
	KeyMarker      string
	UploadIDMarker string
	MaxUploads     int // 0: 1000
}

// ListUploadsResult is one page of uploads in (key, initiation) order.
type ListUploadsResult struct {
	Uploads            []UploadInfo
	CommonPrefixes     []string
	IsTruncated        bool
	NextKeyMarker      string
	NextUploadIDMarker string
}

// CreateMultipartUpload starts an upload of key; the object appears only
// when CompleteMultipartUpload succeeds.
func (s *Store) CreateMultipartUpload(bucket, key string, meta Meta) (UploadInfo, error) {
	return UploadInfo{}, ErrNotImplemented
}

// UploadPart stores part number part (1..MaxPartNumber) of an upload from the
// next size bytes of r, replacing an earlier part of that number.
func (s *Store) UploadPart(bucket, key, uploadID string, part int, r io.Reader, size int64, sums Checksums) (PartInfo, error) {
	return PartInfo{}, ErrNotImplemented
}

// CompleteMultipartUpload joins the listed parts into the object key,
// replacing any object of that name atomically. The ETag is the MD5 of the
// parts' binary MD5s, in hex, followed by "-" and the number of parts.
func (s *Store) CompleteMultipartUpload(bucket, key, uploadID string, parts []CompletePart) (ObjectInfo, error) {
	return ObjectInfo{}, ErrNotImplemented
}

// AbortMultipartUpload discards an upload and its parts.
func (s *Store) AbortMultipartUpload(bucket, key, uploadID string) error {
	return ErrNotImplemented
}

// ListParts lists the parts of an upload.
func (s *Store) ListParts(bucket, key, uploadID string, opt ListPartsOptions) (ListPartsResult, error) {
	return ListPartsResult{}, ErrNotImplemented
}

// ListMultipartUploads lists the uploads in progress in a bucket.
func (s *Store) ListMultipartUploads(bucket string, opt ListUploadsOptions) (ListUploadsResult, error) {
	return ListUploadsResult{}, ErrNotImplemented
}
