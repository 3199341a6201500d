// Package format owns every on-disk byte of an XFS v5 filesystem: the
// superblock, AG headers, B+tree blocks, inodes and their forks,
// directories, extended attributes, symlinks and log records.
//
// It does no I/O and takes no locks. Every decoder checks lengths before it
// reads and reports a *CorruptError naming the structure and the block, so it
// can be fuzzed; every v5 structure carries a CRC32c that Verify* checks and
// Encode/SetCRC recompute.
//
//	volume: | AG 0                                   | AG 1 ...
//	        | sb | agf | agi | agfl | btree roots ... | sb | agf | ...
//	         ^ sector 0..3 of AG block 0
//
// Everything is big-endian except the CRC fields, which are little-endian,
// and the log's item formats, which are host-endian (little-endian on the
// machines the kernel writes them on).
package format
