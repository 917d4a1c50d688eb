// Compile-time checks that the client's types come from the description:
// each @ts-expect-error line must fail to type-check, or tsc fails
// ("Unused '@ts-expect-error' directive"). Never run, only compiled
// (npm run check; e2e/typescript_test.go).

import { createPressroom, type Schemas } from "../src/index";

const pr = createPressroom({ baseUrl: "http://127.0.0.1:8080", auth: "token" });

export async function typecheck(): Promise<void> {
  // @ts-expect-error: a path the API does not serve
  await pr.api.GET("/no-such-path");

  // @ts-expect-error: POST /pages takes pages, not contents
  await pr.api.POST("/pages", { body: { data: { type: "contents" } } });

  await pr.api.POST("/revisions", {
    // @ts-expect-error: a revision's comments are a string
    body: { data: { type: "revisions", attributes: { comments: 1 } } },
  });

  const { data } = await pr.api.GET("/revisions/{id}", { params: { path: { id: "x" } } });
  // @ts-expect-error: versions-count is a number
  const count: string | undefined = data?.data.attributes?.["versions-count"];

  // @ts-expect-error: GET /pages/{id} needs its id
  await pr.api.GET("/pages/{id}", {});

  // Page attributes are typed from the kinds' declarations (models/drafts).
  const page: Schemas["PagesRequestAttributes"] = { title: "About", slug: "about" };
  // @ts-expect-error: page-type is one of the declared values
  const badType: Schemas["PagesRequestAttributes"] = { "page-type": "blog" };
  // @ts-expect-error: a page has no attribute "titel"
  const typo: Schemas["PagesCreateRequestAttributes"] = { title: "About", titel: "About" };
  // @ts-expect-error: a page create must send its title
  const untitled: Schemas["PagesCreateRequestAttributes"] = { slug: "about" };
  void badType;
  void typo;
  void untitled;
  void count;
  void page;
}
