package api

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/api/jsonapi"
)

// Optimistic concurrency (DESIGN.md §2): every resource has an integer
// version, exposed as meta.version and as the ETag. A write that names a
// stale version, by If-Match or by meta.version in the body, gets 412 and
// changes nothing; the write itself is conditional on the version
// (UPDATE ... WHERE version = ?), so two racing writes cannot both land.

// etag is the strong entity tag of a resource version.
func etag(id string, version int) string { return `"` + id + `.` + strconv.Itoa(version) + `"` }

// versioned adds meta.version to a resource.
func versioned(r *jsonapi.Resource, version int) *jsonapi.Resource {
	if r.Meta == nil {
		r.Meta = map[string]any{}
	}
	r.Meta["version"] = version
	return r
}

// setETag sets the ETag header for a single-resource response.
func setETag(c *fiber.Ctx, id string, version int) { c.Set(fiber.HeaderETag, etag(id, version)) }

// checkVersion compares the client's expectation with the stored version:
// If-Match (an ETag list, or *) and meta.version from the request body
// (nil when absent). No expectation at all lets the write through.
func checkVersion(c *fiber.Ctx, id string, current int, bodyVersion *int) error {
	if im := strings.TrimSpace(c.Get(fiber.HeaderIfMatch)); im != "" && im != "*" {
		ok := false
		for _, tag := range strings.Split(im, ",") {
			if strings.TrimPrefix(strings.TrimSpace(tag), "W/") == etag(id, current) {
				ok = true
			}
		}
		if !ok {
			return stale(current).AtHeader("If-Match")
		}
	}
	if bodyVersion != nil && *bodyVersion != current {
		return stale(current).AtPointer("/data/meta/version")
	}
	return nil
}

// stale answers a write with an outdated precondition; current is the
// stored version, or 0 when it changed under the lock just now.
func stale(current int) *jsonapi.Error {
	at := ""
	if current > 0 {
		at = fmt.Sprintf(" (it is at version %d)", current)
	}
	return jsonapi.NewError(fiber.StatusPreconditionFailed, "stale_version",
		"The resource changed since you read it"+at+"; read it again and reapply your change.")
}

// metaVersion reads meta.version from a request resource's meta.
func metaVersion(meta map[string]any) (*int, error) {
	v, ok := meta["version"]
	if !ok {
		return nil, nil
	}
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) || f < 1 {
		return nil, jsonapi.BadRequest("invalid_member", "meta.version must be a positive whole number.").AtPointer("/data/meta/version")
	}
	n := int(f)
	return &n, nil
}
