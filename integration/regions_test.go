package integration

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// regionlessClient is a minio-go client without a region: it asks each
// bucket's location and signs for that region, as mc does.
func (s *server) regionlessClient(t *testing.T) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRegionsThroughBinary: a server with no region set makes a bucket in
// the region minio-go's MakeBucket names, reports it and serves requests
// signed for it; the same volume served with --region keeps that bucket
// where it was and refuses to make one in another region.
func TestRegionsThroughBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startServer(t, "1G")
	c := s.regionlessClient(t)
	if err := c.MakeBucket(ctx, "dublin", minio.MakeBucketOptions{Region: "eu-west-1"}); err != nil {
		t.Fatalf("MakeBucket in eu-west-1: %v", err)
	}
	if err := c.MakeBucket(ctx, "plain", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if loc, err := c.GetBucketLocation(ctx, "dublin"); err != nil || loc != "eu-west-1" {
		t.Fatalf("GetBucketLocation(dublin) = %q, %v", loc, err)
	}
	if loc, err := c.GetBucketLocation(ctx, "plain"); err != nil || loc != region {
		t.Fatalf("GetBucketLocation(plain) = %q, %v", loc, err)
	}
	// A second MakeBucket of it is BucketAlreadyOwnedByYou, as outside
	// us-east-1 on S3.
	wantCode(t, c.MakeBucket(ctx, "dublin", minio.MakeBucketOptions{Region: "eu-west-1"}), "BucketAlreadyOwnedByYou")
	// A new client finds the region and signs for it.
	c2 := s.regionlessClient(t)
	if _, err := c2.PutObject(ctx, "dublin", "k", bytes.NewReader([]byte("craic")), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, ctx, c2, "dublin", "k", minio.GetObjectOptions{}); string(got) != "craic" {
		t.Fatalf("read %q", got)
	}
	list, err := c.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	regions := map[string]string{}
	for _, b := range list {
		regions[b.Name] = b.BucketRegion
	}
	if regions["dublin"] != "eu-west-1" || regions["plain"] != region {
		t.Errorf("ListBuckets regions %v", regions)
	}
	s.stop(t)

	s = startServerOn(t, s.Volume, "1G", "--region", "eu-central-1")
	c = s.regionlessClient(t)
	for bucket, want := range map[string]string{"dublin": "eu-west-1", "plain": "eu-central-1"} {
		if loc, err := c.GetBucketLocation(ctx, bucket); err != nil || loc != want {
			t.Errorf("with --region: GetBucketLocation(%s) = %q, %v; want %q", bucket, loc, err, want)
		}
	}
	wantCode(t, c.MakeBucket(ctx, "paris", minio.MakeBucketOptions{Region: "eu-west-3"}), "IllegalLocationConstraintException")
	if err := c.MakeBucket(ctx, "frankfurt", minio.MakeBucketOptions{Region: "eu-central-1"}); err != nil {
		t.Fatal(err)
	}
	if loc, err := c.GetBucketLocation(ctx, "frankfurt"); err != nil || loc != "eu-central-1" {
		t.Errorf("GetBucketLocation(frankfurt) = %q, %v", loc, err)
	}
	if ok, err := c.BucketExists(ctx, "paris"); ok || err != nil {
		t.Errorf("a refused bucket exists: %v, %v", ok, err)
	}
	s.stop(t)
}
