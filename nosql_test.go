package pressroom_test

// Only models knows SQL (docs/architecture.md): this test type-checks every
// non-test Go file outside models/ and reports each call into bun's query
// API and each SQL string literal. What is not moved into a store yet is on
// sqlAllowed, with why; an entry that no longer violates fails the test too,
// so the list only shrinks.

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sqlAllowed lists, by file, the SQL outside models/ that has not moved into
// a store yet, and why. Remove an entry when its file is clean.
var sqlAllowed = map[string]string{}

// sqlExempt are the folders (and their subfolders) whose code may hold SQL:
// the stores themselves, and the tools and tests around the service.
var sqlExempt = []string{"models", "bench", "e2e", "testsupport", "dev", "third_party"}

// bunAllowed are the methods of bun's types that are not SQL: transactions
// and the connection's lifecycle.
var bunAllowed = map[string]bool{
	"RunInTx": true, "BeginTx": true, "Commit": true, "Rollback": true,
	"Close": true, "Ping": true, "PingContext": true, "Dialect": true,
	"AddQueryHook": true, "DB": true, "WithNamedArg": true,
}

// sqlLiteral matches a string literal that is a statement or a fragment of
// one: a leading keyword, a placeholder compared or cast, an advisory lock.
var sqlLiteral = regexp.MustCompile(`(?is)^\s*(select|insert\s+into|update\s+\S+\s+set|delete\s+from|with\s+\w+\s+as|create\s+(table|index)|alter\s+table|drop\s+table|truncate|lock\s+table)\b|\?\s*(::|=|<|>|\bin\b)|\w\s*(=|<>|<=|>=|<|>)\s*\?|pg_advisory|\bnow\(\)`)

// sqlFragment matches what a statement is built from rather than what
// starts one: an order (a direction, ORDER BY, lower(column), a column
// list ending in the id tie-breaker) or a NULL test. An order outside
// models is a models.Order, named; its SQL is models' own.
var sqlFragment = regexp.MustCompile(`\b(ASC|DESC|ORDER\s+BY|IS\s+(NOT\s+)?NULL|NULLS\s+(FIRST|LAST))\b|(?i)\blower\(\s*\w+\s*\)|^\s*(\w+\.)?\w+(\s+(asc|desc))?\s*,\s*(\w+\.)?id\s*$`)

// isSQL tells whether a string literal is SQL or a fragment of it.
func isSQL(s string) bool { return sqlLiteral.MatchString(s) || sqlFragment.MatchString(s) }

func TestOnlyModelsKnowsSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	found := sqlViolations(t)
	for file, why := range found {
		if _, ok := sqlAllowed[file]; !ok {
			t.Errorf("%s: SQL outside models/ (move it into a store in models):\n\t%s", file, strings.Join(why, "\n\t"))
		}
	}
	for file := range sqlAllowed {
		if _, ok := found[file]; !ok {
			t.Errorf("%s holds no SQL any more: remove it from sqlAllowed", file)
		}
	}
}

// sqlViolations type-checks every package of the module against the export
// data go list built and returns, by file, where it calls bun or holds SQL.
func sqlViolations(t *testing.T) map[string][]string {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	exports, dirs := listPackages(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	found := map[string][]string{}
	for path, dir := range dirs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		if exempt(rel) {
			continue
		}
		files := parseDir(t, fset, dir)
		if len(files) == 0 {
			continue
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp, FakeImportC: true, Error: func(error) {}}
		_, _ = conf.Check(path, fset, files, info)
		for _, f := range files {
			name, _ := filepath.Rel(root, fset.File(f.Pos()).Name())
			name = filepath.ToSlash(name)
			if why := fileViolations(fset, f, info); len(why) > 0 {
				found[name] = why
			}
		}
	}
	return found
}

func exempt(rel string) bool {
	for _, e := range sqlExempt {
		if rel == e || strings.HasPrefix(rel, e+"/") {
			return true
		}
	}
	return false
}

// listPackages runs go list -export over the module: each dependency's
// export data by import path, and each of the module's packages' folder.
func listPackages(t *testing.T) (exports, dirs map[string]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{.Module}}", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	exports, dirs = map[string]string{}, map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			continue
		}
		exports[f[0]] = f[1]
		if strings.HasPrefix(f[3], "github.com/pressroom/pressroom") {
			dirs[f[0]] = f[2]
		}
	}
	return exports, dirs
}

// parseDir parses a folder's non-test, non-generated Go files.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if !ast.IsGenerated(f) {
			files = append(files, f)
		}
	}
	return files
}

// fileViolations: the calls of bun's methods (not bunAllowed) and of
// database/sql's queries, and the SQL string literals, in one file.
func fileViolations(fset *token.FileSet, f *ast.File, info *types.Info) []string {
	var why []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			sel, ok := info.Selections[n]
			if !ok || sel.Kind() != types.MethodVal {
				return true
			}
			pkg := sel.Obj().Pkg()
			if pkg == nil {
				return true
			}
			name := sel.Obj().Name()
			if (pkg.Path() == "github.com/uptrace/bun" && !bunAllowed[name]) ||
				(pkg.Path() == "database/sql" && (strings.HasPrefix(name, "Query") || strings.HasPrefix(name, "Exec"))) {
				why = append(why, fset.Position(n.Pos()).String()+": calls "+name)
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(n.Value); err == nil && isSQL(s) {
				why = append(why, fset.Position(n.Pos()).String()+": SQL literal "+n.Value)
			}
		}
		return true
	})
	sort.Strings(why)
	return why
}

// TestSQLLiterals: what the literal check takes for SQL, and what it
// leaves alone. The orders and queries are ones api/ held before they
// moved into models.
func TestSQLLiterals(t *testing.T) {
	for _, s := range []string{
		"created_at DESC, id", "r.created_at DESC, r.id", "d.created_at, d.id", "r.publish_at, r.id",
		"created_at, id", "lower(file_name), id", "lower(path), id",
		"token_hash = ?", "id::text = ? AND user_id::text = ?", "revoked_at = now()",
		"chain_id = ? AND revoked_at IS NULL", "SELECT 1", "x ORDER BY y",
	} {
		if !isSQL(s) {
			t.Errorf("%q is SQL; the check missed it", s)
		}
	}
	for _, s := range []string{
		"created-at", "The query string is malformed.", "drafts, revisions", "Cannot sort by %q here.",
		"application/vnd.api+json", "id", "Descriptions are optional.", "Order by date",
	} {
		if isSQL(s) {
			t.Errorf("%q is not SQL; the check took it for SQL", s)
		}
	}
}
