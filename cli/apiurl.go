package cli

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// NormalizeAPI is the one spelling of an API's base URL that names its
// stored sign-in and is shown to the user: scheme and host lower-cased,
// "localhost" as 127.0.0.1 (the host of the API's own links, which make
// dev listens on), no default port, no trailing slash. So
// http://localhost:8080/, HTTP://127.0.0.1:8080 and http://127.0.0.1:8080
// are one API with one sign-in. Requests still go to the URL as given.
func NormalizeAPI(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("the API URL %q is not a URL: %w", raw, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("the API URL %q is not an http(s) URL (--api or PRESSROOM_API_URL)", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the API URL %q must not hold a user, a query or a fragment", raw)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") { // an IPv6 literal keeps its brackets
		host = "[" + host + "]"
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// apiKey is NormalizeAPI for a URL that may not parse (a stored key from
// an older file): such a URL is its own key.
func apiKey(raw string) string {
	if k, err := NormalizeAPI(raw); err == nil {
		return k
	}
	return strings.TrimRight(raw, "/")
}
