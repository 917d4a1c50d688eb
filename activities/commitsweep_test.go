package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

// An API that died between the commit and the start left an upload attempt
// and a revision committed without their workflows: the commit sweep
// starts both and marks them, once; it leaves alone what was started, and
// what committed within the grace (the API's own start may still come).
func TestCommitSweepStartsWhatACrashLeftUnstarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	tc, err := client.Dial(client.Options{HostPort: testsupport.Get(t).TemporalAddress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	site, err := models.CreateSite(ctx, db, "Sweep", "sweep")
	if err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().UTC().Add(-time.Hour)
	upload := func(at time.Time, started *time.Time) models.AssetUpload {
		t.Helper()
		sig := &models.UploadSignature{SiteRow: models.SiteRow{ID: uuid.New(), SiteID: site.ID, CreatedAt: at},
			Key: site.ID.String() + "/" + uuid.NewString() + "/a.png", Filename: "a.png", ContentType: "image/png", MaxBytes: 100, ExpiresAt: at.Add(time.Hour)}
		if err := models.RecordSignature(ctx, db, sig); err != nil {
			t.Fatal(err)
		}
		up := models.AssetUpload{SiteRecord: models.SiteRecordOf(uuid.New(), site.ID, at), SignatureID: sig.ID, FileName: "a.png",
			Key: sig.Key, ContentType: "image/png", FileSize: 10, Status: models.UploadProcessing, Attempt: 1, QueuedAt: at,
			ETag: "etag-of-the-notice", StartedAt: started}
		if err := models.SaveUpload(ctx, db, &up); err != nil {
			t.Fatal(err)
		}
		return up
	}
	crashed, started, recent := upload(hourAgo, nil), upload(hourAgo, &hourAgo), upload(time.Now().UTC(), nil)
	rev := &drafts.Revision{SiteRecord: models.SiteRecordOf(uuid.New(), site.ID, hourAgo), Status: drafts.Publishing, DraftIDs: []uuid.UUID{uuid.New()}}
	if _, err := db.NewInsert().Model(rev).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	queue := "commit-sweep-" + uuid.NewString() // no worker polls it: the runs wait
	s := &CommitSweep{DB: db.DB, Temporal: tc, TaskQueue: queue, PublishTaskQueue: queue, Grace: time.Minute}
	wfIDs := []string{workflows.AssetUploadID(crashed.ID.String()), workflows.PublishRevisionID(rev.ID.String())}
	t.Cleanup(func() {
		for _, id := range wfIDs {
			_ = tc.TerminateWorkflow(context.Background(), id, "", "test over")
		}
	})

	n, err := s.StartUnstarted(ctx)
	if err != nil || n != 2 {
		t.Fatalf("first sweep started %d, %v; want 2 (the crashed upload and revision)", n, err)
	}
	for _, id := range wfIDs {
		d, err := tc.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatalf("%s after the sweep: %v", id, err)
		}
		if q := d.GetExecutionConfig().GetTaskQueue().GetName(); q != queue {
			t.Errorf("%s on queue %q, want %q", id, q, queue)
		}
	}
	var notFound *serviceerror.NotFound
	for _, up := range []models.AssetUpload{started, recent} {
		if _, err := tc.DescribeWorkflowExecution(ctx, workflows.AssetUploadID(up.ID.String()), ""); !errors.As(err, &notFound) {
			t.Errorf("upload %s (started_at %v) was started by the sweep: %v", up.ID, up.StartedAt, err)
		}
	}
	var marked int
	if err := db.NewRaw("SELECT (SELECT count(*) FROM asset_uploads WHERE id = ? AND started_at IS NOT NULL) + (SELECT count(*) FROM revisions WHERE id = ? AND started_at IS NOT NULL)",
		crashed.ID, rev.ID).Scan(ctx, &marked); err != nil || marked != 2 {
		t.Fatalf("marked started: %d, %v; want 2", marked, err)
	}
	// The input is the one the API would have given: the notice's ETag.
	var in workflows.Upload
	it := tc.GetWorkflowHistory(ctx, wfIDs[0], "", false, 0)
	ev, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	payload := ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
	if err := converter.GetDefaultDataConverter().FromPayload(payload, &in); err != nil {
		t.Fatal(err)
	}
	if in != workflows.UploadOf(&crashed) {
		t.Errorf("ingestion input = %+v, want %+v", in, workflows.UploadOf(&crashed))
	}

	if n, err := s.StartUnstarted(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep started %d, %v; want 0 (all marked)", n, err)
	}
}
