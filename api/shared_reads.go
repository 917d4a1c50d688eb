package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/pressroom/pressroom/coalesce"
	"github.com/pressroom/pressroom/models/drafts"
)

// sharedReads lets concurrent identical GETs share one run of their handler:
// same method, site, path and query. Only a run that starts after a request
// arrived answers it (package coalesce), so a read never shows the content
// as it was before something the reader could know had happened (a publish
// that returned, a draft saved). It is not a cache: nothing outlives the
// requests waiting for it.
//
// Only handlers whose response depends on nothing but the site, the path
// and the query may be wrapped: not the user, not other headers.
type sharedReads struct {
	group coalesce.Group[*sharedResponse]
}

// sharedResponse is what a run wrote, for the requests that shared it.
type sharedResponse struct {
	status      int
	contentType string
	etag        string
	body        []byte
	// stamp is the release's stamp the run's reads saw under a kept
	// preview (drafts.StampWatch), which the waiters record in theirs: the
	// run started after they arrived (previews.optimistic).
	stamp *drafts.ReleaseStamp
}

func (s *sharedReads) wrap(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// The method too: Fiber serves HEAD through GET routes, and a HEAD
		// run's response must not answer a GET.
		// And the preview the read goes through (preview.go): the same URL
		// under an older kept set must not answer a read that has a newer.
		key := c.Method() + " " + siteOf(c).String() + " " + c.OriginalURL() + " " + drafts.PreviewIdentity(c.UserContext())
		res, err, ran := s.group.DoShared(key, func(shared bool) (*sharedResponse, error) {
			if err := h(c); err != nil {
				return nil, err
			}
			if !shared {
				// Nobody else waits: the response written is the only one,
				// no copy of it (most reads of a large site).
				return nil, nil
			}
			r := c.Response()
			res := &sharedResponse{
				status:      r.StatusCode(),
				contentType: string(r.Header.ContentType()),
				etag:        string(r.Header.Peek(fiber.HeaderETag)),
				body:        append([]byte(nil), r.Body()...),
			}
			if w, ok := drafts.StampWatchOf(c.UserContext()); ok {
				if s, seen := w.Seen(); seen {
					res.stamp = &s
				}
			}
			return res, nil
		})
		if ran || err != nil {
			// The runner's response is already written; an error is rendered
			// for each request by the error handler.
			return err
		}
		if w, ok := drafts.StampWatchOf(c.UserContext()); ok && res.stamp != nil {
			w.Saw(*res.stamp)
		}
		c.Status(res.status)
		c.Set(fiber.HeaderContentType, res.contentType)
		if res.etag != "" {
			c.Set(fiber.HeaderETag, res.etag)
		}
		return c.Send(res.body)
	}
}
