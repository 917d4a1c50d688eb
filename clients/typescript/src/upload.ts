// Uploading a file the way a browser does (docs/assets.md): ask for an
// upload signature, POST the file straight to storage as a form with the
// signed fields, send the upload notice, and wait until it is processed.

import { ok, type Pressroom, type Schemas } from "./client";

export type UploadSignature = Schemas["UploadSignaturesAttributes"];
export type AssetUpload = Schemas["AssetUploads"];

/** Storage's form field for each attribute of an upload signature (S3 POST policy names). */
export const SIGNATURE_FIELDS = {
  key: "key",
  acl: "acl",
  "Content-Type": "content-type",
  policy: "policy",
  "x-amz-credential": "x-storage-credential",
  "x-amz-algorithm": "x-storage-algorithm",
  "x-amz-date": "x-storage-date",
  "x-amz-signature": "x-storage-signature",
} as const satisfies Record<string, keyof UploadSignature>;

export interface UploadOptions {
  /** The file name to record (default: the File's name). */
  filename?: string;
  /** The MIME type (default: the Blob's type). */
  contentType?: string;
  /** Give up waiting for processing after this long (default 10 minutes). */
  timeoutMs?: number;
  /** Told each step as it starts: "signature", "storage", "notice", "processing". */
  onStep?: (step: "signature" | "storage" | "notice" | "processing") => void;
  signal?: AbortSignal;
}

/** An upload that ended in status "error" (the image was rejected), or took too long. */
export class UploadError extends Error {
  constructor(
    message: string,
    readonly upload?: AssetUpload,
  ) {
    super(message);
    this.name = "UploadError";
  }
}

/** The finished upload and the asset it made. */
export interface UploadResult {
  upload: AssetUpload;
  /** The asset's id, for a content block's `asset` relationship. */
  assetId: string;
}

/**
 * uploadFile uploads file and resolves once the service has processed it.
 * It throws ApiError for a refused request, UploadError when storage
 * refuses the file, processing rejects it, or the wait times out.
 */
export async function uploadFile(pr: Pressroom, file: Blob, options: UploadOptions = {}): Promise<UploadResult> {
  const filename = options.filename ?? (file instanceof File ? file.name : "upload");
  const contentType = options.contentType ?? file.type;
  options.onStep?.("signature");
  const sig = await signature(pr, filename, contentType);

  options.onStep?.("storage");
  await postToStorage(pr, sig, file, options.signal);

  options.onStep?.("notice");
  const notice = await pr.api.POST("/asset-uploads", {
    body: {
      data: {
        type: "asset-uploads",
        attributes: {
          "file-name": filename,
          key: required(sig, "key"),
          "content-type": required(sig, "content-type"),
          "file-size": file.size,
          "user-agent": typeof navigator === "undefined" ? "pressroom-typescript" : navigator.userAgent,
        },
      },
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const accepted = ok(notice, "POST /asset-uploads").data;

  options.onStep?.("processing");
  const upload = await waitForUpload(pr, accepted, options.timeoutMs ?? 600_000, options.signal);
  const assetId = upload.relationships?.asset?.data?.id;
  if (upload.attributes?.status !== "finished" || !assetId) {
    throw new UploadError(`upload ${upload.id} ended ${upload.attributes?.status}: ${upload.attributes?.["error-message"] ?? ""}`, upload);
  }
  return { upload, assetId };
}

async function signature(pr: Pressroom, filename: string, contentType: string): Promise<UploadSignature> {
  const result = await pr.api.POST("/upload-signatures", {
    body: { data: { type: "upload-signatures", attributes: { filename, "content-type": contentType } } },
  });
  return ok(result, "POST /upload-signatures").data.attributes ?? {};
}

/** POSTs file to the signature's endpoint as a multipart form: the signed fields, then the file. */
export async function postToStorage(pr: Pressroom, sig: UploadSignature, file: Blob, signal?: AbortSignal): Promise<void> {
  const form = new FormData();
  for (const [field, attr] of Object.entries(SIGNATURE_FIELDS)) {
    form.append(field, required(sig, attr));
  }
  form.append("file", file);
  const resp = await pr.fetch(required(sig, "endpoint"), { method: "POST", body: form, ...(signal ? { signal } : {}) });
  if (!resp.ok) {
    throw new UploadError(`storage refused the file: ${resp.status} ${await resp.text()}`);
  }
}

/**
 * waitForUpload long-polls GET /asset-uploads/{id}?wait=10s until the upload
 * leaves "processing" (docs/assets.md, "Waiting for the result").
 */
export async function waitForUpload(pr: Pressroom, upload: AssetUpload, timeoutMs: number, signal?: AbortSignal): Promise<AssetUpload> {
  const deadline = Date.now() + timeoutMs;
  let current = upload;
  while (current.attributes?.status === "processing") {
    if (Date.now() > deadline) {
      throw new UploadError(`upload ${upload.id} still processing after ${timeoutMs} ms`, current);
    }
    const result = await pr.api.GET("/asset-uploads/{id}", {
      params: { path: { id: upload.id } },
      // `wait` is not in the description's parameters yet; the serializer adds it.
      querySerializer: () => "wait=10s",
      ...(signal ? { signal } : {}),
    });
    current = ok(result, `GET /asset-uploads/${upload.id}`).data;
  }
  return current;
}

function required<K extends keyof UploadSignature>(sig: UploadSignature, name: K): string {
  const v = sig[name];
  if (typeof v !== "string") {
    throw new UploadError(`the upload signature has no ${String(name)}`);
  }
  return v;
}
