package oracle

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Well-known paths of a populated fixture (relative to its root).
const (
	FixtureBtreeFile  = "files/btree"    // data fork in B+tree format
	FixtureSparseFile = "files/sparse"   // holes at start, middle and end
	FixturePrealloc   = "files/prealloc" // unwritten extents
	FixtureRandomFile = "files/random"   // random bytes
	FixtureLongLink   = "links/long"     // 1023-byte target, the XFS maximum
	FixtureHardLink   = "hard/a/file"    // one of three names of an inode
	FixtureDeepFile   = "deep/d01/d02/d03/d04/d05/d06/d07/d08/d09/d10/d11/d12/d13/d14/d15/d16/d17/d18/d19/d20/file"
	FixtureXattrSF    = "xattr/sf"     // short-form attribute fork
	FixtureXattrLeaf  = "xattr/leaf"   // leaf attribute block (with 4 KiB blocks)
	FixtureXattrNode  = "xattr/node"   // node-form attribute fork
	FixtureXattrLocal = "xattr/local"  // 3000-byte value
	FixtureXattrRmt   = "xattr/remote" // remote values
)

// farOffset is where files/sparse-far has its only data.
const farOffset = 256<<20 + 123

// fallocate(2) modes, not defined by package syscall.
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
	fallocZeroRange = 0x10
)

// FixtureDir returns the path of the directory with n entries.
func FixtureDir(n int) string { return fmt.Sprintf("dirs/n%d", n) }

// Populate writes the fixture content described by spec under root, which
// should be the root of a freshly made filesystem. Everything derives from
// spec.Seed, so the same spec always produces the same names, contents,
// modes and xattrs. Writing trusted.* and security.* xattrs, chown and
// mknod need root. The layout is:
//
//	dirs/n<N>/       N entries of varied names (1 to ~250 bytes, some
//	                 non-ASCII): files with 0..MaxFileSize random bytes,
//	                 every 50th a symlink, every 50th an empty directory
//	files/empty, files/small, files/random (RandomFileSize random bytes)
//	files/btree      BtreeExtents 4 KiB pieces separated by 4 KiB holes
//	files/sparse     data at 1 MiB and ~2 MiB, size 4 MiB
//	files/sparse-far 9 bytes at offset 256 MiB+123 (past the end of Small)
//	files/prealloc   448 KiB: written data with a zeroed (unwritten)
//	                 range, a preallocated hole, a preallocated tail
//	                 inside EOF and 256 KiB preallocated beyond EOF
//	files/mode0600, mode0755, mode4755, mode2755, mode6777
//	files/owned      uid 1234, gid 5678
//	files/<unicode name>
//	special/fifo, special/null (character device 1:3)
//	links/short, links/medium (400-byte target), links/long (1023
//	                 bytes), links/dangling, links/owned, links/xattr
//	hard/a/file, hard/b/link, hard/c/link: one inode with three names
//	empty/           an empty directory
//	deep/d01/.../d20/file
//	modes/sticky (01777), modes/setgid (02775), modes/private (0700)
//	xattr/sf         two small user xattrs
//	xattr/leaf       LeafXattrs xattrs, one with a 255-byte name
//	xattr/node       NodeXattrs xattrs
//	xattr/local      a 3000-byte value
//	xattr/remote     values of RemoteXattrSizes bytes
//	xattr/ns         trusted.*, security.* and an empty user value
//	xattr/dir/       a directory with xattrs, holding one file
//
// XFS refuses symlink targets of 1024 bytes or more, so there is none.
func Populate(root string, spec FixtureSpec) error {
	b := &builder{root: root, rng: rand.New(rand.NewSource(spec.Seed))}
	b.dirs(spec)
	b.files(spec)
	b.links()
	b.tree()
	b.xattrs(spec)
	return b.err
}

// builder writes fixture content, keeping the first error.
type builder struct {
	root string
	rng  *rand.Rand
	err  error
}

func (b *builder) path(rel string) string { return filepath.Join(b.root, filepath.FromSlash(rel)) }

func (b *builder) fail(op, rel string, err error) {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("%s %s: %w", op, rel, err)
	}
}

func (b *builder) mkdir(rel string, mode uint32) {
	if b.err != nil {
		return
	}
	b.fail("mkdir", rel, os.Mkdir(b.path(rel), 0o755))
	b.chmod(rel, mode)
}

func (b *builder) write(rel string, data []byte, mode uint32) {
	if b.err != nil {
		return
	}
	b.fail("write", rel, os.WriteFile(b.path(rel), data, 0o644))
	b.chmod(rel, mode)
}

// chmod sets mode exactly, umask notwithstanding.
func (b *builder) chmod(rel string, mode uint32) {
	if b.err != nil {
		return
	}
	b.fail("chmod", rel, syscall.Chmod(b.path(rel), mode))
}

func (b *builder) symlink(target, rel string) {
	if b.err != nil {
		return
	}
	b.fail("symlink", rel, os.Symlink(target, b.path(rel)))
}

func (b *builder) setxattr(rel, name string, value []byte) {
	if b.err != nil {
		return
	}
	b.fail("setxattr "+name, rel, lsetxattr(b.path(rel), name, value, 0))
}

// random returns n random bytes.
func (b *builder) random(n int) []byte {
	p := make([]byte, n)
	b.rng.Read(p)
	return p
}

// letters returns n random printable ASCII characters, so that values stay
// valid UTF-8 and survive JSON.
func (b *builder) letters(n int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+=.,"
	p := make([]byte, n)
	for i := range p {
		p[i] = alphabet[b.rng.Intn(len(alphabet))]
	}
	return p
}

// pattern returns n bytes of compressible but position-dependent text.
func pattern(tag string, off int64, n int) []byte {
	// Appended by hand, not with fmt, which took a quarter of
	// TestReadKernelFixtures' CPU under the race detector. off >= 0.
	b := make([]byte, 0, n+len(tag)+32)
	var num []byte
	for len(b) < n {
		num = strconv.AppendInt(num[:0], off+int64(len(b)), 10)
		b = append(b, tag...)
		b = append(b, ' ')
		for pad := len(num); pad < 12; pad++ {
			b = append(b, '0')
		}
		b = append(b, num...)
		b = append(b, '\n')
	}
	return b[:n]
}

var (
	asciiRunes = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_. ")
	otherRunes = []rune("äöüßéñøжλ日本語한😀🦀")
)

// name returns the i-th entry name of a directory: the suffix "-i" keeps
// names unique; long names have 200 to 250 bytes.
func (b *builder) name(i int, long, unicode bool) string {
	n := 1 + b.rng.Intn(20)
	if long {
		n = 200 + b.rng.Intn(40)
	}
	var sb strings.Builder
	for sb.Len() < n {
		if unicode && b.rng.Intn(3) == 0 {
			sb.WriteRune(otherRunes[b.rng.Intn(len(otherRunes))])
		} else {
			sb.WriteRune(asciiRunes[b.rng.Intn(len(asciiRunes))])
		}
	}
	return fmt.Sprintf("%s-%d", sb.String(), i)
}

// dirs makes dirs/n<N> for every N in spec.DirSizes.
func (b *builder) dirs(spec FixtureSpec) {
	b.mkdir("dirs", 0o755)
	for _, n := range spec.DirSizes {
		dir := FixtureDir(n)
		b.mkdir(dir, 0o755)
		for i := 0; i < n && b.err == nil; i++ {
			var long bool
			switch {
			case n <= 10:
			case n <= 100: // stay in block form with 4 KiB directory blocks
				long = i == n/4 || i == 3*n/4
			default:
				long = b.rng.Intn(25) == 0
			}
			unicode := i == 1 || b.rng.Intn(6) == 0
			rel := dir + "/" + b.name(i, long, unicode)
			switch i % 50 {
			case 48:
				b.symlink(fmt.Sprintf("../target-%d", i), rel)
			case 49:
				b.mkdir(rel, 0o755)
			default:
				b.write(rel, b.random(b.rng.Intn(spec.MaxFileSize+1)), 0o644)
			}
		}
	}
}

// files makes files/ and special/.
func (b *builder) files(spec FixtureSpec) {
	b.mkdir("files", 0o755)
	b.write("files/empty", nil, 0o644)
	b.write("files/small", []byte("hello, xfs3\n"), 0o644)
	b.write(FixtureRandomFile, b.random(spec.RandomFileSize), 0o644)
	for _, m := range []uint32{0o600, 0o755, 0o4755, 0o2755, 0o6777} {
		b.write(fmt.Sprintf("files/mode%04o", m), []byte(fmt.Sprintf("mode %#o\n", m)), m)
	}
	b.write("files/owned", []byte("owned by 1234:5678\n"), 0o640)
	if b.err == nil {
		b.fail("chown", "files/owned", os.Chown(b.path("files/owned"), 1234, 5678))
	}
	b.write("files/ünïcødé-日本語-😀", []byte("unicode\n"), 0o644)
	b.btreeFile(FixtureBtreeFile, spec.BtreeExtents)
	b.sparseFiles()
	b.preallocFile()

	b.mkdir("special", 0o755)
	if b.err == nil {
		b.fail("mkfifo", "special/fifo", syscall.Mkfifo(b.path("special/fifo"), 0o644))
		b.fail("mknod", "special/null", syscall.Mknod(b.path("special/null"), syscall.S_IFCHR|0o666, 1<<8|3))
	}
}

// open opens rel for writing, creating it.
func (b *builder) open(rel string) *os.File {
	if b.err != nil {
		return nil
	}
	f, err := os.OpenFile(b.path(rel), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	b.fail("create", rel, err)
	return f
}

func (b *builder) fallocate(f *os.File, rel string, mode uint32, off, n int64) {
	if b.err != nil {
		return
	}
	b.fail(fmt.Sprintf("fallocate(%#x, %d, %d)", mode, off, n), rel, syscall.Fallocate(int(f.Fd()), mode, off, n))
}

func (b *builder) pwrite(f *os.File, rel string, p []byte, off int64) {
	if b.err != nil {
		return
	}
	_, err := f.WriteAt(p, off)
	b.fail("write", rel, err)
}

func (b *builder) close(f *os.File, rel string) {
	if f == nil {
		return
	}
	b.fail("fsync", rel, f.Sync())
	b.fail("close", rel, f.Close())
}

// btreeFile writes 2*extents pieces of one filesystem block (at least 4 KiB),
// then punches out every second one, leaving extents separate written
// extents, too many to fit in the inode, so the data fork becomes a B+tree.
func (b *builder) btreeFile(rel string, extents int) {
	piece := 4096
	var st syscall.Statfs_t
	if err := syscall.Statfs(b.root, &st); err == nil && int(st.Bsize) > piece {
		piece = int(st.Bsize)
	}
	f := b.open(rel)
	defer b.close(f, rel)
	buf := make([]byte, 0, 256*piece)
	off := int64(0)
	for i := 0; i < 2*extents; i++ {
		buf = append(buf, pattern("btree piece "+fmt.Sprint(i), 0, piece)...)
		if len(buf) == cap(buf) || i == 2*extents-1 {
			b.pwrite(f, rel, buf, off)
			off += int64(len(buf))
			buf = buf[:0]
		}
	}
	if b.err == nil {
		b.fail("fsync", rel, f.Sync())
	}
	for i := 1; i < 2*extents && b.err == nil; i += 2 {
		b.fallocate(f, rel, fallocPunchHole|fallocKeepSize, int64(i*piece), int64(piece))
	}
}

// sparseFiles writes files with holes.
func (b *builder) sparseFiles() {
	rel := FixtureSparseFile
	f := b.open(rel)
	b.pwrite(f, rel, pattern("sparse", 1<<20, 64<<10), 1<<20)
	b.pwrite(f, rel, pattern("sparse", 2<<20+12345, 5000), 2<<20+12345)
	if b.err == nil {
		b.fail("truncate", rel, f.Truncate(4<<20))
	}
	b.close(f, rel)

	rel = "files/sparse-far"
	f = b.open(rel)
	b.pwrite(f, rel, []byte("far away\n"), farOffset)
	b.close(f, rel)
}

// preallocFile writes a file with unwritten extents: preallocated in a
// hole, after the written data inside EOF, beyond EOF, and a zeroed range.
func (b *builder) preallocFile() {
	rel := FixturePrealloc
	f := b.open(rel)
	defer b.close(f, rel)
	b.pwrite(f, rel, pattern("prealloc", 0, 64<<10), 0)
	b.pwrite(f, rel, pattern("prealloc", 128<<10, 64<<10), 128<<10)
	if b.err == nil {
		b.fail("fsync", rel, f.Sync())
	}
	b.fallocate(f, rel, 0, 64<<10, 64<<10)                // the hole between
	b.fallocate(f, rel, 0, 192<<10, 256<<10)              // extends EOF to 448 KiB
	b.fallocate(f, rel, fallocKeepSize, 448<<10, 256<<10) // beyond EOF
	b.fallocate(f, rel, fallocZeroRange, 16<<10, 16<<10)  // zero written data
}

// links makes links/ and hard/.
func (b *builder) links() {
	b.mkdir("links", 0o755)
	b.symlink("../files/small", "links/short")
	b.symlink(b.longTarget(400), "links/medium")
	b.symlink(b.longTarget(1023), FixtureLongLink)
	b.symlink("does/not/exist", "links/dangling")
	b.symlink("../files/owned", "links/owned")
	if b.err == nil {
		b.fail("lchown", "links/owned", os.Lchown(b.path("links/owned"), 1234, 5678))
	}
	b.symlink("../files", "links/xattr")
	b.setxattr("links/xattr", "trusted.symlink", []byte("xattr on a symlink"))

	b.mkdir("hard", 0o755)
	for _, d := range []string{"a", "b", "c"} {
		b.mkdir("hard/"+d, 0o755)
	}
	b.write(FixtureHardLink, []byte("three names\n"), 0o644)
	for _, l := range []string{"hard/b/link", "hard/c/link"} {
		if b.err == nil {
			b.fail("link", l, os.Link(b.path(FixtureHardLink), b.path(l)))
		}
	}
}

// longTarget returns a relative path of exactly n bytes made of directory
// names of up to 200 bytes.
func (b *builder) longTarget(n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		left := n - sb.Len()
		if sb.Len() > 0 {
			sb.WriteByte('/')
			left--
		}
		if left == 0 { // a trailing slash would be the last byte: replace it
			s := sb.String()
			return s[:len(s)-1] + "x"
		}
		sb.Write(b.letters(min(left, 1+b.rng.Intn(200))))
	}
	return sb.String()
}

// tree makes empty/, deep/ and modes/.
func (b *builder) tree() {
	b.mkdir("empty", 0o755)
	p := "deep"
	b.mkdir(p, 0o755)
	for i := 1; i <= 20; i++ {
		p += fmt.Sprintf("/d%02d", i)
		b.mkdir(p, 0o755)
	}
	b.write(p+"/file", []byte("twenty levels down\n"), 0o644)
	b.mkdir("modes", 0o755)
	b.mkdir("modes/sticky", 0o1777)
	b.mkdir("modes/setgid", 0o2775)
	b.mkdir("modes/private", 0o700)
}

// xattrs makes xattr/ with attribute forks of every format.
func (b *builder) xattrs(spec FixtureSpec) {
	b.mkdir("xattr", 0o755)

	b.write(FixtureXattrSF, []byte("short form\n"), 0o644)
	b.setxattr(FixtureXattrSF, "user.a", []byte("1"))
	b.setxattr(FixtureXattrSF, "user.bb", []byte("two"))

	b.write(FixtureXattrLeaf, []byte("leaf\n"), 0o644)
	for i := 0; i < spec.LeafXattrs; i++ {
		b.setxattr(FixtureXattrLeaf, fmt.Sprintf("user.leaf-%03d", i), b.letters(8+b.rng.Intn(16)))
	}
	b.setxattr(FixtureXattrLeaf, "user."+strings.Repeat("n", 250), []byte("longest name"))

	b.write(FixtureXattrNode, []byte("node\n"), 0o644)
	for i := 0; i < spec.NodeXattrs; i++ {
		b.setxattr(FixtureXattrNode, fmt.Sprintf("user.node-%04d", i), b.letters(4+b.rng.Intn(12)))
	}

	b.write(FixtureXattrLocal, []byte("3000-byte value\n"), 0o644)
	b.setxattr(FixtureXattrLocal, "user.small", []byte("small"))
	b.setxattr(FixtureXattrLocal, "user.v3000", b.letters(3000))

	b.write(FixtureXattrRmt, []byte("remote values\n"), 0o644)
	b.setxattr(FixtureXattrRmt, "user.small", []byte("small"))
	for _, n := range spec.RemoteXattrSizes {
		b.setxattr(FixtureXattrRmt, fmt.Sprintf("user.remote-%d", n), b.letters(n))
	}

	b.write("xattr/ns", []byte("namespaces\n"), 0o644)
	b.setxattr("xattr/ns", "user.empty", nil)
	b.setxattr("xattr/ns", "trusted.t", []byte("trusted value"))
	b.setxattr("xattr/ns", "security.s", []byte("security value"))

	b.mkdir("xattr/dir", 0o755)
	b.setxattr("xattr/dir", "user.dir", []byte("on a directory"))
	b.setxattr("xattr/dir", "trusted.dir", []byte("trusted on a directory"))
	b.write("xattr/dir/file", []byte("inside\n"), 0o644)
}
