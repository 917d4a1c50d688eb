package models_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// queuedUploads records n waiting uploads of a new site, noticed one
// millisecond apart, and returns the site and their ids in notice order.
func queuedUploads(t *testing.T, db *testsupport.Database, slug string, n int) (uuid.UUID, []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(-time.Hour)
	ids := make([]uuid.UUID, n)
	for i := range ids {
		at := start.Add(time.Duration(i) * time.Millisecond)
		sig := &models.UploadSignature{SiteRow: models.SiteRow{ID: uuid.New(), SiteID: site.ID, CreatedAt: at},
			Key: slug + "/" + uuid.NewString(), Filename: "a.png", ContentType: "image/png", MaxBytes: 100, ExpiresAt: at.Add(time.Hour)}
		if err := models.RecordSignature(ctx, db, sig); err != nil {
			t.Fatal(err)
		}
		up := &models.AssetUpload{SiteRecord: models.SiteRecordOf(uuid.New(), site.ID, at), SignatureID: sig.ID, FileName: "a.png",
			Key: sig.Key, ContentType: "image/png", FileSize: 10, Status: models.UploadProcessing, Attempt: 1, QueuedAt: at}
		if err := models.SaveUpload(ctx, db, up); err != nil {
			t.Fatal(err)
		}
		ids[i] = up.ID
	}
	return site.ID, ids
}

// A site's uploads take its slots in the order they were noticed, at most
// limit at once; an upload that ended gives its slot to the next.
func TestUploadQueueOrderAndLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, ids := queuedUploads(t, db, "queue-order", 5)
	_, others := queuedUploads(t, db, "queue-other", 1)
	const limit = 2
	take := func(i int) models.UploadTurn {
		t.Helper()
		turn, err := models.TakeUploadSlot(ctx, db, ids[i], site, 1, limit)
		if err != nil {
			t.Fatal(err)
		}
		return turn
	}
	position := func(i int) int {
		t.Helper()
		up, err := models.FindUpload(ctx, db, site, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		p, err := models.QueuePosition(ctx, db, up)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The third may not jump the queue, though slots are free.
	if turn := take(2); turn != (models.UploadTurn{Claimed: true, Position: 3}) {
		t.Fatalf("third upload's turn = %+v, want waiting at 3", turn)
	}
	for i := range 2 {
		if turn := take(i); turn != (models.UploadTurn{Claimed: true, Granted: true}) {
			t.Fatalf("upload %d's turn = %+v, want granted", i, turn)
		}
	}
	if turn := take(0); !turn.Granted {
		t.Fatalf("taking a held slot again = %+v, want it kept", turn)
	}
	if turn := take(2); turn != (models.UploadTurn{Claimed: true, Position: 1}) {
		t.Fatalf("third upload with both slots taken = %+v, want waiting at 1", turn)
	}
	if p := [3]int{position(0), position(2), position(4)}; p != [3]int{0, 1, 3} {
		t.Fatalf("queue positions %v, want [0 1 3] (a running upload has none)", p)
	}
	// Another site's queue is its own.
	if turn, err := models.TakeUploadSlot(ctx, db, others[0], site, 1, limit); err != nil || turn.Claimed {
		t.Fatalf("another site's upload through this site = %+v %v, want not found", turn, err)
	}
	if next, err := models.NextWaitingUploads(ctx, db, site, limit); err != nil || len(next) != 0 {
		t.Fatalf("next uploads with no slot free = %v %v", next, err)
	}
	// The first ends: the third's turn has come, the fourth still waits.
	if _, err := db.NewUpdate().Model((*models.AssetUpload)(nil)).Set("status = ?", models.UploadFinished).Where("id = ?", ids[0]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if next, err := models.NextWaitingUploads(ctx, db, site, limit); err != nil || !slices.Equal(next, ids[2:3]) {
		t.Fatalf("next uploads = %v %v, want the third", next, err)
	}
	if turn := take(3); turn.Granted || turn.Position != 2 {
		t.Fatalf("fourth upload's turn = %+v, want waiting at 2 behind the third", turn)
	}
	if turn := take(2); !turn.Granted {
		t.Fatalf("third upload's turn after the first ended = %+v", turn)
	}
	n, err := lockedCounts(ctx, db, site)
	if err != nil || n != (models.SiteUploads{Running: 2, Waiting: 2}) {
		t.Fatalf("site uploads = %+v %v, want 2 running, 2 waiting", n, err)
	}
	// An attempt another replaced is not claimed.
	if turn, err := models.TakeUploadSlot(ctx, db, ids[4], site, 2, limit); err != nil || turn.Claimed {
		t.Fatalf("a stale attempt's turn = %+v %v", turn, err)
	}
}

// Concurrent takers (any number of workers) never give a site more than
// its limit, and give the slots to the first waiting uploads.
func TestUploadQueueConcurrentTakers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, ids := queuedUploads(t, db, "queue-race", 12)
	const limit = 3
	turns := make([]models.UploadTurn, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			turn, err := models.TakeUploadSlot(ctx, db, ids[i], site, 1, limit)
			if err != nil {
				t.Error(err)
			}
			turns[i] = turn
		})
	}
	wg.Wait()
	for i, turn := range turns {
		if turn.Granted != (i < limit) {
			t.Errorf("upload %d: %+v; want exactly the first %d granted", i, turn, limit)
		}
	}
}

// lockedCounts is models.LockSiteUploads in a transaction of its own.
func lockedCounts(ctx context.Context, db *testsupport.Database, site uuid.UUID) (models.SiteUploads, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return models.SiteUploads{}, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	return models.LockSiteUploads(ctx, tx, site)
}
