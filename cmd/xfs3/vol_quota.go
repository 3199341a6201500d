package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
)

const volQuotaUsage = `Usage: xfs3 vol quota <command> [flags] VOLUME [arguments]

Bucket quotas of a stopped volume: the commands, flags and output of
'xfs3 quota' (which drives a running server; 'xfs3 quota -h' describes
them), on the volume file itself.

Commands:
  ls VOLUME                  every bucket's usage and limits, and the grace periods
  get VOLUME BUCKET          one bucket's
  set VOLUME BUCKET LIMITS   change some limits of BUCKET (the others stay)
  set VOLUME GRACE           change the grace periods
  clear VOLUME BUCKET        remove every limit of BUCKET

LIMITS: --hard-bytes SIZE, --soft-bytes SIZE, --hard-objects N,
--soft-objects N (0 removes one). GRACE: --bytes-grace D, --objects-grace D
(7d, 36h, 1h30m). Output: a table, or --json; --bytes for exact byte
counts.

ls and get open the volume read-only. A volume whose quota counts are not
kept yet (made before quotas, and not served since) has none to show: set,
clear or one start of 'xfs3 serve' turns quota on. set and clear open the
volume for writing as 'xfs3 serve' does (one writer at a time: not while a
server runs), charging every bucket to its own project first, and close it
cleanly. Limits set here are what xfs_quota and a quota-enabled kernel see
for the bucket's project, and the other way round.
`

// volQuotaTarget is "xfs3 vol quota": the quota verbs on a volume file.
var volQuotaTarget = quotaTarget{
	name:  "vol quota",
	usage: volQuotaUsage,
	flags: func(*flag.FlagSet) {},
	open: func(pos []string, write bool) (quotaFace, []string, error) {
		if len(pos) == 0 {
			return nil, nil, usagef("missing VOLUME")
		}
		f, err := openVolumeFace(pos[0], write)
		return f, pos[1:], err
	},
}

// volumeFace is a stopped volume: read-only (v), or opened for writing
// with a store over it (st).
type volumeFace struct {
	path string
	v    *xfs.Volume
	st   *store.Store
}

func openVolumeFace(path string, write bool) (*volumeFace, error) {
	if !write {
		v, err := openVolume(path)
		if err != nil {
			return nil, err
		}
		return &volumeFace{path: path, v: v}, nil
	}
	v, err := openVolumeRW(path)
	if err != nil {
		return nil, err
	}
	st, err := store.New(v)
	if err != nil {
		v.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &volumeFace{path: path, v: v, st: st}, nil
}

func (f *volumeFace) report(bucket string) (admin.QuotaReport, error) {
	us, g, err := store.ReadQuotas(f.v)
	if errors.Is(err, xfs.ErrUnsupported) {
		return admin.QuotaReport{}, fmt.Errorf("%s: %w (set, clear or a start of xfs3 serve turns it on)", f.path, err)
	}
	if err != nil {
		return admin.QuotaReport{}, fmt.Errorf("%s: %w", f.path, err)
	}
	r, err := admin.ReportOf(us, g, bucket)
	if err != nil {
		return r, fmt.Errorf("%s: %w", f.path, err)
	}
	return r, nil
}

func (f *volumeFace) setLimits(bucket string, l admin.Limits) (admin.BucketQuota, error) {
	q, err := admin.UpdateQuota(f.st, bucket, l)
	if err != nil {
		return q, fmt.Errorf("%s: %w", f.path, err)
	}
	return q, nil
}

func (f *volumeFace) setGrace(g admin.Grace) (admin.Grace, error) {
	g, err := admin.SetGrace(f.st, g)
	if err != nil {
		return g, fmt.Errorf("%s: %w", f.path, err)
	}
	return g, nil
}

// close closes the store, then the volume: everything done is on disk.
func (f *volumeFace) close() error {
	var err error
	if f.st != nil {
		err = f.st.Close()
	}
	if cerr := f.v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: close: %w", f.path, err)
	}
	return nil
}
