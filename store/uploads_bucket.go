package store

import (
	"slices"
	"strings"
)

// lockBucketUploads locks every upload in progress into bucket, in ID
// order, and returns them; uploads that end while it waits are left out.
// Only DeleteBucket holds several upload locks at once (the ID order keeps
// two of them from deadlocking); like every holder of an upload's lock it
// takes them before any directory lock.
func (s Uploads) lockBucketUploads(bucket string) []*upload {
	s.upMu.Lock()
	var list []*upload
	for _, u := range s.uploads {
		if u.info.Bucket == bucket {
			list = append(list, u)
		}
	}
	s.upMu.Unlock()
	slices.SortFunc(list, func(a, b *upload) int { return strings.Compare(a.info.UploadID, b.info.UploadID) })
	locked := list[:0]
	for _, u := range list {
		u.mu.Lock()
		if u.gone {
			u.mu.Unlock()
			continue
		}
		locked = append(locked, u)
	}
	return locked
}

// unlockUploads releases what lockBucketUploads locked.
func unlockUploads(list []*upload) {
	for _, u := range list {
		u.mu.Unlock()
	}
}
