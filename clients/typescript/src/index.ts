// @pressroom/client: a typed client for the Pressroom API. See README.md.

export {
  createPressroom,
  ok,
  ApiError,
  JSONAPI,
  type Api,
  type ApiErrorObject,
  type Pressroom,
  type PressroomOptions,
  type Schemas,
  type components,
  type paths,
} from "./client";
export {
  FIRST_PARTY_CLIENT_ID,
  OAuthError,
  Session,
  authorizationRequest,
  beginSignIn,
  completeSignIn,
  createPKCE,
  exchangeCode,
  refreshTokens,
  signInWithPassword,
  type AuthOptions,
  type AuthorizationRequest,
  type AuthorizeOptions,
  type PKCE,
  type Tokens,
} from "./auth";
export {
  SIGNATURE_FIELDS,
  UploadError,
  postToStorage,
  uploadFile,
  waitForUpload,
  type AssetUpload,
  type UploadOptions,
  type UploadResult,
  type UploadSignature,
} from "./upload";
export { draftOf, publish, type PublishOptions, type Revision } from "./publish";
