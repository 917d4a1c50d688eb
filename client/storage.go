package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
)

// storageFields maps the signature's attributes to the S3 POST form fields
// (docs/assets.md §1), in the order S3 wants them: every field before file.
var storageFields = [][2]string{
	{"key", "key"}, {"acl", "acl"}, {"Content-Type", "content-type"}, {"policy", "policy"},
	{"x-amz-credential", "x-storage-credential"}, {"x-amz-algorithm", "x-storage-algorithm"},
	{"x-amz-date", "x-storage-date"}, {"x-amz-signature", "x-storage-signature"},
}

// NewStorageRequest is the POST of file (size bytes) to an upload
// signature's endpoint (sig: the signature's attributes), as a browser
// form sends it: the signature's fields under their S3 names, then the
// file, streamed. The length is given up front: S3 and MinIO refuse a POST
// form sent chunked. The tests and benchmarks upload through it too.
func NewStorageRequest(ctx context.Context, sig map[string]any, file io.Reader, size int64) (*http.Request, error) {
	endpoint, _ := sig["endpoint"].(string)
	if endpoint == "" {
		return nil, errors.New("the signature has no endpoint")
	}
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	for _, f := range storageFields {
		v, _ := sig[f[1]].(string)
		if err := mw.WriteField(f[0], v); err != nil {
			return nil, err
		}
	}
	if _, err := mw.CreateFormFile("file", "upload"); err != nil {
		return nil, err
	}
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	body := io.MultiReader(&head, io.LimitReader(file, size), strings.NewReader(tail))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(head.Len()) + size + int64(len(tail))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req, nil
}
