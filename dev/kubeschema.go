package dev

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The Kubernetes JSON schemas kubeconform checks the Helm chart against.
//
// kubeconform downloads its schemas from GitHub by default, which CI cannot
// reach. They are made here instead, from the OpenAPI description that the
// Kubernetes release pinned in dev/tools/kubernetes-schemas ships
// (api/openapi-spec/swagger.json of the k8s.io/kubernetes module: fetched
// through the Go module proxy and checked against that go.sum), the way
// kubeconform's own openapi2jsonschema does: one file per resource kind,
// named as kubeconform looks it up ({{ .ResourceKind }}{{ .KindSuffix }}.json),
// strict (additionalProperties false wherever properties are listed), with
// the definitions it uses inlined so each file stands alone. They are
// cached in the tool cache, keyed like the tools.

// schemaFormat is part of the cache key: change it with the conversion.
const schemaFormat = "1"

// kubernetesModule is the module dev/tools/kubernetes-schemas pins.
const kubernetesModule = "k8s.io/kubernetes"

// KubernetesSchemas returns the folder of the JSON schemas, making them
// first if the cache has none for the pinned release.
func KubernetesSchemas(ctx context.Context, repoRoot string, log io.Writer) (string, error) {
	modDir := filepath.Join(repoRoot, "dev", "tools", "kubernetes-schemas")
	key, err := moduleKey(modDir)
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("create tool cache: %w", err)
	}
	dir := filepath.Join(cache, "kubernetes-schemas-"+key+"-"+schemaFormat)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(dir); err == nil { // made by another process while we waited
		return dir, nil
	}
	version := pinnedVersion(filepath.Join(modDir, "go.mod"), kubernetesModule)
	done := track(log, "Kubernetes "+version+" JSON schemas", "from dev/tools/kubernetes-schemas, once; cached in "+cache)
	err = makeSchemas(ctx, modDir, dir)
	done(err)
	return dir, err
}

// makeSchemas downloads the pinned module, converts its OpenAPI description
// and moves the result into dir only once it is complete.
func makeSchemas(ctx context.Context, modDir, dir string) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", kubernetesModule)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var mod struct {
		Dir   string
		Error string
	}
	if jerr := json.Unmarshal(out, &mod); err == nil && jerr != nil {
		err = jerr
	}
	if err != nil || mod.Error != "" || mod.Dir == "" {
		return fmt.Errorf("go mod download %s: %v %s%s", kubernetesModule, err, mod.Error, stderr.Bytes())
	}
	swagger, err := os.ReadFile(filepath.Join(mod.Dir, "api", "openapi-spec", "swagger.json"))
	if err != nil {
		return fmt.Errorf("read the Kubernetes OpenAPI description: %w", err)
	}
	files, err := ConvertSwagger(swagger)
	if err != nil {
		return err
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return fmt.Errorf("write schema: %w", err)
		}
	}
	return os.Rename(tmp, dir)
}

// SchemaLocation is kubeconform's -schema-location for the folder
// KubernetesSchemas returns.
func SchemaLocation(dir string) string {
	return filepath.Join(dir, "{{ .ResourceKind }}{{ .KindSuffix }}.json")
}

// swaggerGVK is an entry of a definition's x-kubernetes-group-version-kind.
type swaggerGVK struct {
	Group, Version, Kind string
}

// ConvertSwagger turns a Kubernetes OpenAPI v2 description into
// kubeconform's strict, standalone JSON schemas: file name -> content.
func ConvertSwagger(swagger []byte) (map[string][]byte, error) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(swagger, &doc); err != nil {
		return nil, fmt.Errorf("parse the OpenAPI description: %w", err)
	}
	if len(doc.Definitions) == 0 {
		return nil, errors.New("the OpenAPI description has no definitions")
	}
	defs := make(map[string]any, len(doc.Definitions))
	for name, def := range doc.Definitions {
		defs[name] = strictSchema(definitionSchema(name, def))
	}
	files := map[string][]byte{}
	owner := map[string]string{}
	for _, name := range sortedKeys(doc.Definitions) {
		for _, gvk := range definitionGVKs(doc.Definitions[name]) {
			file := schemaFileName(gvk)
			if prev, ok := owner[file]; ok {
				return nil, fmt.Errorf("definitions %s and %s both map to %s", prev, name, file)
			}
			owner[file] = name
			b, err := json.Marshal(standalone(defs, name, gvk))
			if err != nil {
				return nil, err
			}
			files[file] = b
		}
	}
	return files, nil
}

// definitionSchema replaces the definitions whose JSON differs from what
// their OpenAPI type says: a Quantity is written as a string or a number
// ("500m", 2). IntOrString is handled by its format in strictSchema.
func definitionSchema(name string, def map[string]any) map[string]any {
	if name == "io.k8s.apimachinery.pkg.api.resource.Quantity" {
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
	}
	return def
}

func definitionGVKs(def map[string]any) []swaggerGVK {
	raw, _ := def["x-kubernetes-group-version-kind"].([]any)
	var out []swaggerGVK
	for _, r := range raw {
		m, _ := r.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if v != "" && k != "" {
			out = append(out, swaggerGVK{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// schemaFileName is the name kubeconform's registry derives from a
// resource's kind and apiVersion: the kind lower-cased, the group's first
// label, the version ("deployment-apps-v1.json", "service-v1.json").
func schemaFileName(gvk swaggerGVK) string {
	suffix := ""
	if gvk.Group != "" {
		suffix = "-" + strings.ToLower(strings.Split(gvk.Group, ".")[0])
	}
	return strings.ToLower(gvk.Kind) + suffix + "-" + strings.ToLower(gvk.Version) + ".json"
}

// strictSchema copies an OpenAPI schema as a JSON schema: objects with
// listed properties refuse others, int-or-string accepts both, and what
// validation does not read (descriptions, x-kubernetes-* hints) is dropped.
// It walks only schema positions, so a property named like a keyword
// ("properties", "format") stays a property.
func strictSchema(node any) any {
	s, ok := node.(map[string]any)
	if !ok {
		return node
	}
	if s["format"] == "int-or-string" {
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		switch {
		case k == "description" || strings.HasPrefix(k, "x-"):
		case k == "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				props[name] = strictSchema(p)
			}
			out[k] = props
		case k == "items" || k == "additionalProperties" || k == "not":
			out[k] = strictSchema(v)
		case k == "allOf" || k == "anyOf" || k == "oneOf":
			var list []any
			for _, e := range v.([]any) {
				list = append(list, strictSchema(e))
			}
			out[k] = list
		default:
			out[k] = v
		}
	}
	_, listed := s["properties"]
	_, additional := s["additionalProperties"]
	if listed && !additional && s["x-kubernetes-preserve-unknown-fields"] != true {
		out["additionalProperties"] = false
	}
	return out
}

// standalone is the schema of one kind: its definition, with apiVersion and
// kind pinned to it, and every definition it refers to, directly or not,
// under "definitions", where the OpenAPI refs (#/definitions/…) point.
func standalone(defs map[string]any, name string, gvk swaggerGVK) map[string]any {
	root := map[string]any{}
	for k, v := range defs[name].(map[string]any) {
		root[k] = v
	}
	if props, ok := root["properties"].(map[string]any); ok {
		apiVersion := gvk.Version
		if gvk.Group != "" {
			apiVersion = gvk.Group + "/" + gvk.Version
		}
		pinned := map[string]any{}
		for k, v := range props {
			pinned[k] = v
		}
		pinned["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
		pinned["kind"] = map[string]any{"type": "string", "enum": []any{gvk.Kind}}
		root["properties"] = pinned
	}
	used := map[string]any{}
	var visit func(any)
	visit = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				target := strings.TrimPrefix(ref, "#/definitions/")
				if _, seen := used[target]; !seen && defs[target] != nil {
					used[target] = defs[target]
					visit(defs[target])
				}
			}
			for _, v := range n {
				visit(v)
			}
		case []any:
			for _, v := range n {
				visit(v)
			}
		}
	}
	visit(root)
	if len(used) > 0 {
		root["definitions"] = used
	}
	return root
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
