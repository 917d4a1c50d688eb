// Package storage connects to the S3-compatible object storage (MinIO in
// development) and prepares Pressroom's two buckets.
package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/cors"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"github.com/pressroom/pressroom/config"
)

// UploadExpiryDays is how long an object may stay in the uploads bucket.
// Uploads are confirmed and copied within minutes; a day leaves room for
// retries and for an operator to look at a failed one.
const UploadExpiryDays = 1

// NewClient builds a minio-go client for endpoint (scheme://host:port).
func NewClient(s config.Storage) (*minio.Client, error) {
	return newClient(s.Endpoint, s)
}

func newClient(endpoint string, s config.Storage) (*minio.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("storage endpoint %q is not a URL", endpoint)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure: u.Scheme == "https",
		Region: s.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("storage client for %s: %w", u.Host, err)
	}
	return c, nil
}

// EnsureBuckets creates the uploads and assets buckets if missing, gives
// uploads its one-day expiry and the CORS rule browsers need for form POSTs.
// It is safe to run any number of times.
func EnsureBuckets(ctx context.Context, c *minio.Client, s config.Storage) error {
	for _, b := range []string{s.UploadsBucket, s.AssetsBucket} {
		exists, err := c.BucketExists(ctx, b)
		if err != nil {
			return fmt.Errorf("check bucket %s: %w", b, err)
		}
		if !exists {
			if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: s.Region}); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
	}
	lc := lifecycle.NewConfiguration()
	lc.Rules = []lifecycle.Rule{{
		ID:                             "expire-unconfirmed-uploads",
		Status:                         "Enabled",
		Expiration:                     lifecycle.Expiration{Days: UploadExpiryDays},
		AbortIncompleteMultipartUpload: lifecycle.AbortIncompleteMultipartUpload{DaysAfterInitiation: UploadExpiryDays},
	}}
	if err := c.SetBucketLifecycle(ctx, s.UploadsBucket, lc); err != nil {
		return fmt.Errorf("set expiry on bucket %s: %w", s.UploadsBucket, err)
	}
	rules := cors.NewConfig([]cors.Rule{{
		AllowedOrigin: []string{"*"},
		AllowedMethod: []string{"POST", "PUT"},
		AllowedHeader: []string{"*"},
		ExposeHeader:  []string{"ETag", "Location"},
		MaxAgeSeconds: 3600,
	}})
	if err := c.SetBucketCors(ctx, s.UploadsBucket, rules); err != nil && !notImplemented(err) {
		return fmt.Errorf("set CORS on bucket %s: %w", s.UploadsBucket, err)
	}
	// Processed assets are public: their URLs go into pages. Only reading
	// single objects is allowed, not listing the bucket.
	if err := c.SetBucketPolicy(ctx, s.AssetsBucket, publicRead(s.AssetsBucket)); err != nil {
		return fmt.Errorf("make bucket %s publicly readable: %w", s.AssetsBucket, err)
	}
	return nil
}

func publicRead(bucket string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},` +
		`"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::` + bucket + `/*"]}]}`
}

// notImplemented tells whether the server lacks per-bucket CORS. Older MinIO
// releases answer NotImplemented and apply the server-wide
// MINIO_API_CORS_ALLOW_ORIGIN instead (default "*"), which the dev stack sets.
func notImplemented(err error) bool {
	var resp minio.ErrorResponse
	return errors.As(err, &resp) && resp.Code == "NotImplemented"
}
