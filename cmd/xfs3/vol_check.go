package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
)

const checkUsage = `Usage: xfs3 vol check [--json] [--objects] VOLUME

Say what xfs_repair would do to a stopped volume (not while a server runs)
before it is repaired. The volume file is opened read-only and never
written: the store is opened over it with its own bookkeeping kept in
memory, as 'xfs3 vol versions' does (when the damage keeps the store from
opening, the engine alone checks, and the places of inodes are not known).

First xfs3's own metadata scrub (the one 'xfs3 scrub' runs first) checks
the AG headers and btrees, every inode, its extent maps, directory and
xattr blocks, and the project quota file. Each sick structure is listed
with its place in the store (bucket, key prefix or key, path on the
volume) and what xfs_repair does to it, and what that means for the
objects:

  AG header or btree   rebuilt from the inodes; no object is lost
  quota file block     records rewritten, the quota-checked flag cleared:
                       xfs3 recounts every bucket's usage at its next open
  directory block      junked: the objects (and prefixes) whose entries it
                       held move to /lost+found, named by inode number, and
                       lose their keys; the rest of the directory stays
  directory index      (leaf, node or free block) rebuilt from the entry
                       blocks; every object keeps its key
  inode                cleared and its entry removed: an object's, the
                       object is gone; a directory's, its entries move to
                       /lost+found and lose their keys
  xattr leaf block     (an object's) the inode's xattrs cleared: the object
                       keeps its key and bytes, and loses its ETag, content
                       type, user metadata and tags
  extent tree block    (an object's) the inode cleared and its entry
                       removed: the object is gone

Other structures (a directory's xattrs, say) are listed without a
prediction. The table is what xfs_repair does when the damage reaches a
structure's contents; a block whose checksum alone is wrong it rewrites
and keeps, and nothing is lost.

Then, when xfs_repair (xfsprogs) is installed, 'xfs_repair -n' (which
reads only) runs on the volume: its findings are printed, and with each
structure the ones that name its inode. A dirty log (the last writer did
not close the volume) is refused: run 'xfs3 vol replay VOLUME' first.

Exit status: 0 when nothing is wrong, 1 when damage was found (by the
scrub or by xfs_repair -n), 2 when the check could not run (an
unopenable volume, a dirty log, bad flags): unlike other commands, an
error is not 1.

Flags:
  --json     one JSON document instead of text
  --objects  also read every object version whole and check it against
             its stored checksums, as 'xfs3 scrub' does; xfs_repair does
             not read object data, so a rotten object stays as it is
  -h         show this help
`

// exitCheckFailed is vol check's status when it could not check (an
// error): 1 says damage was found.
const exitCheckFailed = 2

// What xfs_repair does to each kind of damaged structure, as the tests
// in vol_check_test.go watched it do (xfs_repair 6.1, a damaged block's
// contents overwritten past its header). Only what was watched is here;
// anything else gets damageOther.
const (
	damageAG       = "ag"              // an AG header (AGF, AGI, AGFL) or btree block
	damageQuota    = "quota"           // a block of the project quota file
	damageDirBlock = "directory-block" // a block of a directory's entries
	damageDirIndex = "directory-index" // a directory's leaf, node or free block
	damageInode    = "inode"           // an inode's core
	damageXattrs   = "xattrs"          // an object's xattr leaf block
	damageExtents  = "extent-tree"     // a block of an object's extent tree (bmbt)
	damageOther    = "other"
)

var repairActions = map[string]string{
	damageAG: "xfs_repair rebuilds the AG's headers and its free-space, inode and refcount btrees from the inodes it finds; " +
		"no object is lost.",
	damageQuota: "xfs_repair rewrites the damaged quota records and clears the quota-checked flag; " +
		"xfs3 recounts every bucket's usage at its next writable open. No object is lost.",
	damageDirBlock: "xfs_repair junks the damaged block and rebuilds the directory from the entries it can still read: " +
		"the objects and prefixes whose entries the block held move to /lost+found, named by inode number, and lose their keys " +
		"(in a directory of one block, all of them).",
	damageDirIndex: "xfs_repair rebuilds the directory's index from its entry blocks; every object in it keeps its key.",
	damageInode: "xfs_repair clears the inode and removes its directory entry: an object's inode, the object is gone; " +
		"a directory's, its entries move to /lost+found, named by inode number, and lose their keys.",
	damageXattrs: "xfs_repair clears the inode's xattrs: the object keeps its key and bytes, " +
		"and loses its ETag, content type, user metadata and tags.",
	damageExtents: "xfs_repair clears the inode and removes its directory entry: the object is gone.",
	damageOther:   "xfs3 does not predict what xfs_repair does to this structure: see xfs_repair -n's findings.",
}

// rottenAction is what xfs_repair does to an object whose bytes are
// rotten (--objects).
const rottenAction = "xfs_repair does not read object data: the bytes stay as they are. PUT the object again or delete it."

// damageOf tells which of the kinds of repairActions s is, from the
// engine's name of the structure that failed verification, where, and
// whose it is: an object's xattrs and extent tree are watched, a
// directory's are not.
func damageOf(s store.SickStructure) string {
	switch s.Kind {
	case "ag":
		return damageAG
	case "quota":
		return damageQuota
	case "inode":
	default:
		return damageOther
	}
	object := s.Place == store.PlaceObject
	switch st := s.Structure; {
	case st == "inode":
		return damageInode
	case strings.HasPrefix(st, "dir3 data"):
		return damageDirBlock
	case strings.HasPrefix(st, "dir3 leaf") || strings.HasPrefix(st, "dir3 free"):
		return damageDirIndex
	case strings.HasPrefix(st, "attr3 leaf") && object:
		return damageXattrs
	case strings.HasPrefix(st, "bmbt") && strings.Contains(s.Where, "data fork") && object:
		return damageExtents
	}
	return damageOther
}

// checkReport is what 'xfs3 vol check' prints.
type checkReport struct {
	Volume string            `json:"volume"`
	Counts store.ScrubCounts `json:"counts"`
	// Objects: --objects read every object version.
	Objects bool `json:"objects_checked"`
	// StoreError is why the store could not open the volume: the engine
	// alone checked its metadata, and the places are not known.
	StoreError string             `json:"store_error,omitempty"`
	Sick       []checkedStructure `json:"sick"`
	Rotten     []checkedObject    `json:"rotten,omitempty"` // --objects
	Repair     repairCheck        `json:"xfs_repair"`
}

// checkedStructure is a sick structure, where it lies, and what
// xfs_repair does to it.
type checkedStructure struct {
	Kind       string   `json:"kind"` // "inode", "ag" or "quota"
	Ino        uint64   `json:"ino,omitempty"`
	AG         *uint32  `json:"ag,omitempty"`
	QuotaBlock *uint64  `json:"quota_block,omitempty"`
	Projects   []uint32 `json:"projects,omitempty"` // first and last
	Buckets    []string `json:"buckets,omitempty"`  // whose quota records it holds
	Place      string   `json:"place"`              // store.Place*
	Bucket     string   `json:"bucket,omitempty"`
	Prefix     string   `json:"prefix,omitempty"` // of a directory (or in the versions tree)
	Key        string   `json:"key,omitempty"`    // of an object (place "object")
	Path       string   `json:"path,omitempty"`
	Structure  string   `json:"structure"`
	Where      string   `json:"where"`
	Reason     string   `json:"reason"`
	Describe   string   `json:"describe"`
	Damage     string   `json:"damage"` // damage* : the row of the repair table
	Repair     string   `json:"repair"`
	// Findings are xfs_repair -n's findings that name its inode.
	Findings []string `json:"xfs_repair_findings,omitempty"`
}

// checkedObject is a rotten object version (--objects).
type checkedObject struct {
	store.RottenObject
	Repair string `json:"repair"`
}

// repairCheck is what xfs_repair -n said.
type repairCheck struct {
	Installed  bool   `json:"installed"`
	Ran        bool   `json:"ran"`
	Command    string `json:"command,omitempty"`
	ExitStatus int    `json:"exit_status"`
	// Findings are its lines that report problems, without its phase
	// banners and progress lines, each once.
	Findings []string `json:"findings"`
	// LostFound counts the inodes it says it would move to /lost+found.
	LostFound int    `json:"would_move_to_lost_found"`
	Note      string `json:"note,omitempty"`
}

// findRepair finds xfs_repair: on PATH, else where xfsprogs installs it
// (sbin, which a user's PATH often lacks). Tests replace it.
var findRepair = func() (string, error) {
	if p, err := exec.LookPath("xfs_repair"); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, "xfs_repair")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// runVolCheck runs vol check and maps its result to its exit status:
// damage 1, any other error 2.
func runVolCheck(args []string, e *env) int {
	err := volCheck(args, e)
	status := finish(err, "vol check", checkUsage, e)
	if status == exitError && !errors.Is(err, errDamageFound) {
		return exitCheckFailed
	}
	return status
}

func volCheck(args []string, e *env) error {
	var asJSON, objects bool
	fs := newFlags("vol check")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&objects, "objects", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want VOLUME, got %s", nargs(len(pos)))
	}
	path := pos[0]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := refuseDirtyLog(path); err != nil {
		return err
	}
	rep := checkReport{Volume: path, Objects: objects, Sick: []checkedStructure{}, Repair: repairCheck{Findings: []string{}}}
	if err := scrubForCheck(ctx, path, objects, &rep, e); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted", path)
		}
		return err
	}
	if err := runRepairCheck(ctx, path, &rep.Repair); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for i := range rep.Sick {
		if s := &rep.Sick[i]; s.Kind == "inode" {
			s.Findings = naming(rep.Repair.Findings, s.Ino)
		}
	}
	if err := printJSONOrText(e, rep, asJSON, func() { printCheckText(e, rep) }); err != nil {
		return err
	}
	repairFound := rep.Repair.Ran && rep.Repair.ExitStatus != 0
	if len(rep.Sick) > 0 || len(rep.Rotten) > 0 || rep.Counts.Errors > 0 || repairFound {
		what := fmt.Sprintf("%d sick structures", len(rep.Sick))
		if objects {
			what += fmt.Sprintf(", %d rotten objects", len(rep.Rotten))
		}
		if repairFound {
			what += ", xfs_repair -n found problems"
		}
		return fmt.Errorf("%s: %w: %s (docs/operations.md, Damaged metadata)", path, errDamageFound, what)
	}
	return nil
}

// refuseDirtyLog refuses a volume whose log needs replaying, as the
// read-only commands do, saying how to replay it: xfs_repair -n would
// report inconsistencies the replay resolves.
func refuseDirtyLog(path string) error {
	v, err := openVolume(path)
	if errors.Is(err, xfs.ErrNeedsRecovery) {
		return fmt.Errorf("%s: the log is dirty (the last writer did not close the volume): run 'xfs3 vol replay %s' first, then check again", path, path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return v.Close()
}

// scrubForCheck runs the metadata scrub (with objects, the whole scrub
// pass) over a store whose writes stay in memory and fills rep's counts,
// sick structures and rotten objects. When the store cannot open the
// volume, the engine alone scrubs its metadata, opened read-only, and
// the structures are listed without their places in the store.
func scrubForCheck(ctx context.Context, path string, objects bool, rep *checkReport, e *env) error {
	// Without quota: the scrub reads the quota file all the same, and a
	// damaged block of it must not stop the open (quota charges would
	// meet it) nor a volume last mounted without quota make the open
	// recount every bucket.
	vs, err := openVolumeStoreWith(path, xfs.Options{LazyCommits: true, NoQuota: true})
	var ue *usageError
	if errors.Is(err, dev.ErrInUse) || errors.As(err, &ue) {
		return err // a running server's volume is not checked
	}
	if err != nil {
		return scrubEngineOnly(ctx, path, err, rep, e)
	}
	err = scrubStore(ctx, vs, objects, rep, e)
	if err == nil {
		err = vs.st.FindSick(ctx)
	}
	if err == nil {
		for _, s := range vs.st.Health().Sick {
			rep.Sick = append(rep.Sick, checked(s))
		}
	}
	if cerr := vs.close(); err == nil {
		err = cerr
	}
	return err
}

// scrubEngineOnly scrubs the metadata of a volume the store could not
// open (storeErr says why) with the engine alone, read-only.
func scrubEngineOnly(ctx context.Context, path string, storeErr error, rep *checkReport, e *env) error {
	v, err := openVolume(path)
	if err != nil {
		return storeErr
	}
	defer v.Close()
	rep.StoreError = storeErr.Error()
	if err := scrubMetadata(ctx, v, rep, e); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, x := range v.Sick() {
		// The places the store gives without looking: an AG's is the
		// volume, a quota file block's its records.
		s := store.SickStructure{SickStructure: x, Place: store.PlaceUnknown}
		switch x.Kind {
		case "ag":
			s.Place = store.PlaceVolume
		case "quota":
			s.Place = store.PlaceQuota
		}
		rep.Sick = append(rep.Sick, checked(s))
	}
	return nil
}

// scrubStore runs the pass over the store, batch after batch: the
// metadata scrub, with objects the whole scrub pass.
func scrubStore(ctx context.Context, vs *volumeStore, objects bool, rep *checkReport, e *env) error {
	if !objects {
		if err := scrubMetadata(ctx, vs.v, rep, e); err != nil {
			return fmt.Errorf("%s: %w", vs.path, err)
		}
		return nil
	}
	r, note := vs.st.Scrub(), progress(rep, e)
	for cursor := ""; ; {
		next, c, err := r.ScrubBatch(ctx, cursor)
		rep.Counts.Add(c)
		if err != nil {
			return fmt.Errorf("%s: %w", vs.path, err)
		}
		if next == "" {
			break
		}
		cursor = next
		note()
	}
	rotten, err := r.Rotten()
	if err != nil {
		return fmt.Errorf("%s: %w", vs.path, err)
	}
	for _, o := range rotten {
		rep.Rotten = append(rep.Rotten, checkedObject{o, rottenAction})
	}
	return nil
}

// scrubMetadata runs the engine's metadata scrub to its end.
func scrubMetadata(ctx context.Context, v *xfs.Volume, rep *checkReport, e *env) error {
	note := progress(rep, e)
	var cur xfs.ScrubCursor
	for !cur.Done {
		b, err := v.Space().Scrub(ctx, cur, xfs.DefaultScrubBudget)
		rep.Counts.Add(store.ScrubCounts{AGHeaders: b.AGHeaders, Blocks: b.Blocks, Inodes: b.Inodes, SickStructures: b.Damaged})
		if err != nil {
			return err
		}
		cur = b.Next
		note()
	}
	return nil
}

// progress returns a function that notes the counts on standard error,
// once a second at most.
func progress(rep *checkReport, e *env) func() {
	last := time.Now()
	return func() {
		if time.Since(last) > time.Second {
			last = time.Now()
			c := rep.Counts
			fmt.Fprintf(e.stderr, "check: %d inodes, %d metadata blocks, %d objects checked\n", c.Inodes, c.Blocks, c.Objects)
		}
	}
}

// checked is s as the check reports it.
func checked(s store.SickStructure) checkedStructure {
	c := checkedStructure{Kind: s.Kind, Place: s.Place, Bucket: s.Bucket, Path: s.Path, Buckets: s.Buckets,
		Structure: s.Structure, Where: s.Where, Reason: s.Reason, Describe: s.Describe(), Damage: damageOf(s)}
	c.Repair = repairActions[c.Damage]
	switch s.Kind {
	case "ag":
		ag := uint32(s.AG)
		c.AG = &ag
	case "quota":
		qb := s.QuotaBlock
		c.QuotaBlock, c.Projects = &qb, s.Projects[:]
	default:
		c.Ino = uint64(s.Ino)
	}
	if s.Place == store.PlaceObject {
		c.Key = s.Prefix
	} else {
		c.Prefix = s.Prefix
	}
	return c
}

// runRepairCheck runs xfs_repair -n on the volume at path when it is
// installed and records what it found.
func runRepairCheck(ctx context.Context, path string, r *repairCheck) error {
	tool, err := findRepair()
	if err != nil {
		r.Note = "xfs_repair is not installed (Debian and Fedora package xfsprogs): only xfs3's own checks ran"
		return nil
	}
	r.Installed = true
	args := []string{"-n"}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		args = append(args, "-f") // an image in a regular file (xfs_repair(8))
	}
	args = append(args, path)
	r.Command = tool + " " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, tool, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		r.ExitStatus = exit.ExitCode()
	default:
		return fmt.Errorf("run %s: %w", r.Command, err)
	}
	r.Ran = true
	r.Findings = repairFindings(out.String())
	for _, f := range r.Findings {
		if strings.Contains(f, "would move to lost+found") {
			r.LostFound++
		}
		if strings.Contains(f, "metadata changes in a log") {
			r.Note = "xfs_repair -n finds a dirty log: run 'xfs3 vol replay " + path + "' first, then check again"
		}
	}
	return nil
}

// Lines of xfs_repair's output that report no problem: its phase
// banners, progress lines ("        - agno = 0") and the notes it prints
// for every image file and every -n run.
var repairBanners = []string{"Phase ", "- ", "Cannot get host filesystem geometry", "Repair may fail if there is a sector size mismatch",
	"the image and the host filesystem", "No modify flag set"}

// repairProgress is a progress line another of xfs_repair's threads
// printed into the middle of a finding.
var repairProgress = regexp.MustCompile(`\s+- agno = \d+`)

// repairFindings are the lines of xfs_repair output that report
// problems, trimmed, each once, in order.
func repairFindings(out string) []string {
	findings := []string{}
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(repairProgress.ReplaceAllString(line, ""))
		banner := l == ""
		for _, b := range repairBanners {
			banner = banner || strings.HasPrefix(l, b)
		}
		if banner || seen[l] {
			continue
		}
		seen[l] = true
		findings = append(findings, l)
	}
	return findings
}

// naming are the findings that name inode ino ("inode 131", "dir ino
// 131", "directory 131").
func naming(findings []string, ino uint64) []string {
	num := regexp.MustCompile(`\b(inode|ino|directory) ` + strconv.FormatUint(ino, 10) + `([^0-9]|$)`)
	var out []string
	for _, f := range findings {
		if num.MatchString(f) {
			out = append(out, f)
		}
	}
	return out
}

func printCheckText(e *env, rep checkReport) {
	w, c := e.stdout, rep.Counts
	fmt.Fprintf(w, "%s: checked %d AG header sectors, %d metadata blocks, %d inodes", rep.Volume, c.AGHeaders, c.Blocks, c.Inodes)
	if rep.Objects {
		fmt.Fprintf(w, ", %d objects (%s)", c.Objects, humanSize(uint64(c.Bytes)))
	}
	fmt.Fprintln(w)
	if c.Errors > 0 {
		fmt.Fprintf(w, "%d objects could not be read (their metadata is damaged)\n", c.Errors)
	}
	if rep.StoreError != "" {
		fmt.Fprintf(w, "the store could not open the volume (%s): its metadata was checked without it, so the places of inodes are not known", rep.StoreError)
		if rep.Objects {
			fmt.Fprint(w, ", and objects were not read")
		}
		fmt.Fprintln(w)
	}
	for _, s := range rep.Sick {
		fmt.Fprintf(w, "\nsick: %s\n", s.Describe)
		if s.Path != "" {
			fmt.Fprintf(w, "  path:   %s\n", s.Path)
		}
		fmt.Fprintf(w, "  where:  %s\n", s.Where)
		fmt.Fprintf(w, "  repair: %s\n", s.Repair)
		for _, f := range s.Findings {
			fmt.Fprintf(w, "  xfs_repair -n: %s\n", f)
		}
	}
	for _, o := range rep.Rotten {
		fmt.Fprintf(w, "\nrotten: bucket %q key %q version %q: %s\n  repair: %s\n", o.Bucket, o.Key, o.VersionID, o.Reason, o.Repair)
	}
	if len(rep.Sick) > 0 {
		fmt.Fprintln(w, "\nxfs_repair does that when the damage reaches a structure's contents; a block whose checksum alone is wrong it rewrites and keeps.")
	}
	fmt.Fprintln(w)
	r := rep.Repair
	switch {
	case !r.Ran:
		fmt.Fprintf(w, "xfs_repair -n: not run: %s\n", r.Note)
	case len(r.Findings) == 0:
		fmt.Fprintf(w, "%s: exit status %d, no findings\n", r.Command, r.ExitStatus)
	default:
		fmt.Fprintf(w, "%s: exit status %d", r.Command, r.ExitStatus)
		if r.LostFound > 0 {
			fmt.Fprintf(w, ", %d inodes would move to /lost+found", r.LostFound)
		}
		fmt.Fprintln(w, "; its findings:")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %s\n", f)
		}
		if r.Note != "" {
			fmt.Fprintln(w, r.Note)
		}
	}
	if len(rep.Sick) == 0 && len(rep.Rotten) == 0 && c.Errors == 0 && (!r.Ran || r.ExitStatus == 0) {
		fmt.Fprintln(w, "no damage found")
	}
}
