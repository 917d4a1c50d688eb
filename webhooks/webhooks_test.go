package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/webhooks"
)

// The Standard Webhooks specification's test vector (its reference
// libraries test against the same values).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecTestVector(t *testing.T) {
	h, err := webhooks.Sign(vectorSecret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	if h.Signature != vectorSignature || h.ID != vectorID || h.Timestamp != "1614265330" {
		t.Fatalf("headers = %+v, want signature %s", h, vectorSignature)
	}
	// The spec's algorithm, by hand: HMAC-SHA256 over id.timestamp.body
	// under the base64-decoded part of the secret after whsec_.
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(vectorSecret, "whsec_"))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(vectorID + ".1614265330." + vectorBody))
	if want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)); want != vectorSignature {
		t.Fatalf("hand-made signature %s", want)
	}
}

func TestNewSecretIsAStandardWebhooksSecret(t *testing.T) {
	s, err := webhooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if !strings.HasPrefix(s, "whsec_") || err != nil || len(raw) != 32 || !webhooks.ValidSecret(s) {
		t.Fatalf("secret %q: %v", s, err)
	}
	if m := webhooks.Mask(webhooks.Last4(s)); m != "whsec_…"+s[len(s)-4:] {
		t.Fatalf("mask %q", m)
	}
}

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1:248:1893:25c8:1946": true, "8.8.8.8": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00:ec2::254": false, "0.0.0.0": false, "::": false,
		"100.64.0.1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false,
		"255.255.255.255": false, "64:ff9b::7f00:1": false,
	} {
		if got := webhooks.Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestPublicRefusesEveryRangeThatIsNotGlobal covers the ranges the first
// guard let through (IPv6 transition and reserved ranges, documentation,
// zones), each by an address inside it, and public addresses just beside
// them, which must stay reachable.
func TestPublicRefusesEveryRangeThatIsNotGlobal(t *testing.T) {
	refused := map[string]string{
		"::127.0.0.1":                          "IPv4-compatible loopback",
		"::8.8.8.8":                            "IPv4-compatible, even of a public address",
		"::2":                                  "reserved ::/8",
		"2002:7f00:1::1":                       "6to4 of 127.0.0.1",
		"2002:808:808::1":                      "6to4 of a public address",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
		"2001:2::1":                            "benchmarking",
		"2001:10::1":                           "deprecated ORCHID",
		"2001:1::1":                            "IETF protocol assignments (anycast)",
		"2001:1ff:ffff::1":                     "end of IETF protocol assignments",
		"fec0::1":                              "site local",
		"feff:ffff::1":                         "end of site local",
		"2001:db8::1":                          "documentation",
		"3fff::1":                              "documentation (RFC 9637)",
		"3fff:fff:ffff::1":                     "end of 3fff::/20",
		"100::1":                               "discard only",
		"100:0:0:1::1":                         "dummy prefix",
		"5f00::1":                              "SRv6 SIDs",
		"64:ff9b::808:808":                     "NAT64 of a public address",
		"64:ff9b:1::1":                         "local-use NAT64",
		"4000::1":                              "reserved IPv6 space outside 2000::/3",
		"ff0e::1":                              "global-scope multicast",
		"fd12:3456::1":                         "unique local",
		"2606:4700:4700::1111%eth0":            "public address with a zone",
		"fe80::1%eth0":                         "link local with a zone",
		"192.0.0.8":                            "IPv4 dummy address",
		"192.0.0.170":                          "NAT64 discovery",
		"192.0.2.1":                            "TEST-NET-1",
		"198.51.100.1":                         "TEST-NET-2",
		"203.0.113.255":                        "TEST-NET-3",
		"192.88.99.1":                          "6to4 relay anycast",
		"198.19.255.255":                       "benchmarking",
		"239.255.255.250":                      "multicast",
		"240.0.0.1":                            "reserved",
		"::ffff:192.0.2.1":                     "IPv4-mapped documentation",
	}
	for addr, what := range refused {
		if webhooks.Public(netip.MustParseAddr(addr)) {
			t.Errorf("Public(%s) = true, want false (%s)", addr, what)
		}
	}
	for _, addr := range []string{
		"1.1.1.1", "192.0.1.1", "192.0.3.1", "198.17.255.255", "198.20.0.1", "100.128.0.1", "223.255.255.1",
		"::ffff:8.8.8.8", // how Go's resolver may return an IPv4 answer
		"2606:4700:4700::1111", "2001:4860:4860::8888", "2001:200::1", "2a00:1450:4001::1", "3fff:1000::1",
	} {
		if !webhooks.Public(netip.MustParseAddr(addr)) {
			t.Errorf("Public(%s) = false, want true (a public address)", addr)
		}
	}
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost/hook", "http://[::1]/", "http://169.254.169.254/latest/meta-data",
		"http://10.0.0.1/", "http://0.0.0.0/", "http://[::127.0.0.1]/", "http://[2002:7f00:1::1]/", "http://[2001::1]/",
		"http://[fec0::1]/", "http://[2001:db8::1]/", "http://[fe80::1%25eth0]/"} {
		if err := webhooks.CheckURL(ctx, u, false); !errors.Is(err, webhooks.ErrNotPublic) {
			t.Errorf("CheckURL(%s) = %v, want ErrNotPublic", u, err)
		}
		if err := webhooks.CheckURL(ctx, u, true); err != nil {
			t.Errorf("CheckURL(%s) with private allowed = %v", u, err)
		}
	}
	for _, u := range []string{"ftp://example.com/", "/relative", "http://", "http://user:pw@93.184.216.34/", "mailto:a@b.c", "javascript:alert(1)"} {
		if err := webhooks.CheckURL(ctx, u, true); err == nil {
			t.Errorf("CheckURL(%s) accepted", u)
		}
	}
	if err := webhooks.CheckURL(ctx, "https://93.184.216.34/hook", false); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
}

// The dialer refuses loopback at connect time, whatever the URL says: a
// name that resolved to a public address when the webhook was saved and
// to loopback now (DNS rebinding) is refused here.
func TestClientRefusesPrivateAddressesWhenConnecting(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, u := range []string{srv.URL, "http://localhost" + port} {
		_, err := webhooks.Client(false).Post(u, "application/json", strings.NewReader("{}"))
		if !errors.Is(err, webhooks.ErrNotPublic) {
			t.Errorf("POST %s = %v, want ErrNotPublic", u, err)
		}
	}
	if hits != 0 {
		t.Fatalf("the receiver was reached %d times", hits)
	}
	resp, err := webhooks.Client(true).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("with private allowed: %v", err)
	}
	resp.Body.Close()
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	target := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			target++
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := webhooks.Client(true).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || target != 0 {
		t.Fatalf("status %d, redirect target reached %d times", resp.StatusCode, target)
	}
}
