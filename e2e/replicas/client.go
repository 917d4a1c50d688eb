package replicas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pressroom/pressroom/cli"
)

// Result is an answer read without a *testing.T, so goroutines (load
// generators) can send requests and the test checks them afterwards.
type Result struct {
	Status int
	Header http.Header
	Raw    []byte
	Err    error
}

func (r Result) String() string {
	if r.Err != nil {
		return r.Err.Error()
	}
	return fmt.Sprintf("%d %.400s", r.Status, r.Raw)
}

// Send sends a JSON:API request to base (a replica's URL or the proxy's).
func Send(ctx context.Context, hc *http.Client, base, token, method, path string, body any) Result {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return Result{Err: err}
	}
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(hc, req)
}

// Form posts an OAuth form to base.
func Form(ctx context.Context, hc *http.Client, base, path string, v url.Values) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(v.Encode()))
	if err != nil {
		return Result{Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(hc, req)
}

func do(hc *http.Client, req *http.Request) Result {
	resp, err := hc.Do(req)
	if err != nil {
		return Result{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return Result{Status: resp.StatusCode, Header: resp.Header, Raw: raw, Err: err}
}

// Upload does what a browser does for one file: asks base for a
// signature, posts the file to storage with it, and notifies base. It
// returns the notice's answer (202 with the upload resource when taken);
// a failure before the notice is an error.
func Upload(ctx context.Context, hc *http.Client, base, token, filename, contentType string, file []byte) (Result, error) {
	sig := Send(ctx, hc, base, token, http.MethodPost, "/upload-signatures", map[string]any{
		"data": map[string]any{"type": "upload-signatures", "attributes": map[string]any{"filename": filename, "content-type": contentType}}})
	if sig.Err != nil || sig.Status != 200 {
		return sig, fmt.Errorf("POST /upload-signatures = %s", sig)
	}
	var d struct {
		Data struct{ Attributes map[string]any }
	}
	if err := json.Unmarshal(sig.Raw, &d); err != nil {
		return sig, err
	}
	a := d.Data.Attributes
	req, err := cli.NewStorageRequest(ctx, a, bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return Result{}, err
	}
	if st := do(hc, req); st.Err != nil || st.Status >= 300 {
		return st, fmt.Errorf("storage upload = %s", st)
	}
	return Send(ctx, hc, base, token, http.MethodPost, "/asset-uploads", map[string]any{"data": map[string]any{"type": "asset-uploads",
		"attributes": map[string]any{"file-name": filename, "key": a["key"], "content-type": contentType,
			"file-size": len(file), "user-agent": "pressroom-replicas"}}}), nil
}
