package lifecycle

import "time"

// Config is a bucket's lifecycle configuration.
type Config struct{ Rules []Rule }

// Rule is one rule: which objects (Filter) and what happens to them.
// Parse leaves at least one action set.
type Rule struct {
	ID                    string
	Enabled               bool // Status Enabled (false: Disabled)
	Filter                Filter
	Expiration            *Expiration           // nil: none
	NoncurrentExpiration  *NoncurrentExpiration // nil: none
	AbortIncompleteUpload int                   // DaysAfterInitiation; 0: none
}

// Filter selects objects: all of its parts must match (S3's Filter with And,
// or a single Prefix/Tag/size; the legacy rule-level <Prefix> too).
type Filter struct {
	Prefix          string
	Tags            []Tag
	SizeGreaterThan int64 // 0: no bound (S3: ObjectSizeGreaterThan)
	SizeLessThan    int64 // 0: no bound
}

// Tag is an object tag a filter asks for.
type Tag struct{ Key, Value string }

// Expiration is what happens to current versions: Days or Date, or
// ExpiredObjectDeleteMarker alone.
type Expiration struct {
	Days                      int       // 0: none
	Date                      time.Time // zero: none; midnight UTC
	ExpiredObjectDeleteMarker bool
}

// NoncurrentExpiration is what happens to noncurrent versions.
type NoncurrentExpiration struct {
	NoncurrentDays          int // 0: no age condition (NewerNoncurrentVersions alone)
	NewerNoncurrentVersions int // 0: none
}

// Error is a refusal with S3's code and message (MalformedXML,
// InvalidArgument, InvalidRequest, NotImplemented).
type Error struct{ Code, Message string }

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, message string) *Error { return &Error{Code: code, Message: message} }

// malformed is S3's answer to a document its schema refuses; why says
// which rule was broken (S3 sends its generic message).
func malformed(why string) *Error {
	return errorf("MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema ("+why+").")
}
