package cli

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pressroom/pressroom/client"
)

// UploadOptions tune Upload.
type UploadOptions struct {
	// Timeout bounds the wait for one file's processing.
	Timeout time.Duration
}

// UploadResult is one file's outcome.
type UploadResult struct {
	File     string
	UploadID string
	// URL is the asset's original when the upload finished.
	URL string
	Err error
}

// ErrSomeFailed is returned when at least one file did not become an asset.
var ErrSomeFailed = errors.New("some files failed")

// longPoll is the ?wait= of GET /asset-uploads/:id (the API allows up to 20 s).
const longPoll = "20s"

// maxNoticeRetries bounds how often a notice refused with 429
// too_many_uploads (the site's concurrent-upload limit) is sent again.
const maxNoticeRetries = 20

// Upload turns files into assets the way the API documents it
// (docs/assets.md): a signature, the file straight to storage with the
// signature's form fields, the notice, then a long poll until the upload
// finished or failed. Files go one at a time (the site's concurrent-upload
// limit is small); one line of progress per step goes to Stderr, and the
// asset URLs to Stdout at the end. A file that fails does not stop the
// others; the result is ErrSomeFailed then.
func Upload(ctx context.Context, o Options, uo UploadOptions, files []string) ([]UploadResult, error) {
	if len(files) == 0 {
		return nil, errors.New("upload: name at least one file")
	}
	if uo.Timeout <= 0 {
		uo.Timeout = 10 * time.Minute
	}
	// Files that cannot be read are reported before signing in, and a run
	// where none can be read never contacts the API.
	results := make([]UploadResult, len(files))
	readable := 0
	for i, f := range files {
		results[i].File = f
		if st, err := os.Stat(f); err != nil {
			results[i].Err = fmt.Errorf("cannot read the file: %w", err)
		} else if !st.Mode().IsRegular() {
			results[i].Err = errors.New("not a regular file")
		} else {
			readable++
		}
	}
	var c *session
	var types assetTypes
	if readable > 0 {
		var err error
		if c, err = connect(ctx, o); err != nil {
			return nil, err
		}
		// Without the table the API alone judges the types (and says so
		// less plainly); a failed sign-in or an unreachable API shows at
		// the first file.
		types, _ = c.assetTypes(ctx)
	}
	failed := 0
	for i, f := range files {
		if results[i].Err == nil {
			results[i] = c.uploadOne(ctx, o, uo, types, f, fmt.Sprintf("[%d/%d] %s", i+1, len(files), f))
		}
		if results[i].Err != nil {
			failed++
			fmt.Fprintf(o.Stderr, "[%d/%d] %s: failed: %v\n", i+1, len(files), f, results[i].Err)
		}
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
	}
	for _, r := range results {
		if r.Err == nil {
			fmt.Fprintf(o.Stdout, "%s\t%s\n", r.File, r.URL)
		}
	}
	if failed > 0 {
		return results, fmt.Errorf("%w: %d of %d", ErrSomeFailed, failed, len(files))
	}
	return results, nil
}

// openUpload opens a file to upload and names its type from its first
// bytes; a file that cannot be uploaded (not a regular file, empty, of a
// type types does not list) is refused with the reason in plain words.
func openUpload(path string, types assetTypes) (*os.File, os.FileInfo, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", fmt.Errorf("cannot read the file: %w", err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case !st.Mode().IsRegular():
		err = errors.New("not a regular file")
	case st.Size() == 0:
		err = errors.New("the file is empty")
	}
	if err != nil {
		f.Close()
		return nil, nil, "", err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	// The server decides which types it accepts (GET /asset-types) and
	// checks the bytes again; this only names what the file looks like.
	ctype := http.DetectContentType(head[:n])
	if msg := types.refusal(ctype); msg != "" {
		err = errors.New(msg)
	} else {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, nil, "", err
	}
	return f, st, ctype, nil
}

func (c *session) uploadOne(ctx context.Context, o Options, uo UploadOptions, types assetTypes, path, label string) UploadResult {
	res := UploadResult{File: path}
	f, st, ctype, err := openUpload(path, types)
	if err != nil {
		res.Err = err
		return res
	}
	defer f.Close()
	name := filepath.Base(path)

	sigResp, err := c.do(ctx, http.MethodPost, "/upload-signatures", map[string]any{"data": map[string]any{
		"type": "upload-signatures", "attributes": map[string]any{"filename": name, "content-type": ctype}}})
	if err != nil {
		res.Err = err
		return res
	}
	if sigResp.Status != http.StatusOK {
		res.Err = statusErr(sigResp, "POST", "/upload-signatures")
		return res
	}
	sig, err := sigResp.Resource()
	if err != nil {
		res.Err = err
		return res
	}
	fmt.Fprintf(o.Stderr, "%s: uploading %s (%s) to storage\n", label, humanBytes(st.Size()), ctype)
	if err := c.postToStorage(ctx, sig.Attributes, f, st.Size()); err != nil {
		res.Err = err
		return res
	}

	notice := map[string]any{"data": map[string]any{"type": "asset-uploads", "attributes": map[string]any{
		"file-name": name, "key": sig.Attributes["key"], "content-type": sig.Attributes["content-type"],
		"file-size": st.Size(), "user-agent": userAgent}}}
	up, err := c.sendNotice(ctx, o, label, notice)
	if err != nil {
		res.Err = err
		return res
	}
	res.UploadID = up.ID
	fmt.Fprintf(o.Stderr, "%s: processing (upload %s)\n", label, up.ID)
	start := time.Now()
	if up, err = c.awaitUpload(ctx, o, uo, label, up); err != nil {
		res.Err = err
		return res
	}
	if up.Attributes["status"] != "finished" {
		msg, _ := up.Attributes["error-message"].(string)
		res.Err = fmt.Errorf("Pressroom could not use the file: %s (upload %s, status %v)", msg, up.ID, up.Attributes["status"])
		return res
	}
	p := "/asset-uploads/" + up.ID + "/asset-file"
	r, err := c.do(ctx, http.MethodGet, p, nil)
	if err != nil {
		res.Err = err
		return res
	}
	if r.Status != http.StatusOK {
		res.Err = statusErr(r, "GET", p)
		return res
	}
	file, err := r.Resource()
	if err != nil {
		res.Err = err
		return res
	}
	res.URL, _ = file.Attributes["url"].(string)
	fmt.Fprintf(o.Stderr, "%s: finished in %s\n", label, time.Since(start).Round(100*time.Millisecond))
	return res
}

// sendNotice posts the upload notice, again after a while when the site
// has as many uploads processing as it may (429 too_many_uploads).
func (c *session) sendNotice(ctx context.Context, o Options, label string, notice map[string]any) (resource, error) {
	for attempt := 0; ; attempt++ {
		r, err := c.do(ctx, http.MethodPost, "/asset-uploads", notice)
		if err != nil {
			return resource{}, err
		}
		if r.Status == http.StatusTooManyRequests && attempt < maxNoticeRetries {
			wait := retryAfter(r.Header, 2*time.Second)
			fmt.Fprintf(o.Stderr, "%s: the site has too many uploads processing; trying again in %s\n", label, wait)
			if err := sleep(ctx, wait); err != nil {
				return resource{}, err
			}
			continue
		}
		if r.Status != http.StatusAccepted {
			return resource{}, statusErr(r, "POST", "/asset-uploads")
		}
		return r.Resource()
	}
}

// awaitUpload long-polls the upload until it stops processing, for at
// most uo.Timeout.
func (c *session) awaitUpload(ctx context.Context, o Options, uo UploadOptions, label string, up resource) (resource, error) {
	start := time.Now()
	deadline := start.Add(uo.Timeout)
	for up.Attributes["status"] == "processing" {
		if time.Now().After(deadline) {
			return up, fmt.Errorf("still processing after %s (upload %s): look again later with GET /asset-uploads/%s", uo.Timeout, up.ID, up.ID)
		}
		p := "/asset-uploads/" + up.ID + "?wait=" + longPoll
		r, err := c.do(ctx, http.MethodGet, p, nil)
		if err != nil {
			return up, err
		}
		if r.Status != http.StatusOK {
			return up, statusErr(r, "GET", p)
		}
		if up, err = r.Resource(); err != nil {
			return up, err
		}
		if up.Attributes["status"] == "processing" {
			fmt.Fprintf(o.Stderr, "%s: still processing… %s\n", label, time.Since(start).Round(time.Second))
		}
	}
	return up, nil
}

// postToStorage streams file to the signature's endpoint
// (NewStorageRequest) and explains a refusal.
func (c *session) postToStorage(ctx context.Context, sig map[string]any, file io.Reader, size int64) error {
	req, err := client.NewStorageRequest(ctx, sig, file, size)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("upload to storage: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var s3 struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(b, &s3) == nil && s3.Code != "" {
		if plain, ok := storageRefusals[s3.Code]; ok {
			return fmt.Errorf("%s (storage said: %d %s: %s)", plain, resp.StatusCode, s3.Code, s3.Message)
		}
		return fmt.Errorf("storage refused the file: %d %s: %s", resp.StatusCode, s3.Code, s3.Message)
	}
	return fmt.Errorf("storage refused the file: %d %.200s", resp.StatusCode, b)
}

// storageRefusals are the S3 refusals of an upload's form POST an editor
// can act on, in plain words (the signature's policy sets the limits).
var storageRefusals = map[string]string{
	"EntityTooLarge":       "the file is larger than the API accepts (PRESSROOM_MAX_UPLOAD_BYTES on the server, 25 MiB by default)",
	"EntityTooSmall":       "the file is empty",
	"AccessDenied":         "storage refused the upload: its signature has expired or does not match the file; try again",
	"ExpiredToken":         "storage refused the upload: its signature has expired; try again",
	"RequestTimeTooSkewed": "storage refused the upload: this computer's clock is too far off; set it right and try again",
}

// retryAfter reads Retry-After in seconds, bounded to a minute.
func retryAfter(h http.Header, def time.Duration) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return min(time.Duration(s)*time.Second, time.Minute)
	}
	return def
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
