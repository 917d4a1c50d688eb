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
	inspectActivity          = "Inspect"
	processActivity          = "Process"
	ingestActivity           = "Ingest"
	recordActivity           = "Record"
	failActivity             = "Fail"
	deleteTemporaryActivity  = "DeleteTemporary"
	sweepUnconfirmedActivity = "SweepUnconfirmed"
	publishActivity          = "Publish"
	awaitRevisionActivity    = "AwaitRevision"
	recordPublishAtActivity  = "RecordPublishAt"
)

// RejectedType is the application error type of failures retrying cannot
// fix: the workflow marks the upload "error" with the message.
const RejectedType = "Rejected"

// ClaimWait bounds how long Claim waits for the upload notice to commit.
const ClaimWait = 30 * time.Second
