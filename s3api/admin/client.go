package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xfs3/xfs3/s3api/sigv4"
)

// Client calls a running server's admin API, signing every request as
// mc does: SigV4 with an empty region and the body's SHA-256.
type Client struct {
	Endpoint  string // "http://127.0.0.1:9000"
	AccessKey string
	SecretKey string
	HTTP      *http.Client     // nil: http.DefaultClient
	Now       func() time.Time // nil: time.Now
}

// maxAnswer bounds the answers read (a report of many buckets included).
const maxAnswer = 64 << 20

// do sends one admin request with a JSON body (when in is not nil) and
// decodes a JSON answer into out (when not nil). An error answer is
// returned as an *Error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	answer, err := c.send(ctx, method, path, query, body, in != nil)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// send sends one signed admin request and returns the answer's body.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body []byte, isJSON bool) ([]byte, error) {
	u, err := url.Parse(strings.TrimSuffix(c.Endpoint, "/") + Prefix + path)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", c.Endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want http://HOST:PORT or https://HOST:PORT", c.Endpoint)
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if isJSON {
		req.Header.Set("Content-Type", "application/json")
	} else if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	sum := sha256.Sum256(body)
	if err := sigv4.Sign(req, c.AccessKey, c.SecretKey, "", hex.EncodeToString(sum[:]), now()); err != nil {
		return nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", method, u.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, errorOf(resp.StatusCode, answer)
	}
	return answer, nil
}

// errorOf decodes an error answer; one that is not an admin error (a
// proxy's page, say) keeps its status and the start of its body.
func errorOf(status int, body []byte) *Error {
	e := &Error{Status: status}
	if json.Unmarshal(body, e) == nil && e.Code != "" {
		return e
	}
	e.Code = http.StatusText(status)
	e.Message = fmt.Sprintf("HTTP %d: %.200q", status, body)
	return e
}

// Quotas returns every bucket's quota and usage, or the one bucket's.
func (c *Client) Quotas(ctx context.Context, bucket string) (QuotaReport, error) {
	var r QuotaReport
	err := c.do(ctx, http.MethodGet, PathQuota, bucketQuery(bucket), nil, &r)
	return r, err
}

// SetQuota changes a bucket's limits (those l leaves nil stay).
func (c *Client) SetQuota(ctx context.Context, bucket string, l Limits) (BucketQuota, error) {
	var q BucketQuota
	err := c.do(ctx, http.MethodPut, PathQuota, bucketQuery(bucket), l, &q)
	return q, err
}

// SetGrace sets the grace periods (0 keeps one) and returns them.
func (c *Client) SetGrace(ctx context.Context, g Grace) (Grace, error) {
	var out Grace
	err := c.do(ctx, http.MethodPut, PathQuotaGrace, nil, g, &out)
	return out, err
}

func bucketQuery(bucket string) url.Values {
	if bucket == "" {
		return nil
	}
	return url.Values{"bucket": {bucket}}
}
