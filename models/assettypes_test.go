package models_test

import (
	"errors"
	"testing"

	"github.com/pressroom/pressroom/models"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestAssetTypeLookup(t *testing.T) {
	t.Parallel()
	types := models.DefaultAssetTypes()
	cases := []struct {
		contentType, format string
		ok                  bool
	}{
		{"image/png", "png", true},
		{"IMAGE/PNG; charset=binary", "png", true},
		{"image/jpeg", "jpeg", true},
		{"image/pjpeg", "jpeg", true},
		{"image/gif", "gif", true},
		{"image/svg+xml", "", false}, // scripts inside; not accepted
		{"text/html", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		k, ok := types.Lookup(tc.contentType)
		if ok != tc.ok || k.Format != tc.format {
			t.Errorf("Lookup(%q) = %q %v, want %q %v", tc.contentType, k.Format, ok, tc.format, tc.ok)
		}
		if ok && (k.Type != "image" || k.SubType != "asset_image" || len(k.Magic) == 0) {
			t.Errorf("Lookup(%q) = %+v", tc.contentType, k)
		}
	}
}
