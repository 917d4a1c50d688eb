// Command openapi prints the API's OpenAPI description, as GET /openapi.json
// serves it, without servers and without starting one: for generating a
// client in another language, or reading the description offline.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/config"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	c, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return err
	}
	// No database, Temporal or storage: building the app and reading the
	// description touches none of them.
	app, err := api.New(api.Deps{Config: c, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	resp, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil), -1)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return err
	}
	// The server's URL is the deployment's; clients are given theirs.
	delete(doc, "servers")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
