package testsupport

import (
	"context"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/storage"
)

// NewBuckets creates an uploads and an assets bucket for one test and
// removes them, with everything in them, when it ends.
func NewBuckets(t testing.TB) (config.Storage, *minio.Client) {
	t.Helper()
	s := Get(t).Storage
	suffix := randomSuffix()
	s.UploadsBucket, s.AssetsBucket = "t-"+suffix+"-uploads", "t-"+suffix+"-assets"
	c, err := storage.NewClient(s)
	if err != nil {
		t.Fatalf("testsupport: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := storage.EnsureBuckets(ctx, c, s); err != nil {
		t.Fatalf("testsupport: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, b := range []string{s.UploadsBucket, s.AssetsBucket} {
			_ = c.RemoveBucketWithOptions(ctx, b, minio.RemoveBucketOptions{ForceDelete: true})
		}
	})
	return s, c
}

// Config returns a configuration pointing at this test's database and
// buckets and at the shared Temporal server, on a task queue of its own.
func Config(t testing.TB, db *Database, s config.Storage) config.Config {
	t.Helper()
	c := Defaults()
	c.DatabaseURL = db.URL
	c.TemporalAddress = Get(t).TemporalAddress
	c.TaskQueue = "test-" + randomSuffix()
	c.PublishTaskQueue = c.TaskQueue + "-publish"
	c.Webhooks.TaskQueue = c.TaskQueue + "-webhooks"
	// Test receivers listen on loopback; retries are quick.
	c.Webhooks.AllowPrivate = true
	c.Webhooks.RetryBase = time.Second
	// A test stack: serve and worker processes started from it accept
	// the default secret keys.
	c.Dev = true
	c.Storage = s
	c.AutoMigrate = false
	return c
}
