package lifecycle

import "encoding/xml"

// The document as it travels. Parse decodes into these types and Encode
// marshals from them, so both read one schema. Elements S3 allows once
// are slices, so that a repeated one is caught; Other catches the
// elements S3's schema does not have. Fields are in the order Encode
// writes them.

// xmlns is S3's namespace, which Encode writes.
const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

type xmlConfig struct {
	XMLName xml.Name  `xml:"LifecycleConfiguration"`
	Xmlns   string    `xml:"xmlns,attr,omitempty"`
	Rules   []xmlRule `xml:"Rule"`
	Other   []xmlAny  `xml:",any"`
}

type xmlRule struct {
	ID                             []string
	Filter                         []xmlFilter
	Status                         []string
	Expiration                     []xmlExpiration
	NoncurrentVersionExpiration    []xmlNoncurrent
	AbortIncompleteMultipartUpload []xmlAbort
	Prefix                         []string // legacy, instead of Filter; never written
	Transition                     []xmlAny // refused
	NoncurrentVersionTransition    []xmlAny // refused
	Other                          []xmlAny `xml:",any"`
}

// xmlPredicates are what a Filter, or its And, may hold.
type xmlPredicates struct {
	Prefix                []string
	Tag                   []xmlTag
	ObjectSizeGreaterThan []string
	ObjectSizeLessThan    []string
}

type xmlFilter struct {
	xmlPredicates
	And   []xmlAnd
	Other []xmlAny `xml:",any"`
}

type xmlAnd struct {
	xmlPredicates
	Other []xmlAny `xml:",any"`
}

type xmlTag struct {
	Key   []string
	Value []string
	Other []xmlAny `xml:",any"`
}

type xmlExpiration struct {
	Days                      []string
	Date                      []string
	ExpiredObjectDeleteMarker []string
	Other                     []xmlAny `xml:",any"`
}

type xmlNoncurrent struct {
	NoncurrentDays          []string
	NewerNoncurrentVersions []string
	Other                   []xmlAny `xml:",any"`
}

type xmlAbort struct {
	DaysAfterInitiation []string
	Other               []xmlAny `xml:",any"`
}

// xmlAny is any element, its content skipped.
type xmlAny struct{ XMLName xml.Name }
