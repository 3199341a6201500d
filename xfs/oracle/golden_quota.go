package oracle

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// QuotaGolden names the project quota golden image:
// testdata/golden/prjquota.img.zst, a 64 MiB mkfs.xfs default volume whose
// quotas the user-mode Linux kernel set up and used (QuotaGoldenScript),
// and testdata/golden/prjquota.txt, what xfs_db and the kernel said of it:
// the expected values for the quota codec's tests.
const QuotaGolden = "prjquota"

// QuotaGoldenIDs are the project IDs whose dquots prjquota.txt records.
// ID 1 is an unused slot of an allocated quota block; ID 60 would be in
// quota file block 2, a hole. See QuotaGoldenScript for the others.
var QuotaGoldenIDs = []uint32{0, 1, 5, 7, 9, 11, 42, 60, 100, 70000}

// QuotaGoldenScript is the script the user-mode Linux kernel runs on a
// fresh image to make the quota golden image. Projects (limits as given
// to xfs_quota; blocks of 4 KiB):
//
//	ID 0     grace periods 3 days (blocks) and 2 days (inodes)
//	ID 5     bhard=2m; an empty directory
//	ID 7     bsoft=64k bhard=1m isoft=2 ihard=100; 268 KiB in 5 inodes:
//	         over both soft limits, so both timers run
//	ID 9     no limits; 12 KiB in 4 inodes (a subdirectory)
//	ID 11    bhard=512k ihard=5; no files: a dquot made by the limit alone
//	ID 42    bhard=1m ihard=10; 512 KiB in 2 inodes
//	ID 100   bsoft=4m bhard=8m isoft=50 ihard=60; 1 MiB in 2 inodes;
//	         quota file block 3 (block 2 is a hole)
//	ID 70000 bhard=100m; 4 KiB in 2 inodes; needs di_projid_hi and
//	         quota file block 2333
//
// Every project but 11 is a directory p<ID> made with "project -s"
// (PROJINHERIT). The script prints, for prjquota.txt, the kernel's report,
// the quota state and every inode with its project.
const QuotaGoldenScript = `
mount -o prjquota "$DEV" "$MNT"
q() { xfs_quota -x -c "$1" "$MNT"; }
q 'timer -p -b 3d'
q 'timer -p -i 2d'
for id in 5 7 9 42 100 70000; do
	mkdir "$MNT/p$id"
	q "project -s -p $MNT/p$id $id" >/dev/null
done
q 'limit -p bhard=2m 5'
q 'limit -p bsoft=64k bhard=1m isoft=2 ihard=100 7'
q 'limit -p bhard=512k ihard=5 11'
q 'limit -p bhard=1m ihard=10 42'
q 'limit -p bsoft=4m bhard=8m isoft=50 ihard=60 100'
q 'limit -p bhard=100m 70000'
head -c 262144 /dev/zero >"$MNT/p7/a"
for i in 1 2 3; do echo "$i" >"$MNT/p7/s$i"; done
head -c 524288 /dev/zero >"$MNT/p42/f"
head -c 8192 /dev/zero >"$MNT/p9/f"
mkdir "$MNT/p9/sub"
echo y >"$MNT/p9/sub/y"
head -c 1048576 /dev/zero >"$MNT/p100/f"
head -c 4096 /dev/zero >"$MNT/p70000/f"
# Block timers start when delayed allocations are written back, not at
# write(2): sync so that the report shows what goes to disk.
sync
# The mount point is a temporary path: print it as $MNT.
echo "== kernel: xfs_quota report -p -b -i -n"
q 'report -p -b -i -n' | sed "s|$MNT|\$MNT|"
echo "== kernel: xfs_quota state -p"
q 'state -p' | sed "s|$MNT|\$MNT|"
echo "== kernel: inode path"
(cd "$MNT" && find . -printf '%i %P\n' | sort -k 2)
echo "== kernel: xfs_io lsproj -R"
(cd "$MNT" && xfs_io -r -c 'lsproj -R' . | sort -k 2)
umount "$MNT"
`

// QuotaGoldenPaths returns the paths of the compressed quota golden image
// and of its recorded xfs_db and kernel output.
func QuotaGoldenPaths() (img, text string, err error) {
	dir, err := GoldenDir()
	if err != nil {
		return "", "", err
	}
	return filepath.Join(dir, QuotaGolden+".img.zst"), filepath.Join(dir, QuotaGolden+".txt"), nil
}

// LoadQuotaGolden decompresses the quota golden image into t.TempDir()
// and returns it with its recorded sections (see ReadSections): xfs_db's
// under their commands, such as "dquot -p 42 | print", the kernel's under
// "kernel: ...". QuotaGoldenDquot picks a dquot's fields.
func LoadQuotaGolden(t testing.TB) (img string, sections map[string]string) {
	t.Helper()
	zst, text, err := QuotaGoldenPaths()
	if err != nil {
		t.Fatal(err)
	}
	secs, err := ReadSections(text)
	if err != nil {
		t.Fatalf("%v (regenerate with go test ./xfs/oracle -run TestGenerateQuotaGolden -update)", err)
	}
	m := make(map[string]string, len(secs))
	for _, s := range secs {
		m[s.Name] = s.Text
	}
	return OpenGolden(t, zst), m
}

// QuotaGoldenDquot returns the fields xfs_db printed for the dquot of
// project id in the quota golden image, or nil for an ID without one
// (xfs_db: "no project quota data for id N").
func QuotaGoldenDquot(sections map[string]string, id uint32) map[string]string {
	m := ParseFields(sections[quotaDquotCommand(id)])
	if len(m) == 0 {
		return nil
	}
	return m
}

func quotaDquotCommand(id uint32) string {
	return fmt.Sprintf("dquot -p %d | print", id)
}

// Section is one "== NAME" part of a golden text file.
type Section struct {
	Name string
	Text string // its lines, each ending in a newline
}

// ReadSections reads a golden text file (see ParseSections).
func ReadSections(path string) ([]Section, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	secs, err := ParseSections(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return secs, nil
}

// ParseSections splits a golden text file or a script's output into
// sections: lines starting with '#' before the first section are
// comments, "== NAME" starts a section, and every other line belongs to
// the current one.
func ParseSections(text string) ([]Section, error) {
	var secs []Section
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		if name, ok := strings.CutPrefix(line, "== "); ok {
			secs = append(secs, Section{Name: strings.TrimSpace(name)})
			continue
		}
		if len(secs) == 0 {
			if strings.HasPrefix(line, "#") {
				continue
			}
			return nil, fmt.Errorf("text before the first section: %q", line)
		}
		secs[len(secs)-1].Text += line
	}
	if len(secs) == 0 {
		return nil, fmt.Errorf("no sections")
	}
	return secs, nil
}

// WriteSections writes a golden text file that ReadSections reads back:
// the header lines (each prefixed with "# "), then the sections.
func WriteSections(path string, header []string, secs []Section) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, h := range header {
		fmt.Fprintf(w, "# %s\n", h)
	}
	for _, s := range secs {
		text := s.Text
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		fmt.Fprintf(w, "== %s\n%s", s.Name, text)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// QuotaDBSections runs xfs_db (TZ=UTC, so bigtime timers print as UTC
// dates) once per section of the quota golden's record: the superblock's
// quota fields, the project quota inode and its block map, the dquots of
// QuotaGoldenIDs, and the project fields of each inode in inos. A
// section's name is its commands joined by " | ".
func QuotaDBSections(t testing.TB, img string, inos []uint64) []Section {
	t.Helper()
	Require(t, ToolDB)
	sb := Section{Name: "sb 0 | print qflags versionnum pquotino uquotino gquotino"}
	sb.Text = dbUTC(t, img, strings.Split(sb.Name, " | ")...)
	pquotino, err := strconv.ParseUint(ParseFields(sb.Text)["pquotino"], 10, 64)
	if err != nil {
		t.Fatalf("no project quota inode in %s:\n%s", img, sb.Text)
	}
	names := []string{
		fmt.Sprintf("inode %d | print core.mode core.format core.nblocks core.nextents core.size core.uid core.gid core.projid_lo core.projid_hi core.flags | bmap", pquotino),
	}
	for _, id := range QuotaGoldenIDs {
		if id == 60 {
			names = append(names, fmt.Sprintf("dquot -p %d", id)) // a hole: xfs_db prints nothing more
			continue
		}
		names = append(names, quotaDquotCommand(id))
	}
	for _, ino := range inos {
		names = append(names, fmt.Sprintf("inode %d | print core.mode core.nblocks core.projid_lo core.projid_hi core.flags", ino))
	}
	secs := []Section{sb}
	for _, name := range names {
		secs = append(secs, Section{Name: name, Text: dbUTC(t, img, strings.Split(name, " | ")...)})
	}
	return secs
}

// dbUTC runs xfs_db read-only with TZ=UTC.
func dbUTC(t testing.TB, img string, cmds ...string) string {
	t.Helper()
	args := []string{"-r"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := run(ToolDB, []string{"TZ=UTC"}, append(args, img)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// quotaGoldenInodes returns the inode numbers of the kernel's
// "inode path" section, sorted.
func quotaGoldenInodes(kernelInodes string) ([]uint64, error) {
	var inos []uint64
	for _, line := range strings.Split(strings.TrimSpace(kernelInodes), "\n") {
		f, _, _ := strings.Cut(line, " ")
		ino, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("inode listing line %q: %v", line, err)
		}
		inos = append(inos, ino)
	}
	sort.Slice(inos, func(i, j int) bool { return inos[i] < inos[j] })
	return inos, nil
}
