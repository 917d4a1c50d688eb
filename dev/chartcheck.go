package dev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pressroom/pressroom/config"
)

// ChartDir is the Helm chart of Pressroom, relative to the checkout.
const ChartDir = "deploy/helm/pressroom"

// chartValueSets are what `make vet` renders the chart with: its defaults,
// and a values file that turns the options on (the chart makes the Secret,
// autoscalers, minAvailable budgets, scheduling settings).
var chartValueSets = [][]string{nil, {"ci/options-values.yaml"}}

// CheckChart lints the chart and validates what it renders with each value
// set: `helm lint --strict`, then `helm template` piped to `kubeconform
// -strict` against the pinned Kubernetes release's schemas, then
// CheckRendered. Helm, kubeconform and the schemas are built or made once
// and cached (Tool.Ensure, KubernetesSchemas).
func CheckChart(ctx context.Context, root string, log io.Writer) error {
	helm, err := HelmTool.Ensure(ctx, root, log)
	if err != nil {
		return err
	}
	kubeconform, err := KubeconformTool.Ensure(ctx, root, log)
	if err != nil {
		return err
	}
	schemas, err := KubernetesSchemas(ctx, root, log)
	if err != nil {
		return err
	}
	kubeVersion := pinnedVersion(filepath.Join(root, "dev", "tools", "kubernetes-schemas", "go.mod"), kubernetesModule)
	// Helm's own folders in a temporary one: the check reads and writes
	// nothing of the user's Helm set-up (repositories, plugins).
	home, err := os.MkdirTemp("", "pressroom-helm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	location := SchemaLocation(schemas)
	if err := checkSchemasRefuse(ctx, env, kubeconform, location); err != nil {
		return err
	}
	chart := filepath.Join(root, ChartDir)
	for _, set := range chartValueSets {
		var values []string
		name := "default values"
		for _, f := range set {
			values = append(values, "--values", filepath.Join(chart, f))
			name = f
		}
		fmt.Fprintf(log, "chart %s with %s (Kubernetes %s)\n", ChartDir, name, kubeVersion)
		lint := append([]string{"lint", "--strict", "--kube-version", kubeVersion, chart}, values...)
		if _, err := runTool(ctx, env, nil, helm, lint...); err != nil {
			return err
		}
		tmpl := append([]string{"template", "pressroom", chart, "--namespace", "pressroom", "--kube-version", kubeVersion}, values...)
		manifests, err := runTool(ctx, env, nil, helm, tmpl...)
		if err != nil {
			return err
		}
		summary, err := runTool(ctx, env, manifests, kubeconform, "-strict", "-summary", "-schema-location", location, "-")
		if err != nil {
			return err
		}
		_, _ = log.Write(summary)
		if err := CheckRendered(manifests); err != nil {
			return fmt.Errorf("chart with %s: %w", name, err)
		}
	}
	return nil
}

// canaryManifest is a Deployment with a field Kubernetes does not have.
const canaryManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: canary}
spec:
  selector: {matchLabels: {app: canary}}
  template:
    metadata: {labels: {app: canary}}
    spec:
      containers: [{name: canary, image: canary, notAKubernetesField: 1}]
`

// checkSchemasRefuse makes sure kubeconform refuses canaryManifest: schemas
// that had lost their definitions, or their strictness, would let every
// chart pass.
func checkSchemasRefuse(ctx context.Context, env []string, kubeconform, location string) error {
	_, err := runTool(ctx, env, []byte(canaryManifest), kubeconform, "-strict", "-schema-location", location, "-")
	if err == nil || !strings.Contains(err.Error(), "notAKubernetesField") {
		return fmt.Errorf("kubeconform did not refuse a Deployment with an unknown field (%v): the schemas in %s check nothing", err, filepath.Dir(location))
	}
	return nil
}

// runTool runs a tool with stdin and returns its standard output; a failure
// carries everything it printed.
func runTool(ctx context.Context, env []string, stdin []byte, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// secretVariables are the settings the chart takes from a Secret only.
var secretVariables = []string{"DATABASE_URL", "PRESSROOM_S3_ACCESS_KEY", "PRESSROOM_S3_SECRET_KEY",
	config.ClientSecretKeyVar, config.WebhookSecretKeyVar}

// neededSecrets are the secret settings each command of the chart's pods
// reads; the long-running ones refuse to start without their keys.
var neededSecrets = map[string][]string{
	"serve":   secretVariables,
	"worker":  {"DATABASE_URL", "PRESSROOM_S3_ACCESS_KEY", "PRESSROOM_S3_SECRET_KEY", config.WebhookSecretKeyVar},
	"migrate": {"DATABASE_URL"},
}

// manifest is the part of a rendered object CheckRendered reads.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []container `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type container struct {
	Name    string   `yaml:"name"`
	Args    []string `yaml:"args"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name      string  `yaml:"name"`
		Value     *string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
}

// CheckRendered checks what the chart rendered against what the service
// reads, as compose_test.go does for docker-compose.yml: every variable a
// container gets is one config.FromEnv reads (or TMPDIR), secret settings
// come from a Secret and nowhere else, each command gets the secrets it
// needs, and config.FromEnv accepts the result with migrations left to the
// Job and the API listening on every interface.
func CheckRendered(manifests []byte) error {
	var objs []manifest
	dec := yaml.NewDecoder(bytes.NewReader(manifests))
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("parse rendered manifests: %w", err)
		}
		objs = append(objs, m)
	}
	configMaps := map[string]map[string]string{}
	for _, m := range objs {
		if m.Kind == "ConfigMap" {
			configMaps[m.Metadata.Name] = m.Data
		}
	}
	var errs []error
	seen := map[string]bool{}
	for _, m := range objs {
		if m.Kind != "Deployment" && m.Kind != "Job" {
			continue
		}
		for _, c := range m.Spec.Template.Spec.Containers {
			where := fmt.Sprintf("%s %s, container %s", m.Kind, m.Metadata.Name, c.Name)
			if len(c.Args) > 0 {
				seen[c.Args[0]] = true
			}
			errs = append(errs, checkContainer(where, c, configMaps)...)
		}
	}
	for _, cmd := range []string{"serve", "worker", "migrate"} {
		if !seen[cmd] {
			errs = append(errs, fmt.Errorf("no container runs `pressroom %s`", cmd))
		}
	}
	return errors.Join(errs...)
}

// checkContainer checks one container's environment (CheckRendered).
func checkContainer(where string, c container, configMaps map[string]map[string]string) []error {
	known := map[string]bool{"TMPDIR": true}
	for _, v := range config.Variables {
		known[v.Name] = true
	}
	var errs []error
	env := map[string]string{}
	fromSecret := map[string]bool{}
	for _, ef := range c.EnvFrom {
		switch {
		case ef.SecretRef != nil:
			errs = append(errs, fmt.Errorf("%s: envFrom Secret %s; name each secret setting (secretKeyRef)", where, ef.SecretRef.Name))
		case ef.ConfigMapRef != nil:
			data, ok := configMaps[ef.ConfigMapRef.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: ConfigMap %s is not in the chart", where, ef.ConfigMapRef.Name))
			}
			for k, v := range data {
				if slices.Contains(secretVariables, k) {
					errs = append(errs, fmt.Errorf("%s: %s is in ConfigMap %s; it belongs in the Secret", where, k, ef.ConfigMapRef.Name))
				}
				env[k] = v
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			if e.ValueFrom.SecretKeyRef.Key != e.Name {
				errs = append(errs, fmt.Errorf("%s: %s from Secret key %s; the key must be the variable's name", where, e.Name, e.ValueFrom.SecretKeyRef.Key))
			}
			fromSecret[e.Name] = true
			env[e.Name] = "placeholder-" + strings.ToLower(e.Name)
			if e.Name == "DATABASE_URL" {
				env[e.Name] = "postgres://placeholder@db:5432/pressroom"
			}
		case slices.Contains(secretVariables, e.Name):
			errs = append(errs, fmt.Errorf("%s: %s has a value in the manifest; it must come from the Secret", where, e.Name))
		case e.Value != nil:
			env[e.Name] = *e.Value
		}
	}
	for name := range env {
		if !known[name] {
			errs = append(errs, fmt.Errorf("%s: sets %s, which config.Variables does not have (renamed or misspelt?)", where, name))
		}
	}
	if len(c.Args) == 0 {
		return append(errs, fmt.Errorf("%s: no command (args)", where))
	}
	for _, name := range neededSecrets[c.Args[0]] {
		if !fromSecret[name] {
			errs = append(errs, fmt.Errorf("%s: `pressroom %s` needs %s from the Secret", where, c.Args[0], name))
		}
	}
	return append(errs, checkSettings(where, c.Args[0], env)...)
}

// checkSettings runs config.FromEnv on a container's environment.
func checkSettings(where, cmd string, env map[string]string) []error {
	cfg, err := config.FromEnv(func(name string) string { return env[name] })
	if err != nil {
		return []error{fmt.Errorf("%s: config.FromEnv refuses the settings: %w", where, err)}
	}
	var errs []error
	if cfg.Dev {
		errs = append(errs, fmt.Errorf("%s: PRESSROOM_DEV is on; it accepts the published development keys", where))
	}
	if cmd == "serve" {
		if cfg.AutoMigrate {
			errs = append(errs, fmt.Errorf("%s: PRESSROOM_AUTO_MIGRATE is on; the migration Job applies migrations", where))
		}
		if cfg.HTTPAddr != "0.0.0.0:8080" {
			errs = append(errs, fmt.Errorf("%s: listens on %s, want 0.0.0.0:8080 (the container port)", where, cfg.HTTPAddr))
		}
	}
	return errs
}
