// Signing in to Pressroom (docs/auth.md): the password grant for first-party
// apps, the authorization code flow with PKCE (S256) for everything else,
// and refreshing. The token endpoint speaks OAuth 2.0 (RFC 6749: a form in,
// plain JSON out), not JSON:API, so these helpers use fetch directly.

/** The public client every Pressroom has (the password grant's default). */
export const FIRST_PARTY_CLIENT_ID = "pressroom";

/** What POST /oauth/token answers (RFC 6749 §5.1). */
export interface TokenResponse {
  token_type: string;
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  id_token?: string;
}

/** A signed-in user's tokens, with the access token's expiry (ms since the epoch). */
export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: number;
}

/** An error the token or authorize endpoint answered (RFC 6749 §5.2, §4.1.2.1). */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 0,
  ) {
    super(description ? `${error}: ${description}` : error);
    this.name = "OAuthError";
  }
}

type FetchFn = typeof fetch;

/** Where to sign in, and as which OAuth client. */
export interface AuthOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** The OAuth client id (default: the first-party public client "pressroom"). */
  clientId?: string;
  fetch?: FetchFn;
}

/**
 * Session holds a sign-in's tokens and refreshes them: the access token
 * (2 h by default) is renewed with the refresh token shortly before it
 * expires. Every refresh returns a new refresh token and spends the old one
 * (docs/auth.md, "refresh_token"), so a caller that keeps the tokens (say in
 * sessionStorage) saves them in onChange.
 */
export class Session {
  private tokens: Tokens;
  private pending: Promise<Tokens> | undefined;
  /** Called with the new tokens after every refresh. */
  onChange: ((tokens: Tokens) => void) | undefined;

  constructor(
    private readonly options: AuthOptions,
    tokens: Tokens,
  ) {
    this.tokens = { ...tokens };
  }

  /** The tokens as they are now (to store them). */
  get current(): Tokens {
    return { ...this.tokens };
  }

  /** An access token valid for at least another minute, refreshing first when needed and possible. */
  async accessToken(): Promise<string> {
    const { expiresAt, refreshToken } = this.tokens;
    if (refreshToken && expiresAt !== undefined && expiresAt - Date.now() < 60_000) {
      await this.refresh();
    }
    return this.tokens.accessToken;
  }

  /** Trades the refresh token for new tokens; concurrent calls share one request. */
  refresh(): Promise<Tokens> {
    this.pending ??= refreshTokens(this.options, this.tokens.refreshToken ?? "")
      .then((tokens) => {
        this.tokens = tokens;
        this.onChange?.(this.current);
        return this.current;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}

/** Posts a grant to /oauth/token and returns the tokens, or throws OAuthError. */
export async function tokenRequest(options: AuthOptions, form: Record<string, string>): Promise<Tokens> {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const resp = await doFetch(trimSlash(options.baseUrl) + "/oauth/token", {
    method: "POST",
    headers: { Accept: "application/json" },
    body: new URLSearchParams({ client_id: options.clientId ?? FIRST_PARTY_CLIENT_ID, ...form }),
  });
  const body: unknown = await resp.json().catch(() => undefined);
  if (!resp.ok || !isTokenResponse(body)) {
    const err = (body ?? {}) as { error?: string; error_description?: string };
    throw new OAuthError(err.error ?? `http_${resp.status}`, err.error_description ?? "", resp.status);
  }
  return {
    accessToken: body.access_token,
    ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    ...(body.expires_in ? { expiresAt: Date.now() + body.expires_in * 1000 } : {}),
  };
}

function isTokenResponse(v: unknown): v is TokenResponse {
  return typeof v === "object" && v !== null && typeof (v as TokenResponse).access_token === "string";
}

/** The password grant: for first-party apps only (the user types the password into your app). */
export async function signInWithPassword(
  options: AuthOptions & { username: string; password: string },
): Promise<Session> {
  const tokens = await tokenRequest(options, {
    grant_type: "password",
    username: options.username,
    password: options.password,
  });
  return new Session(options, tokens);
}

/** The refresh_token grant: new tokens (a new refresh token too) for a refresh token. */
export function refreshTokens(options: AuthOptions, refreshToken: string): Promise<Tokens> {
  if (!refreshToken) {
    return Promise.reject(new OAuthError("invalid_grant", "this session has no refresh token"));
  }
  return tokenRequest(options, { grant_type: "refresh_token", refresh_token: refreshToken });
}

/** A PKCE pair (RFC 7636): the verifier kept by the app, the S256 challenge sent to /oauth/authorize. */
export interface PKCE {
  verifier: string;
  challenge: string;
}

/** Makes a fresh PKCE verifier (43 characters from 32 random bytes) and its S256 challenge. */
export async function createPKCE(): Promise<PKCE> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** What the authorization code flow needs to know. */
export interface AuthorizeOptions extends AuthOptions {
  /** A redirect URI registered for the client (pressroom client create -redirect-uri …). */
  redirectUri: string;
  /** Space-separated scopes (default "openid"). */
  scope?: string;
}

/** An authorization request: open url; keep state and verifier for the callback. */
export interface AuthorizationRequest {
  url: string;
  state: string;
  verifier: string;
}

/** Builds the /oauth/authorize URL with a random state and a fresh PKCE challenge (S256). */
export async function authorizationRequest(options: AuthorizeOptions): Promise<AuthorizationRequest> {
  const { verifier, challenge } = await createPKCE();
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: options.clientId ?? FIRST_PARTY_CLIENT_ID,
    redirect_uri: options.redirectUri,
    scope: options.scope ?? "openid",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  return { url: `${trimSlash(options.baseUrl)}/oauth/authorize?${query}`, state, verifier };
}

/** The authorization_code grant: trades the code from the redirect (and the PKCE verifier) for tokens. */
export async function exchangeCode(
  options: AuthorizeOptions & { code: string; verifier: string },
): Promise<Session> {
  const tokens = await tokenRequest(options, {
    grant_type: "authorization_code",
    code: options.code,
    redirect_uri: options.redirectUri,
    code_verifier: options.verifier,
  });
  return new Session(options, tokens);
}

const PENDING_KEY = "pressroom.sign-in";

/**
 * Browser sign-in, step 1: keeps state and verifier in sessionStorage and
 * sends the browser to the API's sign-in page. It comes back to
 * redirectUri, where completeSignIn finishes.
 */
export async function beginSignIn(options: AuthorizeOptions): Promise<void> {
  const req = await authorizationRequest(options);
  sessionStorage.setItem(
    PENDING_KEY,
    JSON.stringify({ state: req.state, verifier: req.verifier, redirectUri: options.redirectUri }),
  );
  location.assign(req.url);
}

/**
 * Browser sign-in, step 2, on the page at the redirect URI: checks the
 * state, exchanges the code and returns the session; null when the URL
 * carries no answer (the page was opened otherwise). The code is removed
 * from the address bar.
 */
export async function completeSignIn(options: AuthOptions, url: string = location.href): Promise<Session | null> {
  const params = new URL(url).searchParams;
  const code = params.get("code");
  const error = params.get("error");
  if (!code && !error) {
    return null;
  }
  const saved = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const pending = saved ? (JSON.parse(saved) as { state: string; verifier: string; redirectUri: string }) : null;
  if (!pending || pending.state !== params.get("state")) {
    throw new OAuthError("invalid_state", "this answer is not for a sign-in started here");
  }
  if (error) {
    throw new OAuthError(error, params.get("error_description") ?? "");
  }
  history.replaceState(null, "", pending.redirectUri);
  return exchangeCode({ ...options, redirectUri: pending.redirectUri, code: code ?? "", verifier: pending.verifier });
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
