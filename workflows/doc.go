// Package workflows holds Pressroom's Temporal workflow definitions.
//
// Workflow code is deterministic: no I/O, no clock, no randomness, no
// goroutines except through the SDK (workflow.Now, workflow.Go, ...). Every
// side effect is an activity in package activities, called by its name
// (activities.go): activities import this package's inputs and results, never
// the reverse. File bytes never pass through workflow history: workflows
// pass storage keys, not blobs.
//
// Workflow ids are idempotency keys: asset-upload-<upload id>,
// publish-revision-<revision id>, webhook-delivery-<delivery id>,
// release-review-<release id>. Callers
// start the workflows through start.go, which sets each one's id, id reuse
// policy and search attributes; it runs in the caller, never in workflow
// code.
package workflows
