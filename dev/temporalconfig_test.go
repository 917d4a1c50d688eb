package dev_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/pressroom/pressroom/dev"
)

// TestTemporalDynamicConfigInStep checks that the dev server's flags and
// the file production's Temporal reads (docker-compose.yml) set the same
// values: a setting measured on the dev server must hold in production.
func TestTemporalDynamicConfigInStep(t *testing.T) {
	f, err := os.Open("temporal-dynamicconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file := map[string]string{}
	key := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":"):
			key = strings.TrimSuffix(line, ":")
		case strings.HasPrefix(trimmed, "- value:") && key != "":
			if _, dup := file[key]; dup {
				t.Fatalf("%s: more than one value; the dev server's flags set one", key)
			}
			file[key] = strings.TrimSpace(strings.TrimPrefix(trimmed, "- value:"))
		default:
			t.Fatalf("temporal-dynamicconfig.yaml: line %q is not of the form this test reads (key:, then - value: V)", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{}
	for _, kv := range dev.TemporalDynamicConfig {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("dev.TemporalDynamicConfig: %q is not KEY=VALUE", kv)
		}
		flags[k] = v
	}
	for k, v := range flags {
		if file[k] != v {
			t.Errorf("%s: dev server %s, temporal-dynamicconfig.yaml %q", k, v, file[k])
		}
	}
	for k, v := range file {
		if _, ok := flags[k]; !ok {
			t.Errorf("%s: %s in temporal-dynamicconfig.yaml, not in dev.TemporalDynamicConfig", k, v)
		}
	}
}
