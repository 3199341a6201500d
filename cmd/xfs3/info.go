package main

import (
	"context"
	"encoding/json"

	"fmt"

	"github.com/xfs3/xfs3/s3api/admin"
)

const infoUsage = `Usage: xfs3 info [--endpoint URL] [--config FILE] [--volume PATH]

Print a running server's info document (GET /minio/admin/v3/xfs3/info, one
JSON object; fields in docs/operations.md): version, uptime, volume geometry and
usage, durability and gc modes, trim schedule and last pass, buckets with
their usage and limits.

Connection, as for 'xfs3 quota':
  --endpoint URL   the server (default: http://, or https:// with
                   XFS3_CERTS_DIR or "certs_dir", and XFS3_ADDR or "addr")
  --config FILE    the server's JSON config file (XFS3_CONFIG)
  --volume PATH    the server's volume: when no keys are configured, its
                   credentials.json is read
`

func runInfo(args []string, e *env) int {
	return runWithServer("info", infoUsage, args, e, true, func(c *admin.Client) error {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		in, err := c.Info(ctx)
		if err != nil {
			return err
		}
		out, err := json.MarshalIndent(in, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", out)
		return err
	})
}

// runWithServer parses the connection flags of a command that talks to
// a server (--endpoint when withEndpoint, --config, --volume), refuses
// positional arguments and runs do with a client for that server.
func runWithServer(name, usage string, args []string, e *env, withEndpoint bool, do func(*admin.Client) error) int {
	var endpoint, configFile, volume string
	fs := newFlags(name)
	if withEndpoint {
		fs.StringVar(&endpoint, "endpoint", "", "server URL")
	} else {
		// Not used; set so that a server configured to listen on port 0
		// does not make the client fail.
		endpoint = "http://127.0.0.1"
	}
	fs.StringVar(&configFile, "config", "", "the server's config file")
	fs.StringVar(&volume, "volume", "", "the server's volume")
	err := func() error {
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) > 0 {
			return usagef("unexpected argument %q", pos[0])
		}
		c, err := adminClient(endpoint, configFile, volume)
		if err != nil {
			return err
		}
		return do(c)
	}()
	return finish(err, name, usage, e)
}

const metricsTokenUsage = `Usage: xfs3 metrics-token [--config FILE] [--volume PATH]

Print the bearer token that authorizes a scrape of /minio/metrics/v3 (see
docs/operations.md) for the server's credentials, read as 'xfs3 quota' reads them:
XFS3_ACCESS_KEY and XFS3_SECRET_KEY, the config file, or the
credentials.json beside the volume. The token is derived from the secret
key: changing the key revokes it.
`

func runMetricsToken(args []string, e *env) int {
	return runWithServer("metrics-token", metricsTokenUsage, args, e, false, func(c *admin.Client) error {
		_, err := fmt.Fprintln(e.stdout, admin.MetricsToken(c.AccessKey, c.SecretKey))
		return err
	})
}
