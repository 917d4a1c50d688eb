package pressroom_test

// These tests check the Helm chart (deploy/helm/pressroom) without Helm: the
// variable names its files mention must be ones config.FromEnv reads, and
// what it assumes of the image must match the Dockerfile. `make vet` renders
// the chart too (devstack chart: helm lint, kubeconform, dev.CheckRendered).

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// chartDir is the chart's folder (dev.ChartDir).
const chartDir = "deploy/helm/pressroom"

// serviceVariable matches the names of settings the service reads.
var serviceVariable = regexp.MustCompile(`\b(?:PRESSROOM_[A-Z0-9_]+|TEMPORAL_[A-Z0-9_]+|DATABASE_URL)\b`)

// TestChartVariablesMatchConfig: every setting named anywhere in the chart
// (templates, values, NOTES.txt, the CI values) is in config.Variables, so a
// renamed or misspelt variable cannot hide in a branch of a template that
// the rendered check does not reach.
func TestChartVariablesMatchConfig(t *testing.T) {
	t.Parallel()
	known := knownVariables()
	files := 0
	err := filepath.WalkDir(chartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for i, line := range strings.Split(string(b), "\n") {
			for _, name := range serviceVariable.FindAllString(line, -1) {
				if !known[name] {
					t.Errorf("%s:%d names %s, which is not in config.Variables (renamed or misspelt?)", path, i+1, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Fatalf("read %d files under %s; is the chart there?", files, chartDir)
	}
}

// chartValues is the part of values.yaml these tests read.
type chartValues struct {
	Config             map[string]any `yaml:"config"`
	PodSecurityContext struct {
		RunAsUser  int `yaml:"runAsUser"`
		RunAsGroup int `yaml:"runAsGroup"`
	} `yaml:"podSecurityContext"`
}

func readValues(t *testing.T, path string) chartValues {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v chartValues
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// TestChartConfigKeys: the `config` settings of the values files go into a
// ConfigMap, so each must be a variable and none a secret one.
func TestChartConfigKeys(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"values.yaml", "ci/options-values.yaml"} {
		path := filepath.Join(chartDir, f)
		v := readValues(t, path)
		if len(v.Config) == 0 && f == "values.yaml" {
			t.Errorf("%s: no config section", path)
		}
		for name := range v.Config {
			if !knownVariables()[name] {
				t.Errorf("%s: config.%s is not in config.Variables", path, name)
			}
			if strings.Contains(name, "SECRET") || name == "DATABASE_URL" || strings.HasSuffix(name, "ACCESS_KEY") {
				t.Errorf("%s: config.%s is a secret setting; it belongs in the Secret, not the ConfigMap", path, name)
			}
		}
	}
}

// TestChartMatchesDockerfile: the pods run as the image's numeric user
// (runAsNonRoot can only check a number) on the port it exposes.
func TestChartMatchesDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	var user string
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "USER" {
			user = f[1]
		}
	}
	uid, gid, _ := strings.Cut(user, ":")
	v := readValues(t, filepath.Join(chartDir, "values.yaml"))
	if strconv.Itoa(v.PodSecurityContext.RunAsUser) != uid || strconv.Itoa(v.PodSecurityContext.RunAsGroup) != gid {
		t.Errorf("values.yaml runs pods as %d:%d, the Dockerfile's user is %q",
			v.PodSecurityContext.RunAsUser, v.PodSecurityContext.RunAsGroup, user)
	}
	api, err := os.ReadFile(filepath.Join(chartDir, "templates", "api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "EXPOSE 8080") || !strings.Contains(string(api), "containerPort: 8080") {
		t.Errorf("the API's container port in templates/api.yaml and the Dockerfile's EXPOSE should both be 8080")
	}
	for _, cmd := range []string{`args: ["serve"]`, `args: ["worker"]`} {
		found := false
		for _, f := range []string{"api.yaml", "worker.yaml"} {
			b, err := os.ReadFile(filepath.Join(chartDir, "templates", f))
			if err != nil {
				t.Fatal(err)
			}
			found = found || strings.Contains(string(b), cmd)
		}
		if !found {
			t.Errorf("no template runs the image's entrypoint with %s", cmd)
		}
	}
	if migrate, err := os.ReadFile(filepath.Join(chartDir, "templates", "migrate.yaml")); err != nil ||
		!strings.Contains(string(migrate), `args: ["migrate", "up"]`) ||
		!slices.ContainsFunc(strings.Split(string(migrate), "\n"), func(l string) bool {
			return strings.Contains(l, "helm.sh/hook: pre-install,pre-upgrade")
		}) {
		t.Errorf("templates/migrate.yaml should run `migrate up` as a pre-install,pre-upgrade hook (%v)", err)
	}
}
