package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/s3api/admin"
)

const quotaUsage = `Usage: xfs3 quota <command> [flags] [arguments]

Bucket quotas of a running server, through its admin API (signed as mc
signs). Every bucket is an XFS project; its limits are enforced exactly, at
each write: a write that would pass a hard limit, or a soft limit whose
grace period has run out, is refused with XMinioAdminBucketQuotaExceeded.
For a stopped volume use 'xfs3 vol quota', which has the same commands.

Commands:
  ls                  every bucket's usage and limits, and the grace periods
  get BUCKET          one bucket's
  set BUCKET LIMITS   change some limits of BUCKET (the others stay)
  set GRACE           change the grace periods (the volume's, for every bucket)
  clear BUCKET        remove every limit of BUCKET

LIMITS (0 removes one):
  --hard-bytes SIZE     writes past it are refused
  --soft-bytes SIZE     may be passed for the bytes grace period
  --hard-objects N      objects are counted as inodes: the bucket's
  --soft-objects N      directory, each object, each prefix directory and
                        each upload in progress
SIZE is a byte count with an optional K, M, G, T, P suffix (powers of
1024): 8M, 1G, 4096. Byte limits are kept in whole filesystem blocks,
rounded up.
GRACE:
  --bytes-grace D       how long a soft limit may be passed, e.g. 7d, 36h,
  --objects-grace D     1h30m (1s to about 136 years; the default is 7d)

Output: a table (BUCKET, PROJECT, then BYTES used with their SOFT and HARD
limits and when their GRACE period ends, then the same for OBJECTS; "-" is
no limit or no grace period running), and the grace periods.
  --bytes    exact byte counts instead of human-readable sizes
  --json     the admin API's JSON document instead (docs/operations.md)

` + connectionUsage + `
The same through mc: 'mc quota set ALIAS/BUCKET --size 1GiB', 'mc quota
info ALIAS/BUCKET', 'mc quota clear ALIAS/BUCKET' (the hard byte limit).
`

// adminTimeout bounds one admin request.
const adminTimeout = time.Minute

func runQuota(args []string, e *env) int {
	var endpoint, configFile, volume string
	t := quotaTarget{
		name:  "quota",
		usage: quotaUsage,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&endpoint, "endpoint", "", "server URL")
			fs.StringVar(&configFile, "config", "", "the server's config file")
			fs.StringVar(&volume, "volume", "", "the server's volume")
		},
		open: func(pos []string, write bool) (quotaFace, []string, error) {
			c, err := adminClient(endpoint, configFile, volume)
			if err != nil {
				return nil, nil, err
			}
			return &serverFace{c: c}, pos, nil
		},
	}
	return runQuotaTarget(t, args, e)
}

// adminClient makes a client for the server that the connection flags,
// the environment and the config file describe, as serve reads them.
func adminClient(endpoint, configFile, volume string) (*admin.Client, error) {
	var args []string
	if configFile != "" {
		args = append(args, "--config", configFile)
	}
	if volume != "" {
		args = append(args, "--volume", volume)
	}
	cfg, err := config.Load(args, os.LookupEnv, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("the server's settings: %w", err)
	}
	if endpoint == "" {
		if endpoint, err = endpointOf(cfg.Addr, cfg.CertsDir != ""); err != nil {
			return nil, err
		}
	}
	creds := credentials{cfg.AccessKey, cfg.SecretKey}
	if creds.AccessKey == "" {
		creds, err = readCredentials(credentialsPath(cfg))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no credentials: set XFS3_ACCESS_KEY and XFS3_SECRET_KEY, or name the server's volume with --volume (no %s)", credentialsPath(cfg))
		}
		if err != nil {
			return nil, err
		}
	}
	return &admin.Client{Endpoint: endpoint, AccessKey: creds.AccessKey, SecretKey: creds.SecretKey,
		HTTP: &http.Client{Timeout: adminTimeout}}, nil
}

// endpointOf is the URL of a server listening on addr, over HTTPS when
// it serves TLS: a wildcard or empty host is reached on the loopback
// address.
func endpointOf(addr string, tls bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" {
		return "", usagef("the server's address %q does not say where it listens: give --endpoint", addr)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, port), nil
}

// serverFace is a running server, through its admin API.
type serverFace struct{ c *admin.Client }

func (f *serverFace) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), adminTimeout)
}

func (f *serverFace) report(bucket string) (admin.QuotaReport, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	return f.c.Quotas(ctx, bucket)
}

func (f *serverFace) setLimits(bucket string, l admin.Limits) (admin.BucketQuota, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	return f.c.SetQuota(ctx, bucket, l)
}

func (f *serverFace) setGrace(g admin.Grace) (admin.Grace, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	return f.c.SetGrace(ctx, g)
}

func (f *serverFace) close() error { return nil }
