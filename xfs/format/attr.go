package format

// Attribute namespaces and entry flags.
const (
	AttrLocal      = 0x01
	AttrRoot       = 0x02 // trusted.*
	AttrSecure     = 0x04 // security.*
	AttrParent     = 0x08 // parent pointers (not used by this engine)
	AttrIncomplete = 0x80
	AttrNSMask     = AttrRoot | AttrSecure | AttrParent
	// AttrOnDiskMask holds every flag a leaf entry may carry.
	AttrOnDiskMask = AttrLocal | AttrNSMask | AttrIncomplete

	Attr3LeafHdrSize = 80
	AttrSFHdrSize    = 4
	// MaxAttrValueLen is XATTR_SIZE_MAX.
	MaxAttrValueLen = 65536
)

// NamespaceName names a namespace flag set.
func NamespaceName(flags uint8) string {
	switch {
	case flags&AttrRoot != 0:
		return "trusted"
	case flags&AttrSecure != 0:
		return "security"
	case flags&AttrParent != 0:
		return "parent"
	}
	return "user"
}
