package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/pressroom/pressroom/config"
)

// PostPolicy is an S3 browser-form upload policy (SigV4) and the form
// fields that go with it.
type PostPolicy struct {
	Endpoint   string // URL the form posts to: <public endpoint>/<bucket>
	Key        string
	ACL        string
	Policy     string // base64 policy document
	Algorithm  string
	Credential string
	Date       string
	Signature  string
}

// SignPost builds and signs a policy allowing exactly one object: key, the
// content type, a size from 1 to maxBytes, acl "private", until expires.
// It is pure computation (no request to storage), so handlers can call it.
// minio-go's own PostPolicy cannot express the acl condition, and the spec's
// signature carries an acl a client will send back.
func SignPost(s config.Storage, key, contentType string, maxBytes int64, now, expires time.Time) (PostPolicy, error) {
	now = now.UTC()
	p := PostPolicy{
		Endpoint:   s.PublicEndpoint + "/" + s.UploadsBucket,
		Key:        key,
		ACL:        "private",
		Algorithm:  "AWS4-HMAC-SHA256",
		Credential: signer.GetCredential(s.AccessKey, s.Region, now, signer.ServiceTypeS3),
		Date:       now.Format("20060102T150405Z"),
	}
	doc := map[string]any{
		"expiration": expires.UTC().Format("2006-01-02T15:04:05.000Z"),
		"conditions": []any{
			map[string]string{"bucket": s.UploadsBucket},
			[]string{"eq", "$key", key},
			map[string]string{"acl": p.ACL},
			[]string{"eq", "$Content-Type", contentType},
			[]any{"content-length-range", 1, maxBytes},
			map[string]string{"x-amz-algorithm": p.Algorithm},
			map[string]string{"x-amz-credential": p.Credential},
			map[string]string{"x-amz-date": p.Date},
		},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return p, fmt.Errorf("encode post policy: %w", err)
	}
	p.Policy = base64.StdEncoding.EncodeToString(raw)
	p.Signature = signer.PostPresignSignatureV4(p.Policy, now, s.SecretKey, s.Region)
	return p, nil
}
