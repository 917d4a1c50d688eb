package intake

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

const testLimit = 32 << 10 // past fasthttp's 8 KiB read ahead

// bodyServer serves, as api.New configures the server (streamed bodies, a
// body deadline from the end of the headers):
// POST /echo (ReadBody, then the body back), POST /forgot (Body without
// ReadBody) and GET|POST /ignore (never reads a body; counts its calls).
func bodyServer(t *testing.T, bodyTimeout time.Duration) (addr string, ignored *atomic.Int64) {
	t.Helper()
	app := fiber.New(fiber.Config{StreamRequestBody: true, DisablePreParseMultipartForm: true,
		ReadTimeout: 5 * time.Second, DisableStartupMessage: true})
	app.Server().HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
		return fasthttp.RequestConfig{ReadTimeout: bodyTimeout}
	}
	app.Use(CloseUnread)
	app.Post("/echo", ReadBody(testLimit), func(c *fiber.Ctx) error {
		b, err := Body(c)
		if err != nil {
			return err
		}
		return c.Send(b)
	})
	app.Post("/forgot", func(c *fiber.Ctx) error {
		_, err := Body(c)
		return err
	})
	ignored = &atomic.Int64{}
	ignore := func(c *fiber.Ctx) error { ignored.Add(1); return c.SendString("ignored") }
	app.Get("/ignore", ignore)
	app.Post("/ignore", ignore)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String(), ignored
}

// raw sends req on a new connection and reads one response; more, when
// the server keeps the connection, is read by the caller from r.
func raw(t *testing.T, addr, req string) (*http.Response, *bufio.Reader, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp, r, c
}

func post(path string, header string, body string) string {
	return "POST " + path + " HTTP/1.1\r\nHost: x\r\n" + header + "\r\n" + body
}

func withLength(body string) string { return fmt.Sprintf("Content-Length: %d\r\n", len(body)) }

func chunked(body string) string {
	var b strings.Builder
	for len(body) > 0 {
		n := min(len(body), 4096)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

func text(r *http.Response) string { b, _ := io.ReadAll(r.Body); return string(b) }

func TestReadBoundsTheBody(t *testing.T) {
	t.Parallel()
	addr, _ := bodyServer(t, 5*time.Second)
	full, over := strings.Repeat("a", testLimit), strings.Repeat("a", testLimit+1)
	cases := []struct {
		name, header, wire, body string // wire: as sent; body: as the route reads it
		status                   int
	}{
		{"a body at the limit", withLength(full), full, full, 200},
		{"a small body", withLength("abc"), "abc", "abc", 200},
		{"a chunked body at the limit", "Transfer-Encoding: chunked\r\n", chunked(full), full, 200},
		// fasthttp reads up to 8 KiB of a body before any handler runs;
		// Read then refuses the rest unread.
		{"a Content-Length over the limit, refused unread", fmt.Sprintf("Content-Length: %d\r\n", 1<<30), strings.Repeat("a", 9000), "", 413},
		{"a chunked body over the limit", "Transfer-Encoding: chunked\r\n", chunked(over), "", 413},
		{"a compressed body", withLength("abc") + "Content-Encoding: gzip\r\n", "abc", "", 415},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, _, _ := raw(t, addr, post("/echo", tc.header, tc.wire))
			got := text(resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%.200s), want %d", resp.StatusCode, got, tc.status)
			}
			if tc.status == 200 && got != tc.body {
				t.Errorf("the route read %d bytes, want %d", len(got), len(tc.body))
			}
			if tc.status != 200 && !resp.Close {
				t.Error("the connection stays open after a refused body; its rest would be read as a request")
			}
		})
	}
}

// A body that stops arriving is given up at the body deadline (408), not
// waited for; one cut short by the client is a 400.
func TestReadGivesUpOnSlowOrShortBodies(t *testing.T) {
	t.Parallel()
	addr, _ := bodyServer(t, 500*time.Millisecond)
	head := fmt.Sprintf("Content-Length: %d\r\n", testLimit)
	start := time.Now()
	resp, _, _ := raw(t, addr, post("/echo", head, strings.Repeat("a", 9000)))
	if resp.StatusCode != 408 || !resp.Close {
		t.Errorf("a body that stopped: %d (close %v), want 408 and the connection closed", resp.StatusCode, resp.Close)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("answered after %v, want about the 500ms body deadline", d)
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, post("/echo", head, strings.Repeat("a", 9000)))
	_ = c.(*net.TCPConn).CloseWrite()
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 {
		t.Errorf("a body cut short: %d, want 400", resp.StatusCode)
	}
}

// A body no route reads must not be read as the next request on the
// connection (request smuggling behind a proxy that shares connections):
// the connection closes after the answer.
func TestAnUnreadBodyClosesTheConnection(t *testing.T) {
	t.Parallel()
	addr, ignored := bodyServer(t, 5*time.Second)
	smuggled := "GET /ignore HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, path := range []string{"/ignore", "/no-such-route"} {
		body := strings.Repeat("x", 8<<10) + smuggled // just past the 8 KiB fasthttp reads ahead
		before := ignored.Load()
		resp, r, _ := raw(t, addr, post(path, withLength(body), body))
		if !resp.Close {
			t.Errorf("POST %s with an unread body: the connection stays open", path)
		}
		if next, err := http.ReadResponse(r, nil); err == nil {
			t.Errorf("POST %s: a second response (%d) to bytes of the body", path, next.StatusCode)
		}
		if n := ignored.Load() - before; path == "/ignore" && n != 1 || path != "/ignore" && n != 0 {
			t.Errorf("POST %s: GET /ignore ran %d times, want only for the POST itself", path, n)
		}
	}
	// A request without a body keeps its connection.
	resp, _, _ := raw(t, addr, "GET /ignore HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.Close {
		t.Error("a GET without a body closed its connection")
	}
}

// A route that reads its body without ReadBody gets an error, never the
// whole stream unbounded.
func TestBodyWithoutReadIsAnError(t *testing.T) {
	t.Parallel()
	addr, _ := bodyServer(t, 5*time.Second)
	body := strings.Repeat("a", 20000)
	resp, _, _ := raw(t, addr, post("/forgot", withLength(body), body))
	if resp.StatusCode != 500 {
		t.Errorf("Body without Read: %d, want 500", resp.StatusCode)
	}
}
