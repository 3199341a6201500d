package format

import (
	"encoding/binary"
	"math/bits"
)

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

// Attr is one decoded attribute. Remote values are located by ValueBlk and
// read separately.
type Attr struct {
	Flags    uint8 // namespace bits (AttrRoot, AttrSecure) and AttrLocal
	Name     []byte
	Value    []byte // local values
	Remote   bool
	ValueBlk uint32 // attr-fork block of a remote value
	ValueLen uint32
}

// Namespace names the attribute's namespace as getfattr shows it.
func (a *Attr) Namespace() string { return NamespaceName(a.Flags) }

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

// DecodeSFAttrs parses a short-form attribute fork.
func DecodeSFAttrs(fork []byte) ([]Attr, error) {
	const what = "short-form attributes"
	if len(fork) < AttrSFHdrSize {
		return nil, Corrupt(what, "", "fork of %d bytes too small", len(fork))
	}
	tot, count := int(binary.BigEndian.Uint16(fork)), int(fork[2])
	if tot < AttrSFHdrSize || tot > len(fork) {
		return nil, Corrupt(what, "", "total size %d outside the %d-byte fork", tot, len(fork))
	}
	var out []Attr
	p := AttrSFHdrSize
	for i := 0; i < count; i++ {
		if p+3 > tot {
			return nil, Corrupt(what, "", "entry %d starts past the end", i)
		}
		nl, vl, fl := int(fork[p]), int(fork[p+1]), fork[p+2]
		end := p + 3 + nl + vl
		if nl == 0 || end > tot {
			return nil, Corrupt(what, "", "entry %d overruns the fork", i)
		}
		if !validAttrFlags(fl, AttrNSMask) {
			return nil, Corrupt(what, "", "entry %d has flags %#x", i, fl)
		}
		out = append(out, Attr{Flags: fl, Name: fork[p+3 : p+3+nl], Value: fork[p+3+nl : end], ValueLen: uint32(vl)})
		p = end
	}
	if p != tot {
		return nil, Corrupt(what, "", "%d entries end at %d, header says %d", count, p, tot)
	}
	return out, nil
}

// AttrLeafEntry is one slot of an attribute leaf's entry table.
type AttrLeafEntry struct {
	HashVal uint32
	NameIdx uint16
	Flags   uint8
}

// DecodeAttrLeaf parses a verified attr3 leaf block into its attributes.
// Incomplete entries (a half-done set) are skipped, as the kernel does.
func DecodeAttrLeaf(b []byte) ([]Attr, []AttrLeafEntry, error) {
	const what = "attr3 leaf block"
	be := binary.BigEndian
	if len(b) < Attr3LeafHdrSize {
		return nil, nil, Corrupt(what, "", "%d bytes is too short", len(b))
	}
	count := int(be.Uint16(b[56:]))
	firstUsed := int(be.Uint16(b[60:]))
	if firstUsed == 0 && len(b) == 65536 {
		firstUsed = 65536 // XFS_ATTR3_LEAF_NULLOFF stands for a 64 KiB block's end
	}
	if Attr3LeafHdrSize+count*8 > len(b) || (count > 0 && firstUsed < Attr3LeafHdrSize+count*8) || firstUsed > len(b) {
		return nil, nil, Corrupt(what, "", "%d entries (first used byte %d) do not fit", count, firstUsed)
	}
	var attrs []Attr
	ents := make([]AttrLeafEntry, count)
	for i := range ents {
		off := Attr3LeafHdrSize + 8*i
		e := AttrLeafEntry{be.Uint32(b[off:]), be.Uint16(b[off+4:]), b[off+6]}
		ents[i] = e
		if !validAttrFlags(e.Flags, AttrOnDiskMask) {
			return nil, nil, Corrupt(what, "", "entry %d has flags %#x", i, e.Flags)
		}
		if i > 0 && e.HashVal < ents[i-1].HashVal {
			return nil, nil, Corrupt(what, "", "hash order broken at entry %d", i)
		}
		idx := int(e.NameIdx)
		if idx < firstUsed || idx >= len(b) {
			return nil, nil, Corrupt(what, "", "entry %d name index %d out of range", i, idx)
		}
		var a Attr
		a.Flags = e.Flags
		if e.Flags&AttrLocal != 0 {
			if idx+3 > len(b) {
				return nil, nil, Corrupt(what, "", "local entry %d overruns the block", i)
			}
			vl, nl := int(be.Uint16(b[idx:])), int(b[idx+2])
			if nl == 0 || idx+3+nl+vl > len(b) {
				return nil, nil, Corrupt(what, "", "local entry %d overruns the block", i)
			}
			a.Name, a.Value, a.ValueLen = b[idx+3:idx+3+nl], b[idx+3+nl:idx+3+nl+vl], uint32(vl)
		} else {
			if idx+9 > len(b) {
				return nil, nil, Corrupt(what, "", "remote entry %d overruns the block", i)
			}
			a.Remote = true
			a.ValueBlk, a.ValueLen = be.Uint32(b[idx:]), be.Uint32(b[idx+4:])
			nl := int(b[idx+8])
			if nl == 0 || idx+9+nl > len(b) || a.ValueLen > MaxAttrValueLen {
				return nil, nil, Corrupt(what, "", "remote entry %d is malformed", i)
			}
			a.Name = b[idx+9 : idx+9+nl]
		}
		if e.Flags&AttrIncomplete != 0 {
			continue
		}
		attrs = append(attrs, a)
	}
	return attrs, ents, nil
}

// validAttrFlags reports whether an entry's flags use only the bits in
// allowed and name at most one namespace, as the kernel's verifiers
// require (an entry in two namespaces would be listed under one name and
// not found under it).
func validAttrFlags(flags, allowed uint8) bool {
	return flags&^allowed == 0 && bits.OnesCount8(flags&AttrNSMask) <= 1
}
