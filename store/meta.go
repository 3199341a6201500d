package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Xattr names of object metadata (see the package doc).
const (
	xattrPrefix     = "user.xfs3."
	xattrMetaPrefix = "user.meta."
	xattrETag       = xattrPrefix + "etag"
	// xattrStorageClass is absent for STANDARD.
	xattrStorageClass = xattrPrefix + "storage-class"
	// xattrFolder marks a directory as a folder-marker object; its value
	// is the marker's Last-Modified time in RFC 3339 with nanoseconds.
	xattrFolder = xattrPrefix + "folder"
	// xattrTagging holds the tags as a URL query ("k1=v1&k2=v2", keys
	// sorted), readable in getfattr.
	xattrTagging = xattrPrefix + "tagging"
)

// Meta is the metadata stored with an object.
type Meta struct {
	ContentType        string
	ContentEncoding    string
	ContentDisposition string
	ContentLanguage    string
	CacheControl       string
	Expires            string
	// StorageClass is the S3 storage class the object was written with;
	// "" is STANDARD. Every class is stored the same way on the volume.
	StorageClass string
	// User holds x-amz-meta-* metadata by name without that prefix.
	// Names are stored lowercased.
	User map[string]string
	// Tags (x-amz-tagging on PUT), sorted by key.
	Tags []Tag
	// Checksums sent with the content (verified by the caller while
	// streaming, see PutObject); returned on request.
	Checksums Checksums
	// Lock is the version's object lock: on a write, the one it asks
	// for (else the bucket's default applies); in ObjectInfo, the
	// version's. Copies do not copy it.
	Lock ObjectLock
}

// attrField is a string field of Meta and the xattr that stores it.
type attrField struct {
	name string
	val  *string
}

// standard pairs each standard header with its xattr name.
func (m *Meta) standard() []attrField {
	return []attrField{
		{xattrPrefix + "content-type", &m.ContentType},
		{xattrPrefix + "content-encoding", &m.ContentEncoding},
		{xattrPrefix + "content-disposition", &m.ContentDisposition},
		{xattrPrefix + "content-language", &m.ContentLanguage},
		{xattrPrefix + "cache-control", &m.CacheControl},
		{xattrPrefix + "expires", &m.Expires},
		{xattrStorageClass, &m.StorageClass},
	}
}

// clone copies m, with user names lowercased and tags sorted by key.
func (m Meta) clone() Meta {
	c := m
	c.Tags = sortedTags(m.Tags)
	c.User = nil
	if len(m.User) > 0 {
		c.User = make(map[string]string, len(m.User))
		for k, v := range m.User {
			c.User[strings.ToLower(k)] = v
		}
	}
	return c
}

// check validates m against the rules in the package doc.
func (m *Meta) check() error {
	total := 0
	for k, v := range m.User {
		if k == "" || len(k) > maxMetaNameLen {
			return fmt.Errorf("user metadata name of %d bytes (1 to %d): %w", len(k), maxMetaNameLen, ErrInvalidMetadata)
		}
		for i := 0; i < len(k); i++ {
			if c := k[i]; c <= ' ' || c >= 0x7f {
				return fmt.Errorf("user metadata name %q: only printable ASCII without spaces: %w", k, ErrInvalidMetadata)
			}
		}
		total += len(k) + len(v)
	}
	if total > MaxUserMetaLen {
		return fmt.Errorf("%d bytes of user metadata (at most %d): %w", total, MaxUserMetaLen, ErrMetadataTooLarge)
	}
	if m.Lock.Mode != "" && (m.Lock.Until.IsZero() || CheckRetention(m.Lock.Retention, time.Time{}) != nil) {
		return fmt.Errorf("retention %q until %v: %w", m.Lock.Mode, m.Lock.Until, ErrInvalidRetention)
	}
	return checkTags(m.Tags)
}

// xattrs lists the attributes that store m and the ETag.
func (m *Meta) xattrs(etag string) map[string]string {
	out := m.metaXattrs()
	out[xattrETag] = etag
	return out
}

// metaXattrs lists the attributes that store m: standard headers, user
// metadata, tags and checksums, leaving out empty ones.
func (m *Meta) metaXattrs() map[string]string {
	out := map[string]string{}
	for _, s := range m.standard() {
		if *s.val != "" {
			out[s.name] = *s.val
		}
	}
	for k, v := range m.User {
		out[xattrMetaPrefix+k] = v
	}
	if len(m.Tags) > 0 {
		out[xattrTagging] = encodeTags(m.Tags)
	}
	for _, c := range m.Checksums.named() {
		if *c.val != "" {
			out[c.name] = *c.val
		}
	}
	m.Lock.putXattrs(out)
	return out
}

// setXattrs writes attrs onto ino in one engine transaction.
func setXattrs(v *xfs.Volume, ino format.Ino, attrs map[string]string) error {
	if err := v.Xattrs().SetMany(ino, xattrList(attrs)); err != nil {
		return fmt.Errorf("set metadata xattrs: %w", err)
	}
	return nil
}

// xattrList is attrs (full names to values) in name order, for the engine.
func xattrList(attrs map[string]string) []xfs.Xattr {
	list := make([]xfs.Xattr, 0, len(attrs))
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		list = append(list, xattrOf(name, attrs[name]))
	}
	return list
}

// xattrOf is the attribute of full name ("user.x") and value.
func xattrOf(name, value string) xfs.Xattr {
	ns, short, _ := strings.Cut(name, ".")
	return xfs.Xattr{Namespace: ns, Name: short, Value: []byte(value)}
}

// clearObjectXattrs removes every object attribute from ino (all but a
// hashed entry's name).
func clearObjectXattrs(v *xfs.Volume, ino format.Ino) error {
	list, err := v.Xattrs().List(ino)
	if err != nil {
		return err
	}
	for _, x := range list {
		full := x.FullName()
		if full == xattrName {
			continue // the name of the inode's directory entry, not metadata
		}
		if strings.HasPrefix(full, xattrPrefix) || strings.HasPrefix(full, xattrMetaPrefix) {
			if err := v.Xattrs().Remove(ino, full); err != nil && !errors.Is(err, xfs.ErrNoData) {
				return err
			}
		}
	}
	return nil
}

// readMeta decodes the store attributes of ino: metadata, ETag and, for
// folder markers, the marker time (ok reports the folder attribute).
func readMeta(v *xfs.Volume, ino format.Ino) (m Meta, etag string, folder time.Time, isFolder bool, err error) {
	list, err := v.Xattrs().List(ino)
	if err != nil {
		return Meta{}, "", time.Time{}, false, err
	}
	byName := make(map[string]string, len(list))
	for _, x := range list {
		byName[x.FullName()] = string(x.Value)
	}
	for _, s := range m.standard() {
		*s.val = byName[s.name]
	}
	for _, c := range m.Checksums.named() {
		*c.val = byName[c.name]
	}
	if enc, ok := byName[xattrTagging]; ok {
		// A value set by other tools that does not parse reads as no
		// tags rather than making the object unreadable.
		m.Tags, _ = decodeTags(enc)
	}
	for k, val := range byName {
		if name, ok := strings.CutPrefix(k, xattrMetaPrefix); ok {
			if m.User == nil {
				m.User = map[string]string{}
			}
			m.User[name] = val
		}
	}
	m.Lock = readLock(byName)
	if t, ok := byName[xattrFolder]; ok {
		isFolder = true
		folder, _ = time.Parse(time.RFC3339Nano, t)
	}
	return m, byName[xattrETag], folder, isFolder, nil
}

// Equal reports whether two Metas hold the same values.
func (m Meta) Equal(o Meta) bool {
	return m.ContentType == o.ContentType && m.ContentEncoding == o.ContentEncoding &&
		m.ContentDisposition == o.ContentDisposition && m.ContentLanguage == o.ContentLanguage &&
		m.CacheControl == o.CacheControl && m.Expires == o.Expires && m.StorageClass == o.StorageClass && maps.Equal(m.User, o.User) &&
		slices.Equal(m.Tags, o.Tags) && m.Checksums == o.Checksums && m.Lock.LegalHold == o.Lock.LegalHold &&
		m.Lock.Mode == o.Lock.Mode && m.Lock.Until.Equal(o.Lock.Until)
}
