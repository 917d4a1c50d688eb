package pressroom_test

// These tests check docker-compose.yml and the Dockerfile without Docker or a
// network: the compose file is loaded and normalised with compose-go (the
// library the docker compose CLI uses) and compared with what the service
// actually reads, so the Docker path cannot drift from config.Variables.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/pressroom/pressroom/config"
)

const (
	composeFile = "docker-compose.yml"
	dockerfile  = "Dockerfile"
)

// pressroomServices run the image built from the Dockerfile.
var pressroomServices = []string{"api", "worker", "migrate", "storage-setup"}

// loadCompose parses docker-compose.yml once for all tests. Interpolation
// sees an empty environment, so the result does not depend on the machine.
var loadCompose = sync.OnceValues(func() (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithWorkingDirectory("."),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithResolvedPaths(true),
		cli.WithConsistency(true),
	)
	if err != nil {
		return nil, err
	}
	return cli.ProjectFromOptions(context.Background(), opts)
})

func composeProject(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadCompose()
	if err != nil {
		t.Fatalf("load %s: %v", composeFile, err)
	}
	return p
}

func composeService(t *testing.T, name string) types.ServiceConfig {
	t.Helper()
	s, err := composeProject(t).GetService(name)
	if err != nil {
		t.Fatalf("%s: service %q: %v", composeFile, name, err)
	}
	return s
}

// knownVariables is the set of names config.FromEnv reads.
func knownVariables() map[string]bool {
	known := make(map[string]bool, len(config.Variables))
	for _, v := range config.Variables {
		known[v.Name] = true
	}
	return known
}

// isServiceSetting reports whether an environment variable name is one the
// service would read, as opposed to one meant for a third-party image.
func isServiceSetting(name string) bool {
	return strings.HasPrefix(name, "PRESSROOM_") || name == "DATABASE_URL" || strings.HasPrefix(name, "TEMPORAL_")
}

func TestComposeServicesExist(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		service string
		image   string // expected image prefix; empty for services built here
	}{
		{"postgres", "postgres:16"},
		{"temporal", "temporalio/auto-setup:"},
		{"temporal-setup", "temporalio/admin-tools:"},
		{"temporal-ui", "temporalio/ui:"},
		{"minio", "minio/minio:"},
		{"storage-setup", ""},
		{"migrate", ""},
		{"api", ""},
		{"worker", ""},
	} {
		t.Run(tc.service, func(t *testing.T) {
			t.Parallel()
			s := composeService(t, tc.service)
			if tc.image == "" {
				if s.Build == nil {
					t.Errorf("service %q has no build section; it should run the image built from the %s", tc.service, dockerfile)
				}
				return
			}
			if !strings.HasPrefix(s.Image, tc.image) {
				t.Errorf("service %q runs image %q, want one starting with %q", tc.service, s.Image, tc.image)
			}
		})
	}
}

func TestComposePublishedPorts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		service   string
		target    uint32
		published string
	}{
		// The API is reached through the proxy (round-robin over the api
		// replicas), which TestComposeScalesOut checks.
		{"proxy", 8080, "8080"},
		{"minio", 9000, "9000"},
		{"minio", 9001, "9001"},
		{"temporal-ui", 8080, "8233"},
		{"temporal", 7233, "7233"},
	} {
		t.Run(tc.service+"/"+tc.published, func(t *testing.T) {
			t.Parallel()
			s := composeService(t, tc.service)
			for _, p := range s.Ports {
				if p.Target == tc.target && p.Published == tc.published {
					return
				}
			}
			t.Errorf("service %q does not publish host port %s to container port %d; ports: %+v",
				tc.service, tc.published, tc.target, s.Ports)
		})
	}
}

func TestComposeCommands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		service string
		command []string
	}{
		{"api", []string{"serve"}},
		{"worker", []string{"worker"}},
		{"migrate", []string{"migrate", "up"}},
		{"storage-setup", []string{"storage", "init"}},
	} {
		t.Run(tc.service, func(t *testing.T) {
			t.Parallel()
			s := composeService(t, tc.service)
			if !slices.Equal(s.Command, tc.command) {
				t.Errorf("service %q command = %q, want %q", tc.service, s.Command, tc.command)
			}
			if len(s.Entrypoint) != 0 {
				t.Errorf("service %q overrides the entrypoint with %q; it should run the image's pressroom binary", tc.service, s.Entrypoint)
			}
		})
	}
}

func TestComposeRequiredEnvironment(t *testing.T) {
	t.Parallel()
	required := []string{
		"DATABASE_URL",
		"TEMPORAL_ADDRESS",
		"PRESSROOM_S3_ENDPOINT",
		"PRESSROOM_S3_ACCESS_KEY",
		"PRESSROOM_S3_SECRET_KEY",
	}
	for _, service := range []string{"api", "worker"} {
		for _, name := range required {
			t.Run(service+"/"+name, func(t *testing.T) {
				t.Parallel()
				env := composeService(t, service).Environment
				v, ok := env[name]
				switch {
				case !ok:
					t.Errorf("service %q does not set %s", service, name)
				case v == nil || *v == "":
					t.Errorf("service %q sets %s without a value", service, name)
				}
			})
		}
	}
}

// TestComposeEnvironmentMatchesConfig keeps the compose file from drifting:
// every service setting it passes must be a variable config.FromEnv reads,
// and the values must be ones config.FromEnv accepts.
func TestComposeEnvironmentMatchesConfig(t *testing.T) {
	t.Parallel()
	known := knownVariables()
	for _, service := range pressroomServices {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			env := composeService(t, service).Environment
			values := map[string]string{}
			for name, v := range env {
				if !isServiceSetting(name) {
					continue
				}
				if !known[name] {
					t.Errorf("service %q sets %s, which is not in config.Variables (renamed or misspelt?)", service, name)
				}
				if v != nil {
					values[name] = *v
				}
			}
			cfg, err := config.FromEnv(func(name string) string { return values[name] })
			if err != nil {
				t.Fatalf("service %q: config.FromEnv rejects the compose environment: %v", service, err)
			}
			if service == "api" || service == "worker" {
				if err := cfg.CheckSecretKeys(config.ClientSecretKeyVar, config.WebhookSecretKeyVar); err != nil {
					t.Errorf("service %q would refuse to start: %v", service, err)
				}
			}
			if service == "api" {
				if cfg.HTTPAddr != "0.0.0.0:8080" {
					t.Errorf("api listens on %q, want 0.0.0.0:8080 so the published port reaches it", cfg.HTTPAddr)
				}
				if cfg.AutoMigrate {
					t.Errorf("api has PRESSROOM_AUTO_MIGRATE on; the migrate service applies migrations")
				}
				if len(cfg.CORSOrigins) == 0 {
					t.Errorf("api sets no PRESSROOM_CORS_ORIGINS; a front end on another origin could not call it")
				}
			}
		})
	}
}

// TestComposeStorageCORS: browsers upload straight to MinIO from a front
// end's origin, so MinIO must answer their CORS requests.
func TestComposeStorageCORS(t *testing.T) {
	t.Parallel()
	v, ok := composeService(t, "minio").Environment["MINIO_API_CORS_ALLOW_ORIGIN"]
	if !ok || v == nil || *v == "" {
		t.Errorf("service minio does not set MINIO_API_CORS_ALLOW_ORIGIN; browser uploads from another origin would be refused")
	}
}

func TestComposeDependencies(t *testing.T) {
	t.Parallel()
	type dep struct{ on, condition string }
	waits := []dep{
		{"postgres", types.ServiceConditionHealthy},
		{"migrate", types.ServiceConditionCompletedSuccessfully},
		{"storage-setup", types.ServiceConditionCompletedSuccessfully},
		{"temporal-setup", types.ServiceConditionCompletedSuccessfully},
	}
	cases := map[string][]dep{
		"api":            waits,
		"worker":         waits,
		"migrate":        {{"postgres", types.ServiceConditionHealthy}},
		"storage-setup":  {{"minio", types.ServiceConditionHealthy}},
		"temporal":       {{"postgres", types.ServiceConditionHealthy}},
		"temporal-setup": {{"temporal", types.ServiceConditionHealthy}},
		"temporal-ui":    {{"temporal", types.ServiceConditionHealthy}},
	}
	for service, deps := range cases {
		for _, d := range deps {
			t.Run(service+"/"+d.on, func(t *testing.T) {
				t.Parallel()
				got, ok := composeService(t, service).DependsOn[d.on]
				switch {
				case !ok:
					t.Errorf("service %q does not depend on %q", service, d.on)
				case got.Condition != d.condition:
					t.Errorf("service %q waits for %q with condition %q, want %q", service, d.on, got.Condition, d.condition)
				}
			})
		}
	}
}

// TestComposeHealthchecks checks that every service someone waits for with
// service_healthy has a healthcheck, or compose would wait forever.
func TestComposeHealthchecks(t *testing.T) {
	t.Parallel()
	p := composeProject(t)
	for _, s := range p.Services {
		for on, d := range s.DependsOn {
			if d.Condition != types.ServiceConditionHealthy {
				continue
			}
			t.Run(s.Name+"/"+on, func(t *testing.T) {
				t.Parallel()
				target := composeService(t, on)
				if target.HealthCheck == nil || target.HealthCheck.Disable || len(target.HealthCheck.Test) == 0 {
					t.Errorf("service %q waits for %q to be healthy, but %q has no healthcheck", s.Name, on, on)
				}
			})
		}
	}
}

func TestComposeSearchAttributes(t *testing.T) {
	t.Parallel()
	script := strings.Join(composeService(t, "temporal-setup").Command, " ")
	for _, name := range []string{"PressroomSiteId", "PressroomUploadId", "PressroomRevisionId", "PressroomReleaseId", "PressroomWebhookId", "PressroomOutcome"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(script, name) {
				t.Errorf("temporal-setup does not register the search attribute %s", name)
			}
		})
	}
	if !strings.Contains(script, "--type Keyword") {
		t.Errorf("temporal-setup should create the search attributes with --type Keyword; command: %s", script)
	}
	// When a scheduled revision publishes (workflows.PublishAtAttribute).
	if !strings.Contains(script, "--name PressroomPublishAt --type Datetime") {
		t.Errorf("temporal-setup does not register PressroomPublishAt as Datetime; command: %s", script)
	}
}

func TestComposeBuildsUseDockerfile(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, dockerfile)
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("the compose file builds from %s: %v", dockerfile, err)
	}
	p := composeProject(t)
	built := 0
	for _, s := range p.Services {
		if s.Build == nil {
			continue
		}
		built++
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			if s.Build.DockerfileInline != "" {
				t.Fatalf("service %q uses an inline Dockerfile; build from %s instead", s.Name, dockerfile)
			}
			got := s.Build.Dockerfile
			if !filepath.IsAbs(got) {
				got = filepath.Join(s.Build.Context, got)
			}
			if filepath.Clean(got) != want {
				t.Errorf("service %q builds from %s (context %s), want %s", s.Name, got, s.Build.Context, want)
			}
		})
	}
	if built < len(pressroomServices) {
		t.Errorf("%d services build an image, want at least %d (%v)", built, len(pressroomServices), pressroomServices)
	}
}

// TestComposeDockerfile checks the few lines the compose file relies on.
func TestComposeDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		`ENTRYPOINT ["/usr/local/bin/pressroom"]`,
		`CMD ["serve"]`,
		"EXPOSE 8080",
		"CGO_ENABLED=1",
		"./cmd/pressroom",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not contain %q", dockerfile, want)
		}
	}
	known := knownVariables()
	user := ""
	for line := range strings.Lines(text) {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "USER":
			user = fields[1]
		case "ENV":
			name, _, _ := strings.Cut(fields[1], "=")
			if isServiceSetting(name) && !known[name] {
				t.Errorf("%s sets %s, which is not in config.Variables", dockerfile, name)
			}
		}
	}
	if user == "" || user == "root" || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root:") {
		t.Errorf("%s runs as %q; the final stage should switch to a non-root user", dockerfile, user)
	}
}

// TestComposeScalesOut checks what `docker compose up --scale api=2 --scale
// worker=2` needs: api and worker publish no fixed host port, have no
// container_name and hold no state of their own (no volumes), and the proxy
// publishes 8080 and spreads requests round-robin over every address of
// the api service, refreshed often enough that scaled replicas join.
func TestComposeScalesOut(t *testing.T) {
	t.Parallel()
	p := composeProject(t)
	for _, name := range []string{"api", "worker"} {
		s := composeService(t, name)
		for _, port := range s.Ports {
			if port.Published != "" {
				t.Errorf("%s publishes host port %s: a second replica could not start", name, port.Published)
			}
		}
		if s.ContainerName != "" {
			t.Errorf("%s has container_name %q: replicas need compose's generated names", name, s.ContainerName)
		}
		if len(s.Volumes) > 0 {
			t.Errorf("%s mounts volumes %v: replicas must be stateless", name, s.Volumes)
		}
	}
	api := composeService(t, "api")
	if !slices.Contains(api.Expose, "8080") {
		t.Errorf("api exposes %v, want 8080 (the proxy's upstream port)", api.Expose)
	}
	proxy := composeService(t, "proxy")
	if !strings.HasPrefix(proxy.Image, "caddy:") {
		t.Errorf("proxy runs %q, want a caddy image", proxy.Image)
	}
	if _, ok := proxy.DependsOn["api"]; !ok {
		t.Error("proxy does not depend on api")
	}
	if len(proxy.Configs) != 1 || proxy.Configs[0].Target != "/etc/caddy/Caddyfile" {
		t.Fatalf("proxy configs %+v, want the Caddyfile at /etc/caddy/Caddyfile", proxy.Configs)
	}
	cf, ok := p.Configs[proxy.Configs[0].Source]
	if !ok {
		t.Fatalf("proxy uses config %q, which the file does not define", proxy.Configs[0].Source)
	}
	for _, want := range []string{"dynamic a api 8080", "lb_policy round_robin", "refresh", "lb_try_duration", ":8080"} {
		if !strings.Contains(cf.Content, want) {
			t.Errorf("the proxy's Caddyfile lacks %q:\n%s", want, cf.Content)
		}
	}
	if !slices.Contains(proxy.Command, "/etc/caddy/Caddyfile") {
		t.Errorf("proxy command %q does not load /etc/caddy/Caddyfile", proxy.Command)
	}
}
