package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// assetTypes is what GET /asset-types says the API accepts: per asset
// type ("image"), its prose title and its formats' content types.
type assetTypes map[string]struct {
	ProseTitle string `json:"prose_title"`
	SubTypes   map[string]map[string]struct {
		ContentTypes []string `json:"content_types"`
	} `json:"sub_types"`
}

// assetTypes reads GET /asset-types (plain JSON). An error leaves the
// judging to the API (POST /upload-signatures refuses a type it does not
// take); the CLI only explains it better beforehand.
func (c *session) assetTypes(ctx context.Context) (assetTypes, error) {
	req, err := c.NewRequest(ctx, http.MethodGet, "/asset-types", nil, "Accept", "application/json")
	if err != nil {
		return nil, err
	}
	r, err := c.Do(req)
	if err != nil {
		return nil, unreachable(c.Base, err)
	}
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("GET /asset-types: %d", r.Status)
	}
	var t assetTypes
	if err := json.Unmarshal(r.Raw, &t); err != nil {
		return nil, fmt.Errorf("GET /asset-types: %w", err)
	}
	return t, nil
}

// formatOrder puts the common formats first when the accepted ones are
// named; others follow alphabetically.
var formatOrder = []string{"jpeg", "png", "gif"}

// refusal explains, in plain words, why a file of contentType (as
// http.DetectContentType names its bytes) will not be accepted, or is ""
// when t accepts it or is empty (unknown: the API judges): "this file
// looks like a PDF, not an image: Pressroom accepts JPEG, PNG and GIF".
func (t assetTypes) refusal(contentType string) string {
	if len(t) == 0 {
		return ""
	}
	ct, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		ct = contentType
	}
	var formats, kinds []string
	sameKind := false
	for _, at := range t {
		kinds = append(kinds, withArticle(at.ProseTitle))
		for _, sub := range at.SubTypes {
			for name, f := range sub {
				formats = append(formats, name)
				for _, c := range f.ContentTypes {
					if strings.EqualFold(c, ct) {
						return ""
					}
				}
			}
		}
		if at.ProseTitle != "" && strings.HasPrefix(ct, at.ProseTitle+"/") {
			sameKind = true
		}
	}
	slices.SortFunc(formats, func(a, b string) int {
		ia, ib := slices.Index(formatOrder, a), slices.Index(formatOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	for i, f := range formats {
		formats[i] = strings.ToUpper(f)
	}
	slices.Sort(kinds)
	accepts := "Pressroom accepts " + joinAnd(formats)
	if sameKind {
		return "this file is " + describeType(ct) + ": " + accepts
	}
	return "this file looks like " + describeType(ct) + ", not " + strings.Join(kinds, " or ") + ": " + accepts
}

// typeNames are the content types http.DetectContentType gives, as a
// person names them.
var typeNames = map[string]string{
	"application/pdf":               "a PDF",
	"application/postscript":        "a PostScript file",
	"application/zip":               "a ZIP archive",
	"application/x-gzip":            "a gzip archive",
	"application/x-rar-compressed":  "a RAR archive",
	"application/wasm":              "a WebAssembly module",
	"application/ogg":               "an Ogg media file",
	"application/vnd.ms-fontobject": "a font",
	"application/octet-stream":      "binary data of no type Pressroom knows",
	"text/plain":                    "a text file",
	"text/html":                     "an HTML page",
	"text/xml":                      "an XML file (SVG images are not accepted)",
	"image/webp":                    "a WebP image",
	"image/bmp":                     "a BMP image",
	"image/x-icon":                  "an icon (ICO)",
	"image/avif":                    "an AVIF image",
	"image/heic":                    "a HEIC image",
	"image/tiff":                    "a TIFF image",
}

func describeType(ct string) string {
	if n, ok := typeNames[ct]; ok {
		return n
	}
	switch major, _, _ := strings.Cut(ct, "/"); major {
	case "video":
		return "a video"
	case "audio":
		return "an audio file"
	case "font":
		return "a font"
	case "image":
		return "an image of type " + ct
	}
	return "a file of type " + ct
}

func withArticle(noun string) string {
	if noun == "" {
		return "an accepted type"
	}
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// joinAnd is "A, B and C".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return "no file types"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
