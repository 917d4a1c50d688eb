// Package webhooks holds what both the API and the worker need of webhook
// delivery without any database: the event names, Standard Webhooks
// secrets and signatures, and the SSRF guard (public addresses only) that
// the API applies when a webhook is saved and the worker applies again on
// every connection (docs/webhooks.md).
package webhooks
