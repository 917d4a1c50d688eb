package dev_test

import (
	"strings"
	"testing"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/dev"
)

// make dev's API and worker start with the secret keys' development
// defaults: DevServerEnv marks the stack as a development one.
func TestDevServerEnvLetsServeAndWorkerStart(t *testing.T) {
	env := map[string]string{}
	for _, kv := range dev.DevServerEnv(func(string) string { return "" }) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckSecretKeys(config.ClientSecretKeyVar, config.WebhookSecretKeyVar); err != nil {
		t.Fatalf("make dev's serve would refuse to start: %v", err)
	}
}
