package format

// Magics of blocks built on xfs_da3_blkinfo (directory leaves, da-btree
// nodes and attribute leaves), stored as be16 at offset 8.
const (
	Dir3Leaf1Magic = 0x3DF1
	Dir3LeafNMagic = 0x3DFF
	Da3NodeMagic   = 0x3EBE
	Attr3LeafMagic = 0x3BEE

	DaBlkinfoSize   = 56
	DaBlkinfoCRCOff = 12
	Da3NodeHdrSize  = 64
)
