package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

// Sweeper removes what unconfirmed uploads leave behind, and ends the
// uploads whose ingestion run is gone (sweepqueue.go).
type Sweeper struct {
	DB       *bun.DB
	Storage  *minio.Client
	Buckets  config.Storage
	Temporal client.Client
	// SiteLimit is PRESSROOM_SITE_UPLOAD_LIMIT: how many of a site's
	// uploads hold a slot, and so how far the head of its queue goes.
	SiteLimit int
	// AbandonedAfter replaces the constant AbandonedAfter when above 0
	// (tests).
	AbandonedAfter time.Duration
}

// SweepBatch bounds one sweep, so a backlog is worked off over several runs
// instead of in one unbounded activity.
const SweepBatch = 500

// SweepUnconfirmed deletes signatures that expired over an hour ago without
// an upload notice, and their objects in the uploads bucket. It returns how
// many it removed; removing twice is harmless.
func (s *Sweeper) SweepUnconfirmed(ctx context.Context) (int, error) {
	stale, err := models.StaleSignatures(ctx, s.DB, time.Now().Add(-time.Hour), SweepBatch)
	if err != nil {
		return 0, err
	}
	for i, sig := range stale {
		err := s.Storage.RemoveObject(ctx, s.Buckets.UploadsBucket, sig.Key, minio.RemoveObjectOptions{})
		if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
			return i, fmt.Errorf("remove %s: %w", sig.Key, err)
		}
		if err := models.DeleteSignature(ctx, s.DB, &sig); err != nil {
			return i, err
		}
		activity.RecordHeartbeat(ctx, i+1)
	}
	return len(stale), nil
}
