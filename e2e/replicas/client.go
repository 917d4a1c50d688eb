package replicas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/pressroom/pressroom/client"
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

// result is the client's answer (or error) as a Result.
func result(r *client.Response, err error) Result {
	if r == nil {
		return Result{Err: err}
	}
	return Result{Status: r.Status, Header: r.Header, Raw: r.Raw, Err: err}
}

// Send sends a JSON:API request to base (a replica's URL or the proxy's)
// with the API's Go client (package client).
func Send(ctx context.Context, hc *http.Client, base, token, method, path string, body any) Result {
	c := &client.Client{Base: base, Token: token, HTTP: hc}
	return result(c.Send(ctx, method, path, body))
}

// Form posts an OAuth form to base.
func Form(ctx context.Context, hc *http.Client, base, path string, v url.Values) Result {
	c := &client.Client{Base: base, HTTP: hc}
	return result(c.PostForm(ctx, path, v))
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
	req, err := client.NewStorageRequest(ctx, a, bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return Result{}, err
	}
	if st := result((&client.Client{HTTP: hc}).Do(req)); st.Err != nil || st.Status >= 300 {
		return st, fmt.Errorf("storage upload = %s", st)
	}
	return Send(ctx, hc, base, token, http.MethodPost, "/asset-uploads", map[string]any{"data": map[string]any{"type": "asset-uploads",
		"attributes": map[string]any{"file-name": filename, "key": a["key"], "content-type": contentType,
			"file-size": len(file), "user-agent": "pressroom-replicas"}}}), nil
}
