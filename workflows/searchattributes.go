package workflows

import "go.temporal.io/sdk/temporal"

// Search attributes operators filter Pressroom's workflows by.
var (
	SiteIDAttribute     = temporal.NewSearchAttributeKeyKeyword("PressroomSiteId")
	UploadIDAttribute   = temporal.NewSearchAttributeKeyKeyword("PressroomUploadId")
	RevisionIDAttribute = temporal.NewSearchAttributeKeyKeyword("PressroomRevisionId")
	WebhookIDAttribute  = temporal.NewSearchAttributeKeyKeyword("PressroomWebhookId")
)
