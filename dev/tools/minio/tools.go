//go:build tools

// Package tools pins the MinIO server in a module of its own, so its large
// dependency tree stays out of Pressroom's go.mod.
package tools

import _ "github.com/minio/minio"
