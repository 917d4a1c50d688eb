package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pressroom/pressroom/config"
)

// frontEnd is the static page a front end on another origin serves: it
// signs in, asks for an upload signature, posts the file straight to
// storage with fetch and FormData, notifies the API, polls the upload until
// it is finished, and shows the thumb variant. Every request it makes is a
// cross-origin one, so it works only if the API and the bucket answer CORS.
const frontEnd = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Front end</title></head>
<body>
<label for="file">Image</label> <input id="file" type="file" accept="image/*">
<img id="thumb" alt="thumbnail of the upload">
<script>
const jsonapi = "application/vnd.api+json";

async function check(resp, want, what) {
	if (resp.status !== want) throw new Error(what + ": " + resp.status + " " + await resp.text());
	return resp;
}

// upload runs the whole flow and reports what a front end could read.
async function upload(api, username, password) {
	const seen = {};
	let r = await check(await fetch(api + "/oauth/token", {method: "POST",
		body: new URLSearchParams({grant_type: "password", username, password})}), 200, "POST /oauth/token");
	const token = (await r.json()).access_token;
	const headers = {Authorization: "Bearer " + token, Accept: jsonapi, "Content-Type": jsonapi};
	const call = async (method, path, body, want) => check(await fetch(api + path, {method, headers,
		body: body === undefined ? undefined : JSON.stringify({data: body})}), want, method + " " + path);

	const file = document.getElementById("file").files[0];
	r = await call("POST", "/upload-signatures", {type: "upload-signatures",
		attributes: {filename: file.name, "content-type": file.type}}, 200);
	const sig = (await r.json()).data.attributes;

	// The signature's fields under the names S3 reads, then the file last.
	const form = new FormData();
	const names = {key: "key", acl: "acl", "Content-Type": "content-type", policy: "policy",
		"x-amz-credential": "x-storage-credential", "x-amz-algorithm": "x-storage-algorithm",
		"x-amz-date": "x-storage-date", "x-amz-signature": "x-storage-signature"};
	for (const [field, attr] of Object.entries(names)) form.append(field, sig[attr]);
	form.append("file", file);
	r = await fetch(sig.endpoint, {method: "POST", body: form});
	if (!r.ok) throw new Error("storage POST: " + r.status + " " + await r.text());
	seen.storageStatus = r.status;

	r = await call("POST", "/asset-uploads", {type: "asset-uploads", attributes: {"file-name": file.name,
		key: sig.key, "content-type": sig["content-type"], "file-size": file.size, "user-agent": navigator.userAgent}}, 202);
	seen.location = r.headers.get("Location");
	let up = (await r.json()).data;
	for (let i = 0; up.attributes.status === "processing"; i++) {
		if (i > 600) throw new Error("upload still processing");
		await new Promise(res => setTimeout(res, 200));
		up = (await (await call("GET", "/asset-uploads/" + up.id, undefined, 200)).json()).data;
	}
	seen.status = up.attributes.status;
	if (seen.status !== "finished") return seen;

	const image = (await (await call("GET", "/asset-uploads/" + up.id + "/asset-file", undefined, 200)).json()).data;
	const thumb = image.attributes.variants.thumb;
	seen.thumbWidth = thumb.width;
	const img = document.getElementById("thumb");
	await new Promise((res, rej) => { img.onload = res; img.onerror = () => rej(new Error("thumb did not load: " + thumb.url)); img.src = thumb.url; });
	seen.naturalWidth = img.naturalWidth;

	seen.etag = (await call("GET", "/site", undefined, 200)).headers.get("ETag");
	return seen;
}
</script>
</body></html>`

// uploadSeen is what frontEnd's upload reports.
type uploadSeen struct {
	StorageStatus int     `json:"storageStatus"`
	Location      string  `json:"location"`
	Status        string  `json:"status"`
	ThumbWidth    float64 `json:"thumbWidth"`
	NaturalWidth  float64 `json:"naturalWidth"`
	ETag          string  `json:"etag"`
}

// TestBrowserDirectUpload runs frontEnd in a real browser: a page on an
// origin of its own (an httptest server) uploads straight to the bucket and
// shows the thumbnail. It proves the CORS answers of the API (preflights,
// Location and ETag readable) and of the bucket.
func TestBrowserDirectUpload(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(frontEnd))
	}))
	t.Cleanup(page.Close)
	s := start(t, func(c *config.Config) { c.CORSOrigins = []string{page.URL} })

	file := filepath.Join(t.TempDir(), "harbour.png")
	if err := os.WriteFile(file, pngFile(t, 640, 480), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "open the front end", chromedp.Navigate(page.URL), chromedp.WaitReady(chromedp.ID("file")),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{file}))

	seen := eval[uploadSeen](t, ctx, "upload("+jsString(s.URL)+", "+jsString("editor@demo.test")+", "+jsString(password)+")")
	t.Logf("the page saw %+v", seen)
	if seen.Status != "finished" {
		t.Fatalf("upload ended %q", seen.Status)
	}
	if seen.NaturalWidth <= 0 || seen.NaturalWidth != seen.ThumbWidth {
		t.Errorf("the thumb decoded %v pixels wide; the variant says %v", seen.NaturalWidth, seen.ThumbWidth)
	}
	if seen.Location == "" || !contains(seen.Location, "/asset-uploads/") {
		t.Errorf("the page could not read Location of POST /asset-uploads: %q", seen.Location)
	}
	if seen.ETag == "" {
		t.Errorf("the page could not read the ETag of GET /site")
	}
}
