package oauth

import (
	"encoding/base64"
	"errors"
	"mime"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseTokenRequest checks the parsing of a token request (Content-Type,
// Authorization header, form body). It ends in exactly one of two ways:
//   - a *tokenError: 400 invalid_request, or 401 invalid_client only for an
//     HTTP Basic header (and then answered in kind);
//   - a form of at most 16 KiB in which no parameter repeats, with the
//     client credentials from exactly one place: a Basic header (the body
//     then carries no client_secret and no other client_id; the header
//     re-encoded reads back the same) or the body's client_id and
//     client_secret (never a secret without an id).
func FuzzParseTokenRequest(f *testing.F) {
	form := "application/x-www-form-urlencoded"
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	for _, s := range []struct{ ct, auth, body string }{
		{form, "", "grant_type=password&username=ada%40example.com&password=correct+horse&scope=openid+content"},
		{form + "; charset=UTF-8", "", "grant_type=refresh_token&refresh_token=abc.def&client_id=pressroom-web"},
		{form, basic("cli:ent", "s3cr%t"), "grant_type=authorization_code&code=xyz&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&code_verifier=v"},
		{form, basic("client", "secret"), "grant_type=authorization_code&client_id=client&code=x&redirect_uri=y"},
		{form, basic("client", "secret"), "grant_type=authorization_code&client_id=other"},
		{form, basic("client", "secret"), "client_secret=also"},
		{form, "Basic !!!", "grant_type=password"},
		{form, "Basic " + base64.StdEncoding.EncodeToString([]byte("no-colon")), ""},
		{form, "Basic " + base64.StdEncoding.EncodeToString([]byte("%zz:x")), ""},
		{form, "basic   " + base64.StdEncoding.EncodeToString([]byte("a:b")) + "  ", ""},
		{form, "Bearer abc", "grant_type=password"},
		{form, "Basic", ""},
		{form, "", "client_secret=s"},
		{form, "", "grant_type=password&grant_type=password"},
		{form, "", "a=%zz"},
		{form, "", "a;b"},
		{form + "; charset=latin1", "", "grant_type=password"},
		{"application/json", "", `{"grant_type":"password"}`},
		{"", "", ""},
		{"multipart/form-data; boundary=x", "", "--x--"},
		{form, "", strings.Repeat("a", 16<<10+1)},
	} {
		f.Add(s.ct, s.auth, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, contentType, authorization string, body []byte) {
		vals, cr, err := parseTokenRequest(contentType, authorization, body)
		scheme, _, _ := strings.Cut(authorization, " ")
		isBasic := strings.Contains(authorization, " ") && strings.EqualFold(scheme, "Basic")
		if err != nil {
			var te *tokenError
			if !errors.As(err, &te) || te.Description == "" {
				t.Fatalf("error %T %v, want a *tokenError with a description", err, err)
			}
			switch {
			case te.status == 400 && te.Code == "invalid_request":
			case te.status == 401 && te.Code == "invalid_client" && te.basicAuth && isBasic:
			default:
				t.Fatalf("%+v for Content-Type %q, Authorization %q", te, contentType, authorization)
			}
			return
		}
		if len(body) > maxTokenRequest {
			t.Fatalf("accepted a %d-byte body", len(body))
		}
		if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/x-www-form-urlencoded" {
			t.Fatalf("accepted Content-Type %q", contentType)
		}
		want, err := url.ParseQuery(string(body))
		if err != nil || !reflect.DeepEqual(vals, want) {
			t.Fatalf("form %v, body reads as %v (%v)", vals, want, err)
		}
		for name, vs := range vals {
			if len(vs) != 1 {
				t.Fatalf("parameter %q accepted %d times", name, len(vs))
			}
		}
		if cr.basic != isBasic {
			t.Fatalf("Authorization %q read as basic=%v", authorization, cr.basic)
		}
		if !cr.basic {
			if authorization != "" {
				t.Fatalf("accepted Authorization %q", authorization)
			}
			if cr.id != vals.Get("client_id") || cr.secret != vals.Get("client_secret") || cr.id == "" && cr.secret != "" {
				t.Fatalf("credentials %+v from form %v", cr, vals)
			}
			return
		}
		if vals.Has("client_secret") || vals.Has("client_id") && vals.Get("client_id") != cr.id {
			t.Fatalf("credentials in both the header and the body: %+v, %v", cr, vals)
		}
		again, err := clientCredentials(basic(cr.id, cr.secret), nil)
		if err != nil || again != cr {
			t.Fatalf("credentials %+v re-encoded read back as %+v, %v", cr, again, err)
		}
	})
}
