package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

const volUsage = `Usage: xfs3 vol <command> [flags] VOLUME [arguments]

Tools for a volume file, in the spirit of mtools: they read and change the
XFS filesystem with xfs3's own engine and never mount it. PATH arguments
are slash-separated paths inside the volume, relative to its root ("/" and
"" both name the root); symlinks in the middle of a PATH are followed.

Commands that only read (they open the volume read-only):
  ls        list a directory or file
  get       copy a file out of the volume
  stat      show an inode's attributes
  getfattr  dump extended attributes like 'getfattr -d -m -'
  lsattr    show inode flags (immutable, ...) like lsattr(1)
  df        show space and inode usage
  check     scrub the metadata, run xfs_repair -n, and say what xfs_repair
            would do to each damaged structure and its objects

Commands that change the volume:
  put       copy host files and directories in, like cp -r
  mkdir     make directories, like mkdir(1)
  rm        remove files and directories, like rm(1)
  mv        rename or move, like mv(1)
  ln        make symbolic and hard links, like ln(1)
  setfattr  set an extended attribute, like setfattr -n NAME -v VALUE
  rmfattr   remove an extended attribute, like setfattr -x NAME
  chattr    set or clear a file's immutable flag, like chattr +i / -i
  replay    replay a dirty metadata log (after a crash) and mark it clean

Bucket quotas (ls and get read, set and clear change the volume):
  quota     show and set buckets' limits and usage ('xfs3 vol quota -h')

Bucket versions (read objects by bucket and key, not by PATH):
  versions     list the versions and delete markers of a bucket's keys
  get-version  copy one version of a key out, by its version ID
They open the volume file read-only and run the store over it with the
store's own bookkeeping kept in memory, so they change nothing; they need
a stopped volume (no server running).

A command that changes the volume opens it for writing, which only one
process at a time may do (another writer, such as a running server, makes
it fail at once), and refuses a volume file without write permission
(chmod a-w), even for root. Every change is one transaction; when the
command ends the volume is closed and everything it did is on disk. They
print nothing on success (put -v lists what it writes).

Run 'xfs3 vol <command> -h' (df: --help) or 'xfs3 vol help <command>' for
the usage of each command. Flags may come before or after the positional
arguments; "--" ends the flags.
`

// volCommand is one "xfs3 vol" subcommand.
type volCommand struct {
	usage string
	run   func(args []string, e *env) error
}

var volCommands map[string]volCommand

func init() {
	volCommands = map[string]volCommand{
		"ls":       {lsUsage, volLs},
		"get":      {getUsage, volGet},
		"stat":     {statUsage, volStat},
		"getfattr": {getfattrUsage, volGetfattr},
		"lsattr":   {lsattrUsage, volLsattr},
		"df":       {dfUsage, volDf},
		"check":    {checkUsage, volCheck},
		"put":      {putUsage, volPut},
		"mkdir":    {mkdirUsage, volMkdir},
		"rm":       {rmUsage, volRm},
		"mv":       {mvUsage, volMv},
		"ln":       {lnUsage, volLn},
		"setfattr": {setfattrUsage, volSetfattr},
		"rmfattr":  {rmfattrUsage, volRmfattr},
		"chattr":   {chattrUsage, volChattr},
		"replay":   {replayUsage, volReplay},

		"versions":    {versionsUsage, volVersions},
		"get-version": {getVersionUsage, volGetVersion},
	}
}

func runVol(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, "xfs3: vol: missing command\n\n", volUsage)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(e.stdout, volUsage)
		return exitOK
	case "help":
		return volHelp(rest, e)
	case "quota":
		return runQuotaTarget(volQuotaTarget, rest, e)
	case "check":
		return runVolCheck(rest, e) // exit status 2, not 1, on an error
	}
	c, ok := volCommands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "xfs3: vol: unknown command %q\n\n", name)
		fmt.Fprint(e.stderr, volUsage)
		return exitUsage
	}
	return finish(c.run(rest, e), "vol "+name, c.usage, e)
}

// volHelp implements "xfs3 vol help [command]".
func volHelp(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stdout, volUsage)
		return exitOK
	}
	if args[0] == "quota" {
		fmt.Fprint(e.stdout, volQuotaUsage)
		return exitOK
	}
	c, ok := volCommands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "xfs3: vol help: unknown command %q\n\n", args[0])
		fmt.Fprint(e.stderr, volUsage)
		return exitUsage
	}
	fmt.Fprint(e.stdout, c.usage)
	return exitOK
}

// openVolume opens a volume file read-only.
func openVolume(path string) (*xfs.Volume, error) {
	if path == "" {
		return nil, usagef("empty VOLUME path")
	}
	return xfs.Open(path, xfs.Options{ReadOnly: true})
}

// lookup resolves path inside the volume; follow says whether a final
// symlink is followed. Errors name the volume and the path.
func lookup(v *xfs.Volume, volPath, path string, follow bool) (format.Ino, xfs.Stat, error) {
	ino, err := v.Names().LookupPath(path, follow)
	if err != nil {
		return 0, xfs.Stat{}, fmt.Errorf("%s: %w", volPath, err)
	}
	st, err := v.Stat(ino)
	if err != nil {
		return 0, xfs.Stat{}, fmt.Errorf("%s: %s: %w", volPath, displayName(path), err)
	}
	return ino, st, nil
}

// openAt opens a volume read-only and resolves path inside it, as
// lookup does. The caller closes the volume.
func openAt(volPath, path string, follow bool) (*xfs.Volume, format.Ino, xfs.Stat, error) {
	v, err := openVolume(volPath)
	if err != nil {
		return nil, 0, xfs.Stat{}, err
	}
	ino, st, err := lookup(v, volPath, path, follow)
	if err != nil {
		v.Close()
		return nil, 0, xfs.Stat{}, err
	}
	return v, ino, st, nil
}

// needsQuote reports whether a name is printed Go-quoted: when it holds a
// control character (bytes 0x00-0x1f and 0x7f), which could break
// line-oriented output, or starts with a double quote, which would make it
// look quoted.
func needsQuote(s string) bool {
	if strings.HasPrefix(s, `"`) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// displayName returns a name as the listing commands print it: raw bytes,
// or Go-quoted (strconv.Quote) when needsQuote says so.
func displayName(s string) string {
	if needsQuote(s) {
		return strconv.Quote(s)
	}
	return s
}

// modeString renders a mode like ls -l: type character then rwx triplets
// with setuid, setgid and sticky shown as s/S and t/T.
func modeString(mode uint32) string {
	var b [10]byte
	switch mode & format.SIFMT {
	case format.SIFREG:
		b[0] = '-'
	case format.SIFDIR:
		b[0] = 'd'
	case format.SIFLNK:
		b[0] = 'l'
	case format.SIFCHR:
		b[0] = 'c'
	case format.SIFBLK:
		b[0] = 'b'
	case format.SIFIFO:
		b[0] = 'p'
	case format.SIFSOCK:
		b[0] = 's'
	default:
		b[0] = '?'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) != 0 {
			b[1+i] = rwx[i]
		} else {
			b[1+i] = '-'
		}
	}
	special := func(pos int, bit uint32, set, unset byte) {
		if mode&bit == 0 {
			return
		}
		if b[pos] == '-' {
			b[pos] = unset
		} else {
			b[pos] = set
		}
	}
	special(3, 0o4000, 's', 'S')
	special(6, 0o2000, 's', 'S')
	special(9, 0o1000, 't', 'T')
	return string(b[:])
}

// typeName names the file type of a mode.
func typeName(mode uint32) string { return format.FileType(uint16(mode)) }

// nargs counts positional arguments for usage messages.
func nargs(n int) string {
	if n == 1 {
		return "1 argument"
	}
	return fmt.Sprintf("%d arguments", n)
}
