// Publishing drafts (docs/drafts.md): POST /revisions with the drafts, and
// follow a revision the API answered 202 (still publishing) until it ends.

import { ApiError, ok, type Pressroom, type Schemas } from "./client";

export type Revision = Schemas["Revisions"];

export interface PublishOptions {
  /** The revision's comment. */
  comments?: string;
  /** Publish later: an RFC 3339 time or a Date (a scheduled revision). */
  publishAt?: string | Date;
  /** How long to follow a revision still publishing (default 2 minutes). */
  timeoutMs?: number;
}

/**
 * publish publishes the drafts in one revision and resolves with it once
 * it is published (or scheduled, with publishAt). It throws ApiError when
 * the API refuses (422 publish_failed, 409 path_taken, …), and Error when
 * the revision fails or is still publishing after timeoutMs.
 */
export async function publish(pr: Pressroom, draftIds: string[], options: PublishOptions = {}): Promise<Revision> {
  const publishAt = options.publishAt instanceof Date ? options.publishAt.toISOString() : options.publishAt;
  const result = await pr.api.POST("/revisions", {
    body: {
      data: {
        type: "revisions",
        attributes: {
          ...(options.comments !== undefined ? { comments: options.comments } : {}),
          ...(publishAt !== undefined ? { "publish-at": publishAt } : {}),
        },
        relationships: { drafts: { data: draftIds.map((id) => ({ type: "drafts", id })) } },
      },
    },
  });
  let revision = ok(result, "POST /revisions").data;
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  while (revision.attributes?.status === "publishing") {
    if (Date.now() > deadline) {
      throw new Error(`revision ${revision.id} still publishing after ${options.timeoutMs ?? 120_000} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const next = await pr.api.GET("/revisions/{id}", { params: { path: { id: revision.id } } });
    revision = ok(next, `GET /revisions/${revision.id}`).data;
  }
  if (revision.attributes?.status === "failed") {
    throw new ApiError(422, [{ code: "publish_failed", detail: revision.attributes["error-message"] ?? "" }], "publish");
  }
  return revision;
}

/** A draftable resource as the API answers it: pages, contents and content-blocks carry their draft. */
interface Draftable {
  id: string;
  relationships?: { draft?: { data?: { id: string } | null } };
}

/** The id of the draft a write to a page, content or content block made (relationships.draft). */
export function draftOf(resource: Draftable): string {
  const id = resource.relationships?.draft?.data?.id;
  if (!id) {
    throw new Error(`resource ${resource.id} has no pending draft`);
  }
  return id;
}
