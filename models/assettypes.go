package models

import "strings"

// AssetFormat is one file format an asset may have. The same table answers
// GET /asset-types and decides which uploads are accepted, so the two can
// never disagree.
type AssetFormat struct {
	Title        string   `json:"title"`
	ContentTypes []string `json:"content_types"`
	Extensions   []string `json:"extensions"`
	Embeddable   bool     `json:"embeddable"`
	// Magic is the leading bytes files of this format start with (any of them).
	Magic [][]byte `json:"-"`
}

// AssetType is one kind of asset, with its sub-types and their formats.
type AssetType struct {
	Title      string                            `json:"title"`
	ProseTitle string                            `json:"prose_title"`
	SubTypes   map[string]map[string]AssetFormat `json:"sub_types"`
}

// AssetTypes is the table of asset types, keyed by asset type key, exactly
// in the shape GET /asset-types returns.
type AssetTypes map[string]AssetType

// DefaultAssetTypes returns the asset types Pressroom accepts: images in JPEG, PNG and GIF.
func DefaultAssetTypes() AssetTypes {
	return AssetTypes{
		"image": {
			Title:      "Image",
			ProseTitle: "image",
			SubTypes: map[string]map[string]AssetFormat{
				"asset_image": {
					"jpeg": {Title: "JPEG image", ContentTypes: []string{"image/jpeg", "image/pjpeg"}, Extensions: []string{"jpg", "jpeg", "jpe"}, Embeddable: true,
						Magic: [][]byte{{0xFF, 0xD8, 0xFF}}},
					"png": {Title: "PNG image", ContentTypes: []string{"image/png"}, Extensions: []string{"png"}, Embeddable: true,
						Magic: [][]byte{{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}}},
					"gif": {Title: "GIF image", ContentTypes: []string{"image/gif"}, Extensions: []string{"gif"}, Embeddable: true,
						Magic: [][]byte{[]byte("GIF87a"), []byte("GIF89a")}},
				},
			},
		},
	}
}

// AssetKind names where a content type sits in the table.
type AssetKind struct {
	Type, SubType, Format string
	AssetFormat
}

// Lookup finds the format a MIME type belongs to. Parameters and case are
// ignored ("image/PNG; charset=x" is image/png).
func (t AssetTypes) Lookup(contentType string) (AssetKind, bool) {
	ct := strings.ToLower(strings.TrimSpace(contentType))
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = strings.TrimSpace(ct[:i])
	}
	for typ, at := range t {
		for sub, formats := range at.SubTypes {
			for name, f := range formats {
				for _, c := range f.ContentTypes {
					if c == ct {
						return AssetKind{Type: typ, SubType: sub, Format: name, AssetFormat: f}, true
					}
				}
			}
		}
	}
	return AssetKind{}, false
}
