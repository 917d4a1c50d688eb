//go:build tools

// Package tools pins kubeconform, which validates the manifests `helm
// template` renders against Kubernetes' JSON schemas, in a module of its own.
package tools

import _ "github.com/yannh/kubeconform/cmd/kubeconform"
