package dev

import (
	"strings"
	"testing"
)

// renderedChart is what the chart renders, cut to what CheckRendered reads.
const renderedChart = `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: pressroom
data:
  PRESSROOM_HTTP_ADDR: "0.0.0.0:8080"
  PRESSROOM_AUTO_MIGRATE: "false"
  PRESSROOM_PUBLIC_URL: "https://pressroom.example.com"
  TEMPORAL_ADDRESS: "temporal-frontend.temporal:7233"
  PRESSROOM_LOG_FORMAT: "json"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pressroom-api
spec:
  template:
    spec:
      containers:
        - name: api
          args: ["serve"]
          envFrom:
            - configMapRef:
                name: pressroom
          env:
            - name: PRESSROOM_DB_MAX_CONNS
              value: "10"
            - name: TMPDIR
              value: /tmp
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef: {name: pressroom, key: DATABASE_URL}
            - name: PRESSROOM_S3_ACCESS_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_S3_ACCESS_KEY}
            - name: PRESSROOM_S3_SECRET_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_S3_SECRET_KEY}
            - name: PRESSROOM_CLIENT_SECRET_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_CLIENT_SECRET_KEY}
            - name: PRESSROOM_WEBHOOK_SECRET_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_WEBHOOK_SECRET_KEY}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pressroom-worker
spec:
  template:
    spec:
      containers:
        - name: worker
          args: ["worker"]
          envFrom:
            - configMapRef:
                name: pressroom
          env:
            - name: PRESSROOM_IMAGE_MEMORY
              value: "419430400"
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef: {name: pressroom, key: DATABASE_URL}
            - name: PRESSROOM_S3_ACCESS_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_S3_ACCESS_KEY}
            - name: PRESSROOM_S3_SECRET_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_S3_SECRET_KEY}
            - name: PRESSROOM_WEBHOOK_SECRET_KEY
              valueFrom:
                secretKeyRef: {name: pressroom, key: PRESSROOM_WEBHOOK_SECRET_KEY}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pressroom-migrate
spec:
  template:
    spec:
      containers:
        - name: migrate
          args: ["migrate", "up"]
          env:
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef: {name: pressroom-migrate, key: DATABASE_URL}
`

func TestCheckRendered(t *testing.T) {
	t.Parallel()
	if err := CheckRendered([]byte(renderedChart)); err != nil {
		t.Fatalf("the chart's rendering is refused: %v", err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"a misspelt variable", "PRESSROOM_DB_MAX_CONNS", "PRESSROOM_DB_MAXCONNS", "PRESSROOM_DB_MAXCONNS, which config.Variables does not have"},
		{"a misspelt ConfigMap key", "PRESSROOM_LOG_FORMAT:", "PRESSROOM_LOGFORMAT:", "PRESSROOM_LOGFORMAT, which config.Variables does not have"},
		{"migrations on in the API", `PRESSROOM_AUTO_MIGRATE: "false"`, `PRESSROOM_AUTO_MIGRATE: "true"`, "PRESSROOM_AUTO_MIGRATE is on"},
		{"the API on loopback", `"0.0.0.0:8080"`, `"127.0.0.1:8080"`, "listens on 127.0.0.1:8080"},
		{"a bad value", `value: "10"`, `value: "ten"`, "config.FromEnv refuses"},
		{"development mode", `PRESSROOM_LOG_FORMAT: "json"`, `PRESSROOM_DEV: "true"`, "PRESSROOM_DEV is on"},
		{"a secret in the ConfigMap", `PRESSROOM_LOG_FORMAT: "json"`, `PRESSROOM_S3_SECRET_KEY: "x"`, "PRESSROOM_S3_SECRET_KEY is in ConfigMap pressroom"},
		{"a secret written in the manifest", "- name: TMPDIR\n              value: /tmp", "- name: PRESSROOM_CLIENT_SECRET_KEY\n              value: x", "PRESSROOM_CLIENT_SECRET_KEY has a value in the manifest"},
		{"a Secret key under another name", "key: PRESSROOM_WEBHOOK_SECRET_KEY}", "key: webhook}", "PRESSROOM_WEBHOOK_SECRET_KEY from Secret key webhook"},
		{"the worker without the webhook key", "            - name: PRESSROOM_WEBHOOK_SECRET_KEY\n              valueFrom:\n                secretKeyRef: {name: pressroom, key: PRESSROOM_WEBHOOK_SECRET_KEY}\n---\napiVersion: batch/v1",
			"---\napiVersion: batch/v1", "`pressroom worker` needs PRESSROOM_WEBHOOK_SECRET_KEY"},
		{"a whole Secret as variables", "envFrom:\n            - configMapRef:\n                name: pressroom\n          env:\n            - name: PRESSROOM_IMAGE_MEMORY",
			"envFrom:\n            - configMapRef:\n                name: pressroom\n            - secretRef:\n                name: pressroom\n          env:\n            - name: PRESSROOM_IMAGE_MEMORY", "envFrom Secret pressroom"},
		{"no migration Job", `args: ["migrate", "up"]`, `args: ["serve"]`, "no container runs `pressroom migrate`"},
		{"a ConfigMap the chart lacks", "configMapRef:\n                name: pressroom\n          env:\n            - name: PRESSROOM_DB", "configMapRef:\n                name: other\n          env:\n            - name: PRESSROOM_DB", "ConfigMap other is not in the chart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(renderedChart, tt.old) {
				t.Fatalf("the fixture has no %q", tt.old)
			}
			err := CheckRendered([]byte(strings.Replace(renderedChart, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckRendered = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
