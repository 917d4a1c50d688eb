package drafts

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/coalesce"
)

// Loader reads single records of one kind, batching the reads that arrive
// together: concurrent requests for different records of one site share
// one query (package coalesce). GET /<kind>/:id and its relationship
// endpoints read through it.
type Loader struct {
	batch coalesce.Batcher[uuid.UUID, loaded]
	e     *Engine
	db    bun.IDB
	kind  *Kind
}

// NewLoader returns the batched reader of kind k's records through db.
func (e *Engine) NewLoader(db bun.IDB, k *Kind) *Loader {
	l := &Loader{e: e, db: db, kind: k}
	l.batch.Fetch = func(ctx context.Context, scope string, ids []uuid.UUID) (map[uuid.UUID]loaded, error) {
		site, view, _ := strings.Cut(scope, " ")
		siteID, err := uuid.Parse(site)
		if err != nil {
			return nil, fmt.Errorf("batched load: bad scope %q: %w", scope, err)
		}
		// "draft", or "preview <p>": the batch's fetch runs under the
		// values of its first caller's context, which carry the preview
		// (coalesce.Batcher), the same one every caller of the scope has.
		views, stamp, err := e.loadMany(ctx, db, k, siteID, ids, view != "live")
		if err != nil {
			return nil, err
		}
		out := make(map[uuid.UUID]loaded, len(ids))
		for _, id := range ids {
			out[id] = loaded{v: views[id], stamp: stamp}
		}
		return out, nil
	}
	return l
}

// loaded is a record a batch read (nil: none), and under a preview the
// release's stamp its statement read (loadPreview), which every caller of
// the batch records in its own StampWatch: the batch started after each
// of them asked.
type loaded struct {
	v     *View
	stamp *ReleaseStamp
}

// Load returns record id of the site, live or with its draft overlaid
// (withDraft); nil when the site has no such record. A batch holds the
// reads of one site and one view only.
func (l *Loader) Load(ctx context.Context, siteID, id uuid.UUID, withDraft bool) (*View, error) {
	scope := siteID.String() + " live"
	if p := previewOf(ctx); withDraft && p != nil {
		// A release's preview: the reads of one preview (the API keeps one
		// *Preview per release and stamp) batch together.
		scope = fmt.Sprintf("%s preview %p", siteID, p)
	} else if withDraft {
		scope = siteID.String() + " draft"
	}
	got, err := l.batch.Get(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	if w := stampWatchOf(ctx); w != nil && got.stamp != nil {
		w.saw(*got.stamp)
	}
	return got.v, nil
}
