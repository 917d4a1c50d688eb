// Package activities holds the side-effecting steps Pressroom's workflows
// call: object storage, image processing and database writes.
//
// Every activity is safe to run twice (Temporal retries them, and a worker
// may die after doing the work but before reporting it): each is keyed by
// the upload or revision id and uses upserts and "already done" checks.
// Failures that retrying cannot fix are returned as non-retryable
// application errors; everything else is retried with backoff.
package activities
