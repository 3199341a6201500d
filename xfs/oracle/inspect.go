package oracle

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// InodeFields prints the given fields of inode ino with xfs_db, for example
// InodeFields(t, img, ino, "core.format", "core.nextents").
func InodeFields(t testing.TB, img string, ino uint64, fields ...string) map[string]string {
	t.Helper()
	out := DB(t, img, fmt.Sprintf("inode %d", ino), "print "+strings.Join(fields, " "))
	m := ParseFields(out)
	for _, f := range fields {
		if _, ok := m[f]; !ok {
			t.Fatalf("xfs_db: no field %s for inode %d:\n%s", f, ino, out)
		}
	}
	return m
}

// forkFormatName turns "3 (btree)" into "btree".
func forkFormatName(v string) string {
	if _, name, ok := strings.Cut(v, "("); ok {
		return strings.TrimSuffix(name, ")")
	}
	return v
}

// DataForkFormat returns the on-disk data fork format of inode ino:
// "dev", "local", "extents" or "btree".
func DataForkFormat(t testing.TB, img string, ino uint64) string {
	t.Helper()
	return forkFormatName(InodeFields(t, img, ino, "core.format")["core.format"])
}

// AttrForkFormat returns the attribute fork format of inode ino: "none"
// when the inode has no attribute fork, else "local", "extents" or "btree".
func AttrForkFormat(t testing.TB, img string, ino uint64) string {
	t.Helper()
	m := InodeFields(t, img, ino, "core.forkoff", "core.aformat")
	if m["core.forkoff"] == "0" {
		return "none"
	}
	return forkFormatName(m["core.aformat"])
}

// DirFormat classifies directory inode ino as "shortform", "block", "leaf"
// or "node", from its data fork format and the file offsets of its
// blocks (leaf blocks live at 32 GiB, free index blocks at 64 GiB).
func DirFormat(t testing.TB, img string, ino uint64) string {
	t.Helper()
	if f := DataForkFormat(t, img, ino); f == "local" {
		return "shortform"
	}
	bs, err := strconv.ParseInt(DBSuperblock(t, img)["blocksize"], 10, 64)
	if err != nil || bs <= 0 {
		t.Fatalf("bad superblock blocksize: %v", err)
	}
	leafOff, freeOff := int64(32<<30)/bs, int64(64<<30)/bs
	out := DB(t, img, fmt.Sprintf("inode %d", ino), "bmap")
	format := "block"
	for _, line := range strings.Split(out, "\n") {
		var off, start, count, flag int64
		var agno, agbno int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &agno, &agbno, &count, &flag); err != nil {
			continue
		}
		switch {
		case off >= freeOff:
			return "node"
		case off >= leafOff:
			format = "leaf"
		}
	}
	return format
}

// AttrFormat classifies the attribute fork of inode ino as "none",
// "shortform", "leaf" (a single leaf block) or "node" (a dabtree).
func AttrFormat(t testing.TB, img string, ino uint64) string {
	t.Helper()
	switch f := AttrForkFormat(t, img, ino); f {
	case "none":
		return f
	case "local":
		return "shortform"
	}
	out := DB(t, img, fmt.Sprintf("inode %d", ino), "ablock 0", "print hdr.info.hdr.magic")
	switch magic := ParseFields(out)["hdr.info.hdr.magic"]; magic {
	case "0x3bee", "0xfbee": // XFS_ATTR3_LEAF_MAGIC, XFS_ATTR_LEAF_MAGIC
		return "leaf"
	case "0x3ebe", "0xfebe": // XFS_DA3_NODE_MAGIC, XFS_DA_NODE_MAGIC
		return "node"
	default:
		t.Fatalf("inode %d: unknown attribute block magic %q:\n%s", ino, magic, out)
		return ""
	}
}
