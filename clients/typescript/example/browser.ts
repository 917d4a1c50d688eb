// The example page (index.html): signs in with the authorization code flow
// and PKCE, uploads a picture, creates a page with the picture on it and
// publishes it, all from a browser on another origin than the API.
// e2e/typescript_test.go runs it in Chromium.

import {
  Session,
  beginSignIn,
  completeSignIn,
  createPressroom,
  draftOf,
  ok,
  publish,
  uploadFile,
  type AuthOptions,
  type Pressroom,
  type Tokens,
} from "../src/index";

interface Config {
  api: string;
  clientId: string;
}

/** What run reports: the published page and how it got there. */
export interface Published {
  pageId: string;
  path: string;
  revisionId: string;
  revisionStatus: string;
  assetId: string;
}

const TOKENS_KEY = "pressroom.tokens";

function element<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`no #${id} on the page`);
  return el as T;
}

function say(id: string, text: string): void {
  element(id).textContent = text;
}

/** The session kept in sessionStorage, or the one the sign-in redirect brings, or null. */
async function session(auth: AuthOptions): Promise<Session | null> {
  const fresh = await completeSignIn(auth);
  const saved = sessionStorage.getItem(TOKENS_KEY);
  const s = fresh ?? (saved ? new Session(auth, JSON.parse(saved) as Tokens) : null);
  if (s) {
    const keep = (t: Tokens) => sessionStorage.setItem(TOKENS_KEY, JSON.stringify(t));
    keep(s.current);
    s.onChange = keep; // every refresh spends the old refresh token
  }
  return s;
}

/** Uploads the picture, drafts a page with it and publishes the three drafts in one revision. */
export async function run(pr: Pressroom, title: string, file: File): Promise<Published> {
  say("progress", "uploading…");
  const { assetId } = await uploadFile(pr, file, { onStep: (step) => say("progress", `upload: ${step}…`) });

  say("progress", "drafting the page…");
  const slug = `${title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}-${Date.now()}`;
  const page = ok(
    await pr.api.POST("/pages", { body: { data: { type: "pages", attributes: { title, slug } } } }),
    "POST /pages",
  ).data;
  const content = ok(
    await pr.api.POST("/contents", {
      body: {
        data: {
          type: "contents",
          attributes: { title },
          relationships: { page: { data: { type: "pages", id: page.id } } },
        },
      },
    }),
    "POST /contents",
  ).data;
  const block = ok(
    await pr.api.POST("/content-blocks", {
      body: {
        data: {
          type: "content-blocks",
          attributes: { "var-name": "hero", "data-type": "image", body: title },
          relationships: {
            content: { data: { type: "contents", id: content.id } },
            asset: { data: { type: "assets", id: assetId } },
          },
        },
      },
    }),
    "POST /content-blocks",
  ).data;

  say("progress", "publishing…");
  const revision = await publish(pr, [draftOf(page), draftOf(content), draftOf(block)], {
    comments: `${title}, from the TypeScript example`,
  });
  const live = ok(await pr.api.GET("/pages/{id}", { params: { path: { id: page.id } } }), "GET /pages").data;
  // Until the description types page attributes, path is `unknown` here.
  const path = String(live.attributes?.["path"]);
  say("progress", "");
  say("result", `published ${path}`);
  return { pageId: page.id, path, revisionId: revision.id, revisionStatus: String(revision.attributes?.status), assetId };
}

async function main(): Promise<void> {
  const config = (await (await fetch("/config.json")).json()) as Config;
  const auth: AuthOptions = { baseUrl: config.api, clientId: config.clientId };
  const s = await session(auth);
  if (!s) {
    element("signed-out").hidden = false;
    element("sign-in").addEventListener("click", () => {
      void beginSignIn({ ...auth, redirectUri: `${location.origin}/callback` });
    });
    return;
  }
  const pr = createPressroom({ baseUrl: config.api, auth: s });
  // data is null for an integration client's token (docs/auth.md); a
  // browser signs in as a person.
  const me = ok(await pr.api.GET("/users/me"), "GET /users/me").data;
  say("who", `Signed in as ${String(me?.attributes?.email ?? "an integration client")}`);
  const form = element<HTMLFormElement>("publish");
  form.hidden = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const file = element<HTMLInputElement>("image").files?.[0];
    if (!file) return;
    const done = run(pr, element<HTMLInputElement>("title").value, file);
    done.catch((err: unknown) => say("error", String(err)));
    window.pressroomExample.lastRun = done;
  });
  window.pressroomExample.ready = true;
}

declare global {
  interface Window {
    /** For tests and the console: the last run's promise, and whether the page is signed in and ready. */
    pressroomExample: { ready: boolean; lastRun?: Promise<Published>; error?: string };
  }
}

window.pressroomExample = { ready: false };
main().catch((err: unknown) => {
  window.pressroomExample.error = String(err);
  say("error", String(err));
});
