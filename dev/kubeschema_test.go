package dev

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A few definitions shaped like Kubernetes' swagger.json: a resource in a
// named group, one in the core group, one in a dotted group, the IntOrString
// and Quantity types, a property named like a keyword, a recursive type and
// one nothing refers to.
const testSwagger = `{"definitions": {
  "io.k8s.api.apps.v1.Deployment": {
    "description": "a deployment",
    "type": "object",
    "properties": {
      "apiVersion": {"type": "string"},
      "kind": {"type": "string"},
      "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
      "spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"}
    },
    "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}]
  },
  "io.k8s.api.apps.v1.DeploymentSpec": {
    "type": "object",
    "required": ["selector"],
    "properties": {
      "replicas": {"type": "integer", "format": "int32"},
      "maxUnavailable": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
      "limits": {"type": "object", "additionalProperties": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}},
      "properties": {"type": "object", "properties": {"format": {"type": "string"}}},
      "schema": {"$ref": "#/definitions/io.k8s.example.Props"},
      "selector": {"type": "object", "x-kubernetes-map-type": "atomic"}
    }
  },
  "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
    "type": "object",
    "properties": {"name": {"type": "string"}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}}
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"description": "int or string", "type": "string", "format": "int-or-string"},
  "io.k8s.apimachinery.pkg.api.resource.Quantity": {"description": "quantity", "type": "string"},
  "io.k8s.example.Props": {
    "type": "object",
    "properties": {"items": {"$ref": "#/definitions/io.k8s.example.Props"}, "free": {"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": true}}
  },
  "io.k8s.example.Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
  "io.k8s.api.core.v1.Service": {
    "type": "object",
    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}},
    "x-kubernetes-group-version-kind": [{"group": "", "kind": "Service", "version": "v1"}]
  },
  "io.k8s.api.rbac.v1.ClusterRole": {
    "type": "object",
    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}},
    "x-kubernetes-group-version-kind": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "version": "v1"}]
  }
}}`

func TestConvertSwagger(t *testing.T) {
	t.Parallel()
	files, err := ConvertSwagger([]byte(testSwagger))
	if err != nil {
		t.Fatal(err)
	}
	// The names kubeconform's registry asks for (pkg/registry schemaPath):
	// kind, first label of the group, version.
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"clusterrole-rbac-v1.json", "deployment-apps-v1.json", "service-v1.json"}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	var d map[string]any
	if err := json.Unmarshal(files["deployment-apps-v1.json"], &d); err != nil {
		t.Fatal(err)
	}
	get := func(path ...string) any {
		t.Helper()
		var n any = d
		for _, p := range path {
			m, ok := n.(map[string]any)
			if !ok {
				t.Fatalf("%s: not an object at %q", strings.Join(path, "/"), p)
			}
			n = m[p]
		}
		return n
	}
	defs := "definitions"
	spec := []string{defs, "io.k8s.api.apps.v1.DeploymentSpec"}
	checks := []struct {
		name string
		got  any
		want string
	}{
		{"strict root", get("additionalProperties"), "false"},
		{"kind pinned", get("properties", "kind", "enum"), `["Deployment"]`},
		{"apiVersion pinned", get("properties", "apiVersion", "enum"), `["apps/v1"]`},
		{"strict definition", get(append(spec, "additionalProperties")...), "false"},
		{"required kept", get(append(spec, "required")...), `["selector"]`},
		{"int-or-string", get(defs, "io.k8s.apimachinery.pkg.util.intstr.IntOrString"), `{"oneOf":[{"type":"string"},{"type":"integer"}]}`},
		{"quantity", get(defs, "io.k8s.apimachinery.pkg.api.resource.Quantity"), `{"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{"a map keeps its value schema", get(append(spec, "properties", "limits", "additionalProperties")...), `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}`},
		{"a property named properties", get(append(spec, "properties", "properties")...), `{"additionalProperties":false,"properties":{"format":{"type":"string"}},"type":"object"}`},
		{"an object without properties stays open", get(append(spec, "properties", "selector")...), `{"type":"object"}`},
		{"preserve-unknown-fields stays open", get(defs, "io.k8s.example.Props", "properties", "free"), `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{"description dropped", get("description"), "null"},
	}
	for _, c := range checks {
		b, _ := json.Marshal(c.got)
		if string(b) != c.want {
			t.Errorf("%s: %s, want %s", c.name, b, c.want)
		}
	}
	// Every definition reached, the recursive one once, nothing else.
	var used []string
	for name := range get(defs).(map[string]any) {
		used = append(used, name)
	}
	slices.Sort(used)
	want := []string{"io.k8s.api.apps.v1.DeploymentSpec", "io.k8s.apimachinery.pkg.api.resource.Quantity",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.example.Props"}
	if !slices.Equal(used, want) {
		t.Errorf("definitions %v, want %v", used, want)
	}
	var svc map[string]any
	if err := json.Unmarshal(files["service-v1.json"], &svc); err != nil {
		t.Fatal(err)
	}
	if _, ok := svc["definitions"]; ok {
		t.Errorf("service-v1.json has definitions though it refers to none")
	}
}

func TestConvertSwaggerRefusesCollisions(t *testing.T) {
	t.Parallel()
	// Two groups with the same first label would share a file name, and one
	// kind would be checked against the other's schema.
	swagger := `{"definitions": {
	  "a.Thing": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "x.one.io", "kind": "Thing", "version": "v1"}]},
	  "b.Thing": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "x.two.io", "kind": "Thing", "version": "v1"}]}
	}}`
	if _, err := ConvertSwagger([]byte(swagger)); err == nil || !strings.Contains(err.Error(), "thing-x-v1.json") {
		t.Errorf("ConvertSwagger = %v, want an error naming thing-x-v1.json", err)
	}
	if _, err := ConvertSwagger([]byte(`{"definitions": {}}`)); err == nil {
		t.Error("ConvertSwagger accepted a description without definitions")
	}
}

// TestKubernetesSchemasCached: schemas already in the cache under the
// pinned module's key are used as they are, with no download; after a pin
// bump they are not. Not parallel: t.Setenv.
func TestKubernetesSchemasCached(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("PRESSROOM_TOOLS_CACHE", cache)
	root := t.TempDir()
	modDir := filepath.Join(root, "dev", "tools", "kubernetes-schemas")
	// A module no proxy serves: reaching `go mod download` fails the test.
	writeModule(t, modDir, "module pressroom.dev/tools/kubernetes-schemas\n\ngo 1.26\n\nrequire k8s.io/kubernetes v0.0.0-pressroom-fake\n", "")
	key, err := moduleKey(modDir)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "kubernetes-schemas-"+key+"-"+schemaFormat)
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := KubernetesSchemas(context.Background(), root, io.Discard)
	if err != nil || got != want {
		t.Errorf("KubernetesSchemas = %q, %v; want the cached %q", got, err, want)
	}
	if loc := SchemaLocation(got); loc != filepath.Join(want, "{{ .ResourceKind }}{{ .KindSuffix }}.json") {
		t.Errorf("SchemaLocation = %q", loc)
	}
	writeModule(t, modDir, "module pressroom.dev/tools/kubernetes-schemas\n\ngo 1.26\n\nrequire k8s.io/kubernetes v0.0.1-pressroom-fake\n", "")
	var log bytes.Buffer
	if got, err := KubernetesSchemas(context.Background(), root, &log); err == nil {
		t.Errorf("after the pin changed, KubernetesSchemas = %q without making schemas", got)
	}
	if !strings.Contains(log.String(), "building Kubernetes v0.0.1-pressroom-fake JSON schemas") {
		t.Errorf("the log does not say which schemas it makes:\n%s", log.String())
	}
}
