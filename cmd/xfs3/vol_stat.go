package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const statUsage = `Usage: xfs3 vol stat [--json] VOLUME PATH

Show the attributes of the inode at PATH in VOLUME. A final symlink is not
followed (like lstat(2)); symlinks in the middle of PATH are.

Text output is one "field: value" line per field:
  path, inode, type, mode (octal and symbolic), uid, gid, size (bytes),
  blocks (filesystem blocks owned: data, attribute and extent btree
  blocks; the block size follows in parentheses), nlink, atime, mtime, ctime, crtime
  (RFC 3339 UTC with nanoseconds), projid, generation, data fork (format
  and extent count), attr fork (format and extent count, or "none"),
  flags (di_flags and di_flags2 names, or "none"), target (symlinks only),
  shared (reflink files only: the runs of blocks other files map too, as
  "FILEBLOCK+N at BLOCK xCOUNT", or "none").

Flags:
  --json  print one JSON object instead, with these fields:
            path, ino, type, mode (st_mode, number), mode_octal ("0644",
            permission and setuid/setgid/sticky bits), mode_symbolic
            ("-rw-r--r--"), uid, gid, size, blocks, block_size, nlink,
            atime, mtime, ctime, crtime (strings as above), projid,
            generation, data_format ("local", "extents", "btree" or
            "dev"), data_extents, attr_format (as data_format, or "none"),
            attr_extents, di_flags, di_flags2 (numbers), flags (list of
            names), target ("" unless a symlink), shared_extents (a
            list of {file_block, block, blocks, refcount}; empty unless
            the file shares blocks). Bytes of path and target that are
            not valid UTF-8 become U+FFFD in JSON.
  -h      show this help
`

// statJSON is the --json form; field names are part of the interface.
type statJSON struct {
	Path         string       `json:"path"`
	Ino          uint64       `json:"ino"`
	Type         string       `json:"type"`
	Mode         uint32       `json:"mode"`
	ModeOctal    string       `json:"mode_octal"`
	ModeSymbolic string       `json:"mode_symbolic"`
	UID          uint32       `json:"uid"`
	GID          uint32       `json:"gid"`
	Size         int64        `json:"size"`
	Blocks       uint64       `json:"blocks"`
	BlockSize    int          `json:"block_size"`
	Nlink        uint32       `json:"nlink"`
	Atime        string       `json:"atime"`
	Mtime        string       `json:"mtime"`
	Ctime        string       `json:"ctime"`
	Crtime       string       `json:"crtime"`
	ProjID       uint32       `json:"projid"`
	Generation   uint32       `json:"generation"`
	DataFormat   string       `json:"data_format"`
	DataExtents  uint64       `json:"data_extents"`
	AttrFormat   string       `json:"attr_format"`
	AttrExtents  uint64       `json:"attr_extents"`
	DiFlags      uint16       `json:"di_flags"`
	DiFlags2     uint64       `json:"di_flags2"`
	Flags        []string     `json:"flags"`
	Target       string       `json:"target"`
	Shared       []sharedJSON `json:"shared_extents"`
}

// sharedJSON is a run of shared blocks in the --json form.
type sharedJSON struct {
	FileBlock uint64 `json:"file_block"`
	Block     uint64 `json:"block"`
	Blocks    uint64 `json:"blocks"`
	Refcount  uint32 `json:"refcount"`
}

// timeLayout is RFC 3339 with all nine fractional digits.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

var diflagNames = []struct {
	bit  uint16
	name string
}{
	{format.DiflagRealtime, "realtime"},
	{format.DiflagPrealloc, "prealloc"},
	{format.DiflagImmutable, "immutable"},
	{format.DiflagAppend, "append"},
	{format.DiflagSync, "sync"},
	{format.DiflagNoatime, "noatime"},
	{format.DiflagNodump, "nodump"},
	{format.DiflagRtInherit, "rtinherit"},
	{format.DiflagProjInherit, "projinherit"},
	{format.DiflagNosymlinks, "nosymlinks"},
	{format.DiflagExtsize, "extsize"},
	{format.DiflagExtszInh, "extszinherit"},
	{format.DiflagNodefrag, "nodefrag"},
	{format.DiflagFilestream, "filestream"},
}

var diflag2Names = []struct {
	bit  uint64
	name string
}{
	{format.Diflag2Dax, "dax"},
	{format.Diflag2Reflink, "reflink"},
	{format.Diflag2CowExt, "cowextsize"},
	{format.Diflag2Bigtime, "bigtime"},
	{format.Diflag2Nrext64, "nrext64"},
}

// flagNames names the set bits of di_flags and di_flags2; unknown bits are
// shown as hex.
func flagNames(f uint16, f2 uint64) []string {
	names := []string{}
	for _, d := range diflagNames {
		if f&d.bit != 0 {
			names = append(names, d.name)
			f &^= d.bit
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("flags%#x", f))
	}
	for _, d := range diflag2Names {
		if f2&d.bit != 0 {
			names = append(names, d.name)
			f2 &^= d.bit
		}
	}
	if f2 != 0 {
		names = append(names, fmt.Sprintf("flags2%#x", f2))
	}
	return names
}

func volStat(args []string, e *env) error {
	fs := newFlags("vol stat")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want VOLUME PATH, got %s", nargs(len(pos)))
	}
	vol, path := pos[0], pos[1]
	v, ino, st, err := openAt(vol, path, false)
	if err != nil {
		return err
	}
	defer v.Close()
	j := statRecord(path, &st)
	if st.Mode&format.SIFMT == format.SIFLNK {
		if j.Target, err = v.Files().Readlink(ino); err != nil {
			return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
		}
	}
	shared, err := v.Files().SharedExtents(ino)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", vol, displayName(path), err)
	}
	j.Shared = []sharedJSON{}
	for _, s := range shared {
		j.Shared = append(j.Shared, sharedJSON{uint64(s.FileBlock), uint64(s.Block), s.Blocks, s.Refcount})
	}
	w := e.stdout
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(j)
	}
	flags := "none"
	if len(j.Flags) > 0 {
		flags = strings.Join(j.Flags, ",")
	}
	fmt.Fprintf(w, "path: %s\n", displayName(j.Path))
	fmt.Fprintf(w, "inode: %d\n", j.Ino)
	fmt.Fprintf(w, "type: %s\n", j.Type)
	fmt.Fprintf(w, "mode: %s (%s)\n", j.ModeOctal, j.ModeSymbolic)
	fmt.Fprintf(w, "uid: %d\n", j.UID)
	fmt.Fprintf(w, "gid: %d\n", j.GID)
	fmt.Fprintf(w, "size: %d\n", j.Size)
	fmt.Fprintf(w, "blocks: %d (%d bytes each)\n", j.Blocks, j.BlockSize)
	fmt.Fprintf(w, "nlink: %d\n", j.Nlink)
	fmt.Fprintf(w, "atime: %s\n", j.Atime)
	fmt.Fprintf(w, "mtime: %s\n", j.Mtime)
	fmt.Fprintf(w, "ctime: %s\n", j.Ctime)
	fmt.Fprintf(w, "crtime: %s\n", j.Crtime)
	fmt.Fprintf(w, "projid: %d\n", j.ProjID)
	fmt.Fprintf(w, "generation: %d\n", j.Generation)
	fmt.Fprintf(w, "data fork: %s, %s\n", j.DataFormat, plural(j.DataExtents, "extent"))
	if j.AttrFormat == "none" {
		fmt.Fprintf(w, "attr fork: none\n")
	} else {
		fmt.Fprintf(w, "attr fork: %s, %s\n", j.AttrFormat, plural(j.AttrExtents, "extent"))
	}
	fmt.Fprintf(w, "flags: %s\n", flags)
	if st.Mode&format.SIFMT == format.SIFLNK {
		fmt.Fprintf(w, "target: %s\n", displayName(j.Target))
	}
	if st.Flags2&format.Diflag2Reflink != 0 {
		runs := []string{}
		for _, s := range j.Shared {
			runs = append(runs, fmt.Sprintf("%d+%d at %d x%d", s.FileBlock, s.Blocks, s.Block, s.Refcount))
		}
		if len(runs) == 0 {
			runs = append(runs, "none")
		}
		fmt.Fprintf(w, "shared: %s\n", strings.Join(runs, ", "))
	}
	return nil
}

// statRecord converts an engine Stat to the command's record.
func statRecord(path string, st *xfs.Stat) statJSON {
	attrFormat := st.AttrFormat
	if attrFormat == "" {
		attrFormat = "none"
	}
	return statJSON{
		Path: path, Ino: uint64(st.Ino), Type: typeName(st.Mode), Mode: st.Mode,
		ModeOctal: fmt.Sprintf("%04o", st.Mode&0o7777), ModeSymbolic: modeString(st.Mode),
		UID: st.UID, GID: st.GID, Size: st.Size, Blocks: st.Blocks, BlockSize: st.BlockSize, Nlink: st.Nlink,
		Atime: formatTime(st.Atime), Mtime: formatTime(st.Mtime), Ctime: formatTime(st.Ctime), Crtime: formatTime(st.Crtime),
		ProjID: st.ProjID, Generation: st.Gen,
		DataFormat: st.DataFormat, DataExtents: st.Extents, AttrFormat: attrFormat, AttrExtents: st.AttrExtents,
		DiFlags: st.Flags, DiFlags2: st.Flags2, Flags: flagNames(st.Flags, st.Flags2),
	}
}

func plural(n uint64, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
