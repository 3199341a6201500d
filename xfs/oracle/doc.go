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
//   - Require (Optional, for a part of a test), Mkfs, Repair, DB and
//     DBSuperblock: thin wrappers around the xfsprogs tools;
//   - Mount and Unmount: loop mounts that are always cleaned up;
//   - Snapshot and SnapshotDir: a comparable description of a directory tree
//     (types, modes, sizes, link counts, owners, content hashes, symlink
//     targets and extended attributes);
//   - BuildFixture: an XFS image populated by the kernel with every on-disk
//     format the engine must understand, together with its Snapshot;
//   - WriteGolden, OpenGolden and LoadGolden: zstd-compressed golden images
//     kept under testdata/golden;
//   - UML, UMLConfig.Run and ParseQuotaReport: scripts run as root inside
//     a user-mode Linux kernel that has XFS quota support, which the host's
//     kernel lacks;
//   - LoadQuotaGolden and QuotaGoldenDquot: a volume whose project quotas
//     that kernel set up (testdata/golden/prjquota.img.zst), with what
//     xfs_db prints of its quota metadata (prjquota.txt);
//   - DamageUnlinkedBucket, an image whose unlinked lists a writable open
//     must refuse;
//   - LoadAverage, which benchmarks print beside their figures.
//
// # User-mode Linux
//
// Debian's package user-mode-linux ships linux.uml, a 6.1 kernel that runs
// as an ordinary process and whose XFS is built with quota ("SGI XFS with
// ACLs, security attributes, realtime, quota"; XFS and hostfs are built
// in, no modules needed). UMLConfig.Run boots it as
//
//	linux.uml ubd0=RUN/ubda root=/dev/root rootfstype=hostfs rootflags=/ rw \
//	    mem=256M umid=xfs3 uml_dir=RUN/uml con=null con0=fd:0,fd:1 \
//	    pty.legacy_count=0 init=RUN/init
//
// with stdin /dev/null and stdout and stderr (the console) in RUN/console,
// where RUN is a new directory from os.MkdirTemp. The guest's root is the
// host's / through hostfs, so host programs (xfsprogs) run inside unchanged
// and RUN has the same path on both sides: RUN/init, a shell script,
// mounts /proc and /sys, runs the caller's script with its output in
// RUN/output, writes the exit status to RUN/status, unmounts what the
// script left mounted, syncs, and powers off. Boot to power-off of an
// empty script takes 1.5 to 3 s on an idle machine.
//
// Quirks found on the way:
//
//   - On a host with AVX-512 or AMX, linux.uml 6.1 panics at the first
//     exec of init ("userspace - ptrace set fp regs failed, errno = 14",
//     then "Attempted to kill init"): the host refuses its
//     PTRACE_SETREGSET buffer, whose fixed size is not the host's XSAVE
//     area's. The kernel is therefore started by the test binary itself
//     (umlLaunchEnv) under a seccomp filter that fails the one
//     PTRACE_GETREGSET by which UML decides to use XSAVE; it then uses
//     the FXSAVE requests, and init keeps guest glibc off AVX with
//     GLIBC_TUNABLES, since UML now switches only x87 and SSE state.
//   - When init exits, the kernel panics ("Attempted to kill init!") and
//     linux.uml aborts with status 134. "echo o > /proc/sysrq-trigger"
//     powers off cleanly (linux.uml exits 0, "reboot: Power down"), but
//     asynchronously: init must sleep after it. ("poweroff -f -f" works
//     too, but Debian's poweroff is systemctl's.)
//   - UML forks helper host processes (I/O threads, one process per
//     guest address space). Two of them survive a SIGKILL of the main
//     process, asleep in poll, forever. So the kernel runs in its own
//     process group and, where allowed (root), as process 1 of a new PID
//     namespace, whose end kills them all; Pdeathsig kills the kernel if
//     the test binary dies. UML runs fine as process 1 of a namespace.
//   - pty.legacy_count=0 saves about 1.3 s of boot (256 legacy ptys). The
//     raid6 benchmark of the built-in btrfs takes about 0.9 s more, and no
//     option skips it.
//   - uml_dir (default ~/.uml) receives UML's pid file and mconsole
//     socket; a path longer than about 100 bytes gives "umid_file_name :
//     buffer too short" and no mconsole. Hence the short RUN.
//   - mem= is honoured (by UML's own parser) although the kernel also
//     prints 'Unknown kernel command line parameters "mem=256M
//     uml_dir=...", will be passed to user space': such key=value words
//     land in init's environment. Guest memory is a sparse, unlinked file
//     in $TMPDIR or else /dev/shm, which must be tmpfs and allow PROT_EXEC
//     mappings; UML adds an "exec-shield gap" of a few hundred MiB to it.
//   - con=null alone would silence the kernel log too; con0=fd:0,fd:1
//     keeps it on stdout. Without con=null the console says
//     "setup_one_line failed for device N : failed to parse channel pair"
//     for every other virtual console. "epollctl add err fd 0/1,
//     Operation not permitted" is harmless: they are regular files.
//   - The kernel command line splits on white space and ubd0= takes ','
//     and ':' as separators (COW file, serial), so the image is reached
//     through the symlink RUN/ubda.
//   - devtmpfs is mounted on /dev by the kernel (/dev/ubda is there);
//     /proc and /sys are not.
//   - Every program start inside is slow (ptrace): /bin/true took 90 ms
//     and xfs_db 0.5 s on a loaded machine. Batch xfs_db commands into
//     one run.
//   - Result and output files travel through hostfs; init syncs before
//     powering off so that they, and the image, are on the host.
//   - The script runs as root on the host's files: it must write only
//     under WORK and MNT.
//
// # Project quotas in the 6.1 kernel
//
// Recorded by TestUMLProjectQuota, TestUMLQuotaMounts and the quota golden
// image (xfsprogs 6.1, 64 MiB mkfs.xfs default images):
//
//   - The first prjquota mount logs "Quotacheck needed: Please wait." and
//     "Quotacheck: Done.", allocates the project quota inode (131: the
//     first free inode after the root, rbmino and rsumino), sets
//     sb_qflags to 0x608 (PQUOTA_ACCT|PQUOTA_ENFD|PQUOTA_CHKD) and the
//     QUOTA bit 0x40 of sb_versionnum (0xb4a5 -> 0xb4e5), and rewrites
//     sb_uquotino and sb_gquotino from mkfs's 0 to null (NULLFSINO). A prjquota mount with PQUOTA_CHKD set runs
//     no quotacheck; pqnoenforce leaves 0x408.
//   - Project 0 counts every inode without a project except the quota
//     inode: the root, rbmino and rsumino (icount 3 on a fresh volume).
//   - Limits are stored in filesystem blocks (bhard=1m -> 256) and in
//     inodes; dquots of IDs other than 0 have d_type 0x82 (PROJ|BIGTIME),
//     ID 0 has 0x2. ID 0's timer fields hold the grace periods in plain
//     seconds; a running timer of another ID is a bigtime expiry: Unix
//     seconds divided by 4, with no epoch offset (compare the raw bytes of
//     the golden image with xfs_db's dates).
//   - Past a hard block limit a write fails with ENOSPC ("No space left
//     on device"), never EDQUOT, after writing exactly up to the limit;
//     past a hard inode limit a create fails with ENOSPC too. The project
//     directory itself counts one inode.
//   - Delayed allocations are reserved against the limits at write(2),
//     but d_bcount grows, and a block soft limit's timer starts, only when
//     they are written back: xfs_quota shows no block grace before a sync.
//   - The quota file holds 30 dquots a block, allocated block by block as
//     IDs appear (ID 70000 is file block 2333; skipped blocks are holes,
//     for which xfs_db says "no project quota data for id N"). Unused
//     slots of an allocated block are initialised: magic, version, ID,
//     type 0x82, CRC, UUID, LSN 0.
//   - A mount without quota options logs "resetting quota flags" and
//     writes sb_qflags = 0, even read-only (-o ro) in 6.1; the quota inode,
//     the QUOTA bit and the dquots with their limits stay, and the next
//     prjquota mount runs a quotacheck. The host's kernel (no quota
//     support; a prjquota mount fails with "quota support not available
//     in this kernel") logs the same and clears qflags on a read-write
//     mount, but leaves them on a read-only one.
package oracle
