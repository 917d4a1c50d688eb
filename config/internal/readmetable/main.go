// Command readmetable rewrites the configuration table in README.md from
// config.Variables: go run ./config/internal/readmetable
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/pressroom/pressroom/config"
)

const header = "| variable | default | meaning |\n|---|---|---|\n"

func main() {
	b, err := os.ReadFile("README.md")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := string(b)
	start := strings.Index(s, header)
	if start < 0 {
		fmt.Fprintln(os.Stderr, "README.md has no configuration table")
		os.Exit(1)
	}
	end := strings.Index(s[start:], "\n\n")
	var rows strings.Builder
	rows.WriteString(header)
	for _, v := range config.Variables {
		def := "(empty)"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&rows, "| `%s` | %s | %s |\n", v.Name, def, v.Meaning)
	}
	out := s[:start] + strings.TrimSuffix(rows.String(), "\n") + s[start+end:]
	if err := os.WriteFile("README.md", []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
