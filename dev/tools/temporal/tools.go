//go:build tools

// Package tools pins the Temporal CLI (which embeds the dev server and its Web UI)
// in a module of its own, so its large dependency tree stays out of Pressroom's go.mod.
package tools

import _ "github.com/temporalio/cli/cmd/temporal"
