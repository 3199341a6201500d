package format

// Unit types. Conversions between them go through Geometry so that the
// AG-relative and filesystem-wide numbering can never be mixed up silently.
type (
	// Ino is an absolute inode number: agno | agbno | slot packed by
	// agblklog and inopblog.
	Ino uint64
	// AgIno is an inode number relative to its AG.
	AgIno uint32
	// AgNumber is the index of an allocation group.
	AgNumber uint32
	// AgBlock is a block number relative to the start of its AG.
	AgBlock uint32
	// FsBlock is a filesystem block number (agno << agblklog | agbno).
	FsBlock uint64
	// Daddr is a disk address in 512-byte basic blocks.
	Daddr int64
	// FileOff is a block offset inside a file or fork.
	FileOff uint64
	// LSN is a log sequence number: cycle << 32 | block in the log.
	LSN uint64
)

const (
	// NullAgBlock marks an absent AG block pointer (btree siblings, roots).
	NullAgBlock AgBlock = 0xFFFFFFFF
	// NullAgIno marks the end of an unlinked list or an absent AG inode.
	NullAgIno AgIno = 0xFFFFFFFF
	// NullFsBlock marks an absent long-form btree sibling.
	NullFsBlock FsBlock = 0xFFFFFFFFFFFFFFFF
	// NullIno marks an absent inode in the superblock (0 is accepted too).
	NullIno Ino = 0xFFFFFFFFFFFFFFFF
	// BBShift converts between bytes and basic blocks.
	BBShift = 9
	// BBSize is the size of a basic block.
	BBSize = 1 << BBShift
)
