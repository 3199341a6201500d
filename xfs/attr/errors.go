package attr

import "errors"

// Error kinds returned by this package; test them with errors.Is. The
// engine maps them onto its own kinds (ENODATA, EEXIST, ...). Corruption
// is reported as *format.CorruptError (errors.Is format.ErrCorrupt), and a
// full volume as whatever the Fork's Alloc returned, wrapped.
var (
	// ErrNoData: the attribute does not exist (ENOATTR/ENODATA), also for
	// Set with Replace.
	ErrNoData = errors.New("no such attribute")
	// ErrExist: Set with Create found the attribute (EEXIST).
	ErrExist = errors.New("attribute exists")
	// ErrNameTooLong: the name is longer than MaxNameLen bytes (ERANGE in
	// the Linux xattr calls).
	ErrNameTooLong = errors.New("attribute name too long")
	// ErrValueTooLarge: the value is longer than format.MaxAttrValueLen
	// (E2BIG).
	ErrValueTooLarge = errors.New("attribute value too large")
	// ErrInvalid: an empty name, a name holding a NUL byte, an unknown
	// namespace or contradicting flags (EINVAL).
	ErrInvalid = errors.New("invalid attribute argument")
)
