package workflows

import "time"

// The activities the workflows call, by the names they are registered
// under: worker.Register registers activities.Uploads, activities.Sweeper,
// activities.OAuthPrune and activities.Publisher, whose method names are
// the activity names
// (renaming a method renames its activity, which runs in flight would not
// find). Workflows name activities instead of importing package activities:
// activities import the inputs and results declared here, so this package,
// which the API imports to start workflows, stays free of I/O.
const (
	claimActivity            = "Claim"
	claimSlotActivity        = "ClaimSlot"
	releaseSlotActivity      = "ReleaseSlot"
	inspectActivity          = "Inspect"
	processActivity          = "Process"
	ingestActivity           = "Ingest"
	recordActivity           = "Record"
	failActivity             = "Fail"
	deleteTemporaryActivity  = "DeleteTemporary"
	sweepUnconfirmedActivity = "SweepUnconfirmed"
	sweepAbandonedActivity   = "SweepAbandoned"
	publishActivity          = "Publish"
	awaitRevisionActivity    = "AwaitRevision"
	recordPublishAtActivity  = "RecordPublishAt"
)

// RejectedType is the application error type of failures retrying cannot
// fix: the workflow marks the upload "error" with the message.
const RejectedType = "Rejected"

// ClaimWait bounded how long Claim waited for the upload notice to commit,
// when the API started the ingestion inside the notice's transaction.
// Claim no longer waits (the API starts the run after the commit); the
// older paths keep the timeouts they were recorded with.
const ClaimWait = 30 * time.Second
