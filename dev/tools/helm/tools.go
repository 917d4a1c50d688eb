//go:build tools

// Package tools pins Helm (its CLI, for `helm lint` and `helm template` of
// deploy/helm/pressroom in `make vet`) in a module of its own, so its large
// dependency tree (client-go and the Kubernetes API types) stays out of
// Pressroom's go.mod.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
