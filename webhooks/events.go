package webhooks

import "slices"

// Event types a webhook can subscribe to.
const (
	RevisionPublished   = "revision.published"
	RevisionFailed      = "revision.failed"
	RevisionScheduled   = "revision.scheduled"
	RevisionCancelled   = "revision.cancelled"
	AssetUploadFinished = "asset-upload.finished"
	AssetUploadError    = "asset-upload.error"
	DraftReverted       = "draft.reverted"
	ThemePublished      = "theme.published"
	// ReleasePublished and ReleaseCancelled: a release's publishing
	// revision published it, or it was cancelled (docs/releases.md); the
	// event's subject is the release, with its revision.
	ReleasePublished = "release.published"
	ReleaseCancelled = "release.cancelled"
	// WebhookDeactivated: Pressroom deactivated a webhook of the site (its
	// receiver answered 410, or too many deliveries queued behind one that
	// keeps failing; docs/webhooks.md).
	WebhookDeactivated = "webhook.deactivated"
)

// Events lists every event type, in the order the documentation gives them.
var Events = []string{RevisionPublished, RevisionFailed, RevisionScheduled, RevisionCancelled,
	AssetUploadFinished, AssetUploadError, DraftReverted, ThemePublished, ReleasePublished, ReleaseCancelled, WebhookDeactivated}

// KnownEvent tells whether name is an event type.
func KnownEvent(name string) bool { return slices.Contains(Events, name) }
