package intake

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// The server streams request bodies (fiber.Config.StreamRequestBody): before
// a handler runs fasthttp has read at most the first 8 KiB of a body, into
// a pooled buffer, instead of allocating the whole announced Content-Length
// at once. The rest stays in the socket until a route reads it with Read,
// which bounds it. Never call fasthttp's or Fiber's Body on a request whose
// route did not Read first: they would read the whole stream, unbounded
// (and Fiber's would inflate a Content-Encoding, also unbounded).

// Errors Read answers with; the API's error table renders them.
var (
	ErrTooLarge  = fiber.NewError(fiber.StatusRequestEntityTooLarge, "The request body is larger than the server accepts.")
	ErrSlowBody  = fiber.NewError(fiber.StatusRequestTimeout, "The request body did not arrive in time (PRESSROOM_BODY_TIMEOUT).")
	ErrBadBody   = fiber.NewError(fiber.StatusBadRequest, "The request body could not be read to its announced end.")
	ErrEncodedIn = fiber.NewError(fiber.StatusUnsupportedMediaType, "Request bodies must not be compressed: send no Content-Encoding (or identity).")
)

// ReadBody is Read as a middleware: put after the checks that decide
// whether the request is worth its body (the route, the bearer token), so
// a request refused by them never has it read.
func ReadBody(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, err := Read(c, limit); err != nil {
			return err
		}
		return c.Next()
	}
}

// Read reads the request's body, at most limit bytes, and keeps it as the
// request's body, so a second Read, fasthttp's Body and Fiber's BodyRaw
// answer the same bytes. Over the limit it is ErrTooLarge (refused from the
// Content-Length, before reading, when that announces more); a body cut
// short or malformed is ErrBadBody, one past the body deadline ErrSlowBody.
// After an error the connection closes: the rest of the body is never read.
func Read(c *fiber.Ctx, limit int) ([]byte, error) {
	req := c.Request()
	stream := req.BodyStream()
	if stream == nil { // read already, or no body at all
		b := req.Body()
		if len(b) > limit {
			return nil, ErrTooLarge
		}
		return b, nil
	}
	cl := req.Header.ContentLength()
	if enc := strings.TrimSpace(string(req.Header.Peek(fiber.HeaderContentEncoding))); enc != "" && !strings.EqualFold(enc, "identity") && cl != 0 {
		return nil, giveUp(c, ErrEncodedIn)
	}
	if cl > limit {
		return nil, giveUp(c, ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
	switch {
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, giveUp(c, ErrSlowBody)
		}
		return nil, giveUp(c, ErrBadBody)
	case len(b) > limit:
		return nil, giveUp(c, ErrTooLarge)
	case cl >= 0 && len(b) != cl: // the client closed before its Content-Length
		return nil, giveUp(c, ErrBadBody)
	}
	req.SetBodyRaw(b) // also returns the stream to fasthttp's pool
	return b, nil
}

// giveUp marks the connection to close after the answer: the unread rest
// of the body must never be parsed as a next request.
func giveUp(c *fiber.Ctx, err error) error {
	c.Response().SetConnectionClose()
	return err
}

// CloseUnread is the outermost middleware: a request whose body no route
// read (an unknown path, a refused token, a route without a body) closes
// its connection after the answer. fasthttp would otherwise read the
// unread body as the next request on the connection: request smuggling
// behind a proxy that shares connections.
func CloseUnread(c *fiber.Ctx) error {
	err := c.Next()
	if unread(c.Request()) {
		c.Response().SetConnectionClose()
	}
	return err
}

// unread tells whether the request still has body bytes that may not have
// been read: a stream of a body that is not empty.
func unread(req *fasthttp.Request) bool {
	return req.IsBodyStream() && req.Header.ContentLength() != 0
}

// errNotRead is a route that reads its body without Read first.
var errNotRead = errors.New("intake: the route reads its body without intake.Read (ReadBody) first")

// Body is the body Read kept. On a request whose body Read has not read
// it is an error (a route missing ReadBody: a programming error, a 500),
// never an unbounded read.
func Body(c *fiber.Ctx) ([]byte, error) {
	if unread(c.Request()) {
		return nil, errNotRead
	}
	return c.Request().Body(), nil
}
