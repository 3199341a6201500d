// Package mkfs creates XFS v5 filesystems: the same filesystem that
// xfsprogs 6.1 mkfs.xfs makes on the same device with the same options,
// byte for byte in every superblock, AG header, btree root and inode
// except the UUID, the checksums over it and the creation times.
// Options.NoReflink gives what "mkfs.xfs -m reflink=0" makes.
//
// Features: crc (v5), finobt, inobtcount, reflink (unless NoReflink),
// ftype, bigtime, sparse inodes, lazy superblock counters, attr2, 32-bit
// project IDs, a version 2 internal log; no rmapbt, realtime device or
// quota.
//
// Geometry (plan, pure and testable against "mkfs.xfs -N"):
//
//   - AG count and size: 4 AGs from 128 MiB to 4 TiB, AGs of the
//     maximum size (1 TiB) above, fewer and smaller below; a last AG
//     under 16 MiB is dropped. Options.AgCount overrides the count.
//   - Log size: dblocks/2048 but at least 64 MiB, the computed minimum
//     for filesystems under 300 MiB, at most 2 GiB - 10 MiB and one AG.
//     The minimum comes from the worst-case transaction reservation,
//     reproduced in logsize.go, since the kernel refuses smaller logs;
//     reflink makes it larger (1368 instead of 857 4 KiB blocks at
//     64 MiB).
//   - The log sits in AG agcount/2 right after the btree roots.
//
// Layout of every AG (4 KiB blocks, 512-byte sectors; other sizes shift
// the block numbers):
//
//	block 0     sector 0 superblock | 1 AGF | 2 AGI | 3 AGFL | zeros
//	block 1     bnobt root     (free space by block)
//	block 2     cntbt root     (free space by size)
//	block 3     inobt root     (inode chunks)
//	block 4     finobt root    (chunks with free inodes)
//	block 5     refcountbt root (empty; shared extents) with reflink
//	block 6..9  AGFL blocks    (slots 1..4 of the free list); 5..8
//	            without reflink
//	AG 0 only:  first inode chunk at the next multiple of sb_inoalignmt
//	            (block 16): root directory, realtime bitmap and summary
//	            inodes, then free inodes
//	log AG:     the log from block 6 (5 without reflink); the AGFL
//	            blocks follow it
//
// The refcount root's block counts in agf_refcount_blocks, not as free
// space: a reflink AG has one free block less everywhere (sb_fdblocks,
// agf_freeblks, agf_longest).
//
// The primary superblock is written last, after everything else is on
// stable storage; until then the copy in place says "in progress". The
// secondary copies are what mkfs.xfs leaves: written before any inode
// existed, with the root inode filled in only in the middle and last AG.
//
// Over an existing file or device, the log is zeroed (hole punch where
// possible), the first and last 128 KiB are zeroed, the superblock copies
// of an XFS filesystem found there are erased, and all new metadata is
// written whole. The rest of the old contents stays in free space.
package mkfs
