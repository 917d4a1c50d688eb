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
	// The review of a release (docs/releases.md, "Durable review"), sent
	// by its review workflow: a review was requested, a verdict given, or a
	// request waited PRESSROOM_REVIEW_REMINDER without one (at most 3
	// reminders a request). The event's subject is the review: the
	// request, for a reminder.
	ReleaseReviewRequested  = "release.review-requested"
	ReleaseApproved         = "release.approved"
	ReleaseChangesRequested = "release.changes-requested"
	ReleaseReviewReminder   = "release.review-reminder"
	// WebhookDeactivated: Pressroom deactivated a webhook of the site (its
	// receiver answered 410, or too many deliveries queued behind one that
	// keeps failing; docs/webhooks.md).
	WebhookDeactivated = "webhook.deactivated"
)

// Events lists every event type, in the order the documentation gives them.
var Events = []string{RevisionPublished, RevisionFailed, RevisionScheduled, RevisionCancelled,
	AssetUploadFinished, AssetUploadError, DraftReverted, ThemePublished, ReleasePublished, ReleaseCancelled,
	ReleaseReviewRequested, ReleaseApproved, ReleaseChangesRequested, ReleaseReviewReminder, WebhookDeactivated}

// KnownEvent tells whether name is an event type.
func KnownEvent(name string) bool { return slices.Contains(Events, name) }
