package format

// On-disk bits that only a formatter needs.
const (
	// SbVersionSector (XFS_SB_VERSION_SECTORBIT) is set in sb_versionnum
	// when the sector size is larger than 512 bytes.
	SbVersionSector = 0x0800

	// DiflagNewRtBm (XFS_DIFLAG_NEWRTBM) marks the realtime bitmap inode
	// whose di_atime holds the allocator's rotor rather than a time.
	DiflagNewRtBm = 0x0004
)
