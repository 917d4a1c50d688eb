package workflows

import "go.temporal.io/sdk/temporal"

// Search attributes operators filter Pressroom's workflows by (registered
// by dev.SearchAttributes and the compose file's temporal-setup).
var (
	SiteIDAttribute     = temporal.NewSearchAttributeKeyKeyword("PressroomSiteId")
	UploadIDAttribute   = temporal.NewSearchAttributeKeyKeyword("PressroomUploadId")
	RevisionIDAttribute = temporal.NewSearchAttributeKeyKeyword("PressroomRevisionId")
	// ReleaseIDAttribute is the release a publish workflow's revision
	// publishes (docs/releases.md), set only on those.
	ReleaseIDAttribute = temporal.NewSearchAttributeKeyKeyword("PressroomReleaseId")
	// PublishAtAttribute is when a scheduled revision publishes.
	PublishAtAttribute = temporal.NewSearchAttributeKeyTime("PressroomPublishAt")
	WebhookIDAttribute = temporal.NewSearchAttributeKeyKeyword("PressroomWebhookId")
	// OutcomeAttribute is how an ingestion that completed ended:
	// OutcomeFinished or OutcomeRejected (set as its last step). Failed
	// runs are faults for an operator; a rejected file is not one.
	OutcomeAttribute = temporal.NewSearchAttributeKeyKeyword("PressroomOutcome")
)
