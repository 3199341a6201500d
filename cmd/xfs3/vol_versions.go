package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/xfs3/xfs3/store"
)

const versionsUsage = `Usage: xfs3 vol versions [--exact] [--json] VOLUME BUCKET [PREFIX]

List the versions and delete markers of the keys of BUCKET in VOLUME (a
stopped volume: not while a server runs), as S3's ListObjectVersions
lists them: keys in byte order, each key's versions newest first, the
whole listing (page after page). With PREFIX only the keys that start
with it; with --exact only the key PREFIX itself. A bucket that never had
versioning lists each object once, as its null version ("null").

The volume file is opened read-only and never written: the store is
opened over it with its own bookkeeping (and a dirty log's replay, after a
crash) kept in memory.

Output is a header line, then one line per version:
  VERSION-ID LATEST MARKER SIZE LAST-MODIFIED ETAG KEY
LATEST is "yes" for the key's latest version, MARKER "yes" for a delete
marker (its SIZE and ETAG are "-"); SIZE is in bytes, LAST-MODIFIED RFC
3339 UTC with nanoseconds, ETAG as S3 gives it without quotes. The first
six columns are padded to fixed minimum widths (26, 6, 6, 12, 30 and 32),
separated by one space; KEY is everything after the space that follows
ETAG, printed raw, or Go-quoted when it holds a control character or
starts with a double quote. 'xfs3 vol get-version' reads a version out.

Flags:
  --exact  PREFIX is a whole key: list only its versions
  --json   print one JSON object per version and line instead, with the
           fields key, version_id, is_latest, delete_marker, size,
           last_modified and etag (no header)
  -h       show this help
`

// versionsPageSize is how many versions one listing call returns (tests
// lower it to go through many pages).
var versionsPageSize = 1000

// versionJSON is the --json form of one version; field names are part of
// the interface.
type versionJSON struct {
	Key          string `json:"key"`
	VersionID    string `json:"version_id"`
	IsLatest     bool   `json:"is_latest"`
	DeleteMarker bool   `json:"delete_marker"`
	Size         int64  `json:"size"`
	LastModified string `json:"last_modified"`
	ETag         string `json:"etag"`
}

func volVersions(args []string, e *env) error {
	fs := newFlags("vol versions")
	exact := fs.Bool("exact", false, "PREFIX is a whole key")
	asJSON := fs.Bool("json", false, "JSON output")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || len(pos) > 3 {
		return usagef("want VOLUME BUCKET [PREFIX], got %s", nargs(len(pos)))
	}
	prefix := ""
	if len(pos) == 3 {
		prefix = pos[2]
	}
	if *exact && prefix == "" {
		return usagef("--exact needs a KEY (the PREFIX argument)")
	}
	vol, bucket := pos[0], pos[1]
	s, err := openVolumeStore(vol)
	if err != nil {
		return err
	}
	err = listVersions(s.st, bucket, prefix, *exact, func(v store.ObjectInfo) error {
		if *asJSON {
			return printVersionJSON(e, v)
		}
		printVersionLine(e, v)
		return nil
	}, func() {
		if !*asJSON {
			fmt.Fprintf(e.stdout, "%-26s %-6s %-6s %12s %-30s %-32s %s\n",
				"VERSION-ID", "LATEST", "MARKER", "SIZE", "LAST-MODIFIED", "ETAG", "KEY")
		}
	})
	if err != nil {
		err = fmt.Errorf("%s: %w", vol, err)
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	return err
}

// listVersions pages through the versions of the bucket's keys that
// start with prefix (with exact, of the key prefix), calling header once
// first and then each for every version, in listing order.
func listVersions(s *store.Store, bucket, prefix string, exact bool, each func(store.ObjectInfo) error, header func()) error {
	opt := store.VersionListOptions{Prefix: prefix, MaxKeys: versionsPageSize}
	first := true
	for {
		page, err := s.Versions().List(bucket, opt)
		if err != nil {
			return err
		}
		if first {
			header()
			first = false
		}
		for _, v := range page.Versions {
			if exact && v.Key != prefix {
				// The key sorts before every longer key it begins.
				return nil
			}
			if err := each(v); err != nil {
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
		if page.NextKeyMarker == opt.KeyMarker && page.NextVersionIDMarker == opt.VersionIDMarker {
			return fmt.Errorf("listing does not advance past key %q version %s", opt.KeyMarker, opt.VersionIDMarker)
		}
		opt.KeyMarker, opt.VersionIDMarker = page.NextKeyMarker, page.NextVersionIDMarker
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// printVersionLine prints one version in the text format.
func printVersionLine(e *env, v store.ObjectInfo) {
	size, etag := strconv.FormatInt(v.Size, 10), v.ETag
	if v.DeleteMarker {
		size, etag = "-", "-"
	}
	if etag == "" {
		etag = "-"
	}
	fmt.Fprintf(e.stdout, "%-26s %-6s %-6s %12s %-30s %-32s %s\n", displayName(v.VersionID), yesNo(v.IsLatest),
		yesNo(v.DeleteMarker), size, formatTime(v.LastModified), displayName(etag), displayName(v.Key))
}

// printVersionJSON prints one version as a line of JSON.
func printVersionJSON(e *env, v store.ObjectInfo) error {
	b, err := json.Marshal(versionJSON{Key: v.Key, VersionID: v.VersionID, IsLatest: v.IsLatest,
		DeleteMarker: v.DeleteMarker, Size: v.Size, LastModified: formatTime(v.LastModified), ETag: v.ETag})
	if err != nil {
		return err
	}
	e.stdout.Write(b)
	return e.stdout.WriteByte('\n')
}
