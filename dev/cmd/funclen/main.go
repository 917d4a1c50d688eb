// Command funclen fails when a function in the service's own code is longer
// than 80 lines, so long functions get split along their phases instead of
// growing (issue 26). `make vet` runs it from the repository's root.
//
// What it counts: every top-level function and method declaration with a
// body (go/ast FuncDecl), from the line of its `func` keyword to the line of
// its closing brace, both included; its doc comment is not counted. A func
// literal is counted as part of the function it is written in, not on its
// own.
//
// What it reads: every .go file under the root except tests (_test.go),
// generated files (a "// Code generated ... DO NOT EDIT." line, as go/ast
// IsGenerated reads it), and the trees bench/, e2e/, testsupport/,
// third_party/, testdata/ and hidden directories: benchmarks, end-to-end
// tests, test harness and vendored code are not the service.
//
// The allow-list (dev/funclen-allow.txt) names, one a line as
// `path:Func reason`, the functions that are over the limit and may stay so
// for the stated reason; blank lines and lines starting with # are ignored.
// A method is written Type.Method. funclen fails for a function over the
// limit that is not listed and for a listed one that is no longer over it (or
// no longer exists), so the list only shrinks: remove its line when you split
// the function.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "repository root")
	allowPath := flag.String("allow", "dev/funclen-allow.txt", "allow-list, relative to the root")
	limit := flag.Int("max", 80, "longest function allowed, in lines")
	flag.Parse()
	ok, err := run(os.Stdout, *root, *allowPath, *limit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// fn is one function over the limit.
type fn struct {
	key   string // path:Func, path relative to the root with forward slashes
	line  int    // of its func keyword
	lines int
}

// run reports, on w, every function over limit that the allow-list does not
// name and every allow-list entry that is not over limit; ok is false when
// it reported anything.
func run(w io.Writer, root, allowPath string, limit int) (ok bool, err error) {
	allow, err := readAllow(filepath.Join(root, allowPath))
	if err != nil {
		return false, err
	}
	long, err := longFuncs(root, limit)
	if err != nil {
		return false, err
	}
	ok = true
	seen := map[string]bool{}
	for _, f := range long {
		seen[f.key] = true
		if _, listed := allow[f.key]; !listed {
			path, name, _ := strings.Cut(f.key, ":")
			fmt.Fprintf(w, "%s:%d: %s is %d lines, over %d: split it along its phases (or add it to %s with the reason it cannot be)\n", path, f.line, name, f.lines, limit, allowPath)
			ok = false
		}
	}
	var stale []string
	for key := range allow {
		if !seen[key] {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale)
	for _, key := range stale {
		fmt.Fprintf(w, "%s is listed in %s but is not over %d lines (or no longer exists): remove its line\n", key, allowPath, limit)
		ok = false
	}
	return ok, nil
}

// readAllow reads the allow-list into path:Func -> reason. An entry without
// a reason is an error: the list is for what is written down as justified.
func readAllow(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	allow := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" || !strings.Contains(key, ":") {
			return nil, fmt.Errorf("%s:%d: want `path:Func reason`, got %q", path, n, line)
		}
		if _, dup := allow[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", path, n, key)
		}
		allow[key] = strings.TrimSpace(reason)
	}
	return allow, sc.Err()
}

// skipDirs are the trees that are not the service's own code.
var skipDirs = map[string]bool{"bench": true, "e2e": true, "testsupport": true, "third_party": true, "testdata": true}

// longFuncs returns the functions over limit in the files funclen reads,
// sorted by key.
func longFuncs(root string, limit int) ([]fn, error) {
	var long []fn
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (skipDirs[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		found, err := fileLongFuncs(path, filepath.ToSlash(rel), limit)
		long = append(long, found...)
		return err
	})
	sort.Slice(long, func(i, j int) bool { return long[i].key < long[j].key })
	return long, err
}

// fileLongFuncs returns the functions over limit in one file, none if the
// file is generated.
func fileLongFuncs(path, rel string, limit int) ([]fn, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(file) {
		return nil, nil
	}
	var long []fn
	for _, decl := range file.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Pos()).Line
		lines := fset.Position(fd.End()).Line - start + 1
		if lines > limit {
			long = append(long, fn{key: rel + ":" + funcName(fd), line: start, lines: lines})
		}
	}
	return long, nil
}

// funcName is Func for a function and Type.Method for a method, whether
// the receiver is a pointer or generic.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
