package store

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// pageSize clamps a requested page size to 1..defaultMaxList.
func pageSize(n int) int {
	if n <= 0 || n > defaultMaxList {
		return defaultMaxList
	}
	return n
}

// ListParts lists the parts of an upload in part-number order, a page at
// a time. Cost: one directory read and, per part returned, a Stat and its
// xattrs.
func (s Uploads) ListParts(bucket, key, uploadID string, opt ListPartsOptions) (ListPartsResult, error) {
	u, err := s.findUpload(bucket, key, uploadID)
	if err != nil {
		return ListPartsResult{}, err
	}
	defer u.mu.Unlock()
	ents, err := s.v.Names().ReadDir(u.dir)
	if err != nil {
		return ListPartsResult{}, err
	}
	var numbers []int
	for _, e := range ents {
		if n, ok := parsePartName(e.Name); ok && n > opt.PartNumberMarker {
			numbers = append(numbers, n)
		}
	}
	slices.Sort(numbers)
	res := ListPartsResult{Upload: u.info}
	res.Upload.Meta = u.info.Meta.clone() // the index's copy stays private
	if limit := pageSize(opt.MaxParts); len(numbers) > limit {
		numbers, res.IsTruncated = numbers[:limit], true
	}
	for _, n := range numbers {
		p, err := s.partInfo(u, n)
		if err != nil {
			return ListPartsResult{}, err
		}
		res.Parts = append(res.Parts, p)
		res.NextPartNumberMarker = n
	}
	return res, nil
}

// partInfo describes part n of u from its file; the caller holds u.mu.
func (s Uploads) partInfo(u *upload, n int) (PartInfo, error) {
	ino, err := s.v.Names().Lookup(u.dir, partName(n))
	if err != nil {
		return PartInfo{}, err
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return PartInfo{}, err
	}
	list, err := s.v.Xattrs().List(ino)
	if err != nil {
		return PartInfo{}, err
	}
	byName := make(map[string]string, len(list))
	for _, x := range list {
		byName[x.FullName()] = string(x.Value)
	}
	p := PartInfo{PartNumber: n, Size: st.Size, ETag: byName[xattrETag], LastModified: st.Mtime}
	if size, err := strconv.ParseInt(byName[xattrPartSize], 10, 64); err == nil {
		p.Size = size
	}
	for _, c := range p.Checksums.named() {
		*c.val = byName[c.name]
	}
	return p, nil
}

// List lists the uploads in progress in a bucket, sorted
// by key, then initiation time (then ID), with S3's Prefix, Delimiter
// (keys with Delimiter after Prefix roll up into one common prefix,
// counted once towards MaxUploads and returned only if it sorts after
// KeyMarker) and markers: with KeyMarker alone, uploads of keys after it;
// with UploadIDMarker too, also the uploads of KeyMarker that follow that
// upload. Cost: the in-memory index of uploads is filtered and sorted, no
// disk access: O(u log u) for u uploads in the bucket.
func (s Uploads) List(bucket string, opt ListUploadsOptions) (ListUploadsResult, error) {
	if _, err := s.bucket(bucket); err != nil {
		return ListUploadsResult{}, err
	}
	s.upMu.Lock()
	var all []UploadInfo
	for _, u := range s.uploads {
		if u.info.Bucket == bucket && strings.HasPrefix(u.info.Key, opt.Prefix) {
			all = append(all, u.info)
		}
	}
	s.upMu.Unlock()
	slices.SortFunc(all, compareUploads)
	start := 0
	if opt.KeyMarker != "" || opt.UploadIDMarker != "" {
		start = len(all)
		for i, u := range all {
			if u.Key > opt.KeyMarker {
				start = i
				break
			}
		}
		if opt.UploadIDMarker != "" {
			for i, u := range all {
				if u.Key == opt.KeyMarker && u.UploadID == opt.UploadIDMarker {
					start = i + 1
					break
				}
			}
		}
	}
	var res ListUploadsResult
	limit := pageSize(opt.MaxUploads)
	count := 0
	for _, u := range all[start:] {
		prefix := ""
		if opt.Delimiter != "" {
			if i := strings.Index(u.Key[len(opt.Prefix):], opt.Delimiter); i >= 0 {
				prefix = u.Key[:len(opt.Prefix)+i+len(opt.Delimiter)]
			}
		}
		if prefix != "" && (prefix <= opt.KeyMarker || (len(res.CommonPrefixes) > 0 && res.CommonPrefixes[len(res.CommonPrefixes)-1] == prefix)) {
			continue
		}
		if count == limit {
			res.IsTruncated = true
			break
		}
		count++
		if prefix != "" {
			res.CommonPrefixes = append(res.CommonPrefixes, prefix)
			res.NextKeyMarker, res.NextUploadIDMarker = prefix, ""
			continue
		}
		u.Meta = u.Meta.clone()
		res.Uploads = append(res.Uploads, u)
		res.NextKeyMarker, res.NextUploadIDMarker = u.Key, u.UploadID
	}
	if !res.IsTruncated {
		res.NextKeyMarker, res.NextUploadIDMarker = "", ""
	}
	return res, nil
}

// compareUploads orders uploads by key, initiation time, then ID.
func compareUploads(a, b UploadInfo) int {
	return cmp.Or(strings.Compare(a.Key, b.Key), a.Initiated.Compare(b.Initiated), strings.Compare(a.UploadID, b.UploadID))
}
