package format

import "math/bits"

// DaHashName is xfs_da_hashname: the name hash that orders directory
// leaves and attribute leaves. It folds 4 bytes at a time with a rotate.
func DaHashName(name []byte) uint32 {
	var h uint32
	for len(name) >= 4 {
		h = uint32(name[0])<<21 ^ uint32(name[1])<<14 ^ uint32(name[2])<<7 ^ uint32(name[3]) ^ bits.RotateLeft32(h, 7*4)
		name = name[4:]
	}
	switch len(name) {
	case 3:
		return uint32(name[0])<<14 ^ uint32(name[1])<<7 ^ uint32(name[2]) ^ bits.RotateLeft32(h, 7*3)
	case 2:
		return uint32(name[0])<<7 ^ uint32(name[1]) ^ bits.RotateLeft32(h, 7*2)
	case 1:
		return uint32(name[0]) ^ bits.RotateLeft32(h, 7)
	}
	return h
}
