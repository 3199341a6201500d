// Package oracle holds test helpers that use the Linux kernel and xfsprogs
// (mkfs.xfs, xfs_repair, xfs_db) as oracles for the Go XFS engine.
//
// The helpers are meant for tests only. Every helper that needs an external
// tool calls Require first, so a test skips cleanly on a machine without the
// tools (or without root and loop devices for mounting), and fails instead
// when the environment variable XFS3_REQUIRE_ORACLES=1 is set.
//
// The main pieces are:
//
//   - Require, Mkfs, Repair, DB and DBSuperblock: thin wrappers around the
//     xfsprogs tools;
//   - Mount and Unmount: loop mounts that are always cleaned up;
//   - Snapshot and SnapshotDir: a comparable description of a directory tree
//     (types, modes, sizes, link counts, owners, content hashes, symlink
//     targets and extended attributes);
//   - BuildFixture: an XFS image populated by the kernel with every on-disk
//     format the engine must understand, together with its Snapshot;
//   - WriteGolden, OpenGolden and LoadGolden: zstd-compressed golden images
//     kept under testdata/golden.
package oracle
