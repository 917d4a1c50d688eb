package pressroom_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// draftsByItem finds SQL that reads the drafts table: FROM or JOIN drafts.
var draftsByItem = regexp.MustCompile(`(?i)\b(from|join)\s+drafts\b`)

// TestDraftJoinsNameTheLocale: every SQL literal in models/ that reads the
// drafts table by item (it names item_id) names the locale too
// (docs/locales.md): a record has a shared draft (locale ”) and up to one
// draft per locale, so a join by item alone would return a row per draft.
// A statement that means the shared draft says d.locale = ”; one that
// means every locale's says so in a comment (/* any locale */).
func TestDraftJoinsNameTheLocale(t *testing.T) {
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir("models", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if draftsByItem.MatchString(s) && strings.Contains(s, "item_id") && !strings.Contains(s, "locale") {
				bad = append(bad, fset.Position(lit.Pos()).String())
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: SQL reads drafts by item without naming the locale (d.locale = '' for the shared draft, /* any locale */ for all)", b)
	}
}
