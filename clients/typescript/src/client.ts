// The typed client: openapi-fetch over the types openapi-typescript
// generates from the API's own /openapi.json (src/generated/schema.ts, a
// build output: npm run openapi && npm run generate).

import createClient, { type Client, type Middleware } from "openapi-fetch";

import { Session, trimSlash } from "./auth";
import type { components, paths } from "./generated/schema";

/** The JSON:API media type, sent as Accept and as the Content-Type of every body. */
export const JSONAPI = "application/vnd.api+json";

/** Every schema of the description: Schemas["PagesDocument"], Schemas["RevisionsAttributes"], … */
export type Schemas = components["schemas"];
export type { components, paths };

/** The openapi-fetch client for Pressroom's paths. */
export type Api = Client<paths, typeof JSONAPI>;

export interface PressroomOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** A signed-in session (refreshed as needed) or a bare access token. */
  auth?: Session | string;
  fetch?: typeof fetch;
}

/** A Pressroom client: `api` is the typed openapi-fetch client, authorised and speaking JSON:API. */
export interface Pressroom {
  readonly baseUrl: string;
  readonly api: Api;
  /** The fetch it uses (for the storage POST, which goes elsewhere). */
  readonly fetch: typeof fetch;
  /** Signs in as someone else, or out (undefined). */
  setAuth(auth: Session | string | undefined): void;
}

/**
 * createPressroom makes a client. Every request carries
 * `Accept: application/vnd.api+json`, a body `Content-Type:
 * application/vnd.api+json`, and the session's bearer token.
 *
 *   const pr = createPressroom({ baseUrl, auth: session });
 *   const { data, error } = await pr.api.GET("/pages/{id}", { params: { path: { id } } });
 */
export function createPressroom(options: PressroomOptions): Pressroom {
  const baseUrl = trimSlash(options.baseUrl);
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let auth = options.auth;
  const api = createClient<paths, typeof JSONAPI>({
    baseUrl,
    fetch: (req: Request) => doFetch(req),
    headers: { Accept: JSONAPI },
  });
  const middleware: Middleware = {
    async onRequest({ request }) {
      // openapi-fetch labels a JSON body application/json; the API wants JSON:API.
      if (request.headers.get("Content-Type")?.startsWith("application/json")) {
        request.headers.set("Content-Type", JSONAPI);
      }
      const token = typeof auth === "string" ? auth : await auth?.accessToken();
      if (token) {
        request.headers.set("Authorization", `Bearer ${token}`);
      }
      return request;
    },
  };
  api.use(middleware);
  return {
    baseUrl,
    api,
    fetch: doFetch,
    setAuth(next) {
      auth = next;
    },
  };
}

/** A JSON:API error object (Schemas["Error"]) as the client reads it. */
export interface ApiErrorObject {
  status?: string;
  code?: string;
  title?: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string };
}

/** An error answer of the API, with its JSON:API errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: ApiErrorObject[],
    what: string,
  ) {
    const first = errors[0];
    super(`${what}: ${status}${first ? ` ${first.code ?? ""} ${first.detail ?? first.title ?? ""}`.trimEnd() : ""}`);
    this.name = "ApiError";
  }
}

/**
 * ok returns an openapi-fetch result's data, or throws ApiError with the
 * API's errors. The data type is the success response of the operation.
 */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.error !== undefined || result.data === undefined) {
    const errors = (result.error as { errors?: ApiErrorObject[] } | undefined)?.errors ?? [];
    throw new ApiError(result.response.status, errors, what);
  }
  return result.data;
}
