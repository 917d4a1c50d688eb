package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/config"
)

// serve and worker refuse to start with a secret key they use still at its
// default (written in the source for anyone to read) unless
// PRESSROOM_DEV=true; the worker does not use the client-secret key.
// The database URL cannot be parsed, so a command that gets past the check
// stops at once on that, touching nothing.
func TestServeAndWorkerRefuseDefaultSecretKeys(t *testing.T) {
	t.Parallel()
	const client, hook = config.ClientSecretKeyVar, config.WebhookSecretKeyVar
	for _, cmd := range []string{"serve", "worker"} {
		for _, c := range []struct {
			name    string
			env     map[string]string
			refused []string
		}{
			{"defaults", nil, []string{client, hook}},
			{"client key default", map[string]string{hook: "production-webhook-key"}, []string{client}},
			{"webhook key default", map[string]string{client: "production-client-key"}, []string{hook}},
			{"PRESSROOM_DEV=false", map[string]string{"PRESSROOM_DEV": "false"}, []string{client, hook}},
			{"PRESSROOM_DEV=true", map[string]string{"PRESSROOM_DEV": "true"}, nil},
			{"both keys set", map[string]string{client: "production-client-key", hook: "production-webhook-key"}, nil},
		} {
			env := map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/x?sslmode=unparseable"}
			for k, v := range c.env {
				env[k] = v
			}
			var refused []string
			for _, name := range c.refused {
				if cmd == "serve" || name == hook {
					refused = append(refused, name)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var out, errOut bytes.Buffer
			err := run(ctx, []string{cmd}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
			cancel()
			what := cmd + ", " + c.name
			if err == nil {
				t.Fatalf("%s: ran", what)
			}
			msg := err.Error()
			if len(refused) == 0 {
				if !strings.Contains(msg, "parse database URL") {
					t.Errorf("%s: %v, want it past the key check (stopping on the database URL)", what, err)
				}
				continue
			}
			if strings.Contains(msg, "parse database URL") || !strings.Contains(msg, "PRESSROOM_DEV=true") {
				t.Errorf("%s: %v, want a refusal of the default keys before anything else", what, err)
				continue
			}
			for _, name := range []string{client, hook} {
				want := slices.Contains(refused, name)
				if strings.Contains(msg, name) != want {
					t.Errorf("%s: %q: names %s = %v, want %v", what, msg, name, !want, want)
				}
			}
		}
	}
}
