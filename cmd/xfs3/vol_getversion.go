package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/xfs3/xfs3/store"
)

const getVersionUsage = `Usage: xfs3 vol get-version VOLUME BUCKET KEY VERSION-ID [DEST]

Copy the content of version VERSION-ID of KEY in BUCKET of VOLUME (a
stopped volume: not while a server runs) to DEST, or to standard output
when DEST is absent or "-". VERSION-ID is an ID as 'xfs3 vol versions'
lists it, "null" for the null version (the only version of an object in
a bucket that never had versioning). DEST is created with mode 0644 or
truncated; when DEST is an existing directory the content is written
inside it under KEY's last component. Data is streamed in 1 MiB chunks.

A delete marker has no content: naming one is an error, as is an ID the
key does not have; both exit with status 1 and write nothing. If an error
happens part-way, a DEST this command created is removed; a DEST that
existed before is left truncated or partially written.

The volume file is opened read-only and never written, as by
'xfs3 vol versions'.

Flags:
  -h    show this help
`

func volGetVersion(args []string, e *env) error {
	fs := newFlags("vol get-version")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 4 || len(pos) > 5 {
		return usagef("want VOLUME BUCKET KEY VERSION-ID [DEST], got %s", nargs(len(pos)))
	}
	vol, bucket, key, id := pos[0], pos[1], pos[2], pos[3]
	if id == "" {
		return usagef(`empty VERSION-ID (the null version's ID is "null")`)
	}
	dest := "-"
	if len(pos) == 5 {
		dest = pos[4]
	}
	s, err := openVolumeStore(vol)
	if err != nil {
		return err
	}
	err = getVersion(s.st, bucket, key, id, dest, e)
	if err != nil {
		err = fmt.Errorf("%s: %w", vol, err)
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	return err
}

// getVersion opens the version and copies it to dest ("-": stdout).
func getVersion(s *store.Store, bucket, key, id, dest string, e *env) error {
	o, err := s.Versions().Get(bucket, key, id)
	var me *store.MarkerError
	switch {
	case errors.Is(err, store.ErrNoSuchBucket) || errors.Is(err, store.ErrInvalidBucketName):
		return err // it names the bucket
	case errors.As(err, &me):
		return fmt.Errorf("bucket %s: %w; it has no content", displayName(bucket), err)
	case err != nil:
		return fmt.Errorf("bucket %s: %w", displayName(bucket), err)
	}
	defer o.Close()
	what := fmt.Sprintf("bucket %s: key %s version %s", displayName(bucket), displayName(key), displayName(id))
	if dest == "-" {
		if err := copyVersion(o, e.stdout); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if err := writeDest(dest, key, func(w io.Writer) error { return copyVersion(o, w) }); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// copyVersion streams the object's content to w in getChunk pieces; an
// object that ends before its size is an error.
func copyVersion(o *store.Object, w io.Writer) error {
	n, err := io.CopyBuffer(struct{ io.Writer }{w}, o.Reader(), make([]byte, getChunk))
	if err != nil {
		return err
	}
	if n != o.Info.Size {
		return fmt.Errorf("content ended at byte %d of %d: %w", n, o.Info.Size, io.ErrUnexpectedEOF)
	}
	return nil
}
