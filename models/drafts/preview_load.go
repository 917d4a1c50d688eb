package drafts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// A read of single records under a release's preview (LoadMany, Loader)
// is one statement that also reads the release's stamp (ReleaseStamp), in
// the same snapshot as the records: the API serves a kept self-contained
// preview while the stamp its read saw is the one it was computed at,
// without a statement of its own for the stamp (api/preview.go). The
// drafts themselves are not sent again: the statement answers each joined
// draft's id, version and updated_at, and the read lays the set's own
// decoded draft (Preview.byID) over the row when they match; a draft
// written since the set was computed (a stale set, which the stamp shows
// to the API) is read again in full.

// readPreviewQuery is LoadMany's statement under a release's preview: $1
// the site, $2 the ids (uuid[]), $3 the kind's type, $4 the release and $5
// the set's other drafts (uuid[], inSet). Its first row is the release's
// stamp, with the first record if any; none when the site has no such
// release. Only the set's drafts are joined, and a page's drafted path is
// walked over the set's drafts only (as DraftedPaths does under a
// preview), in the same prepared statement.
//
// withLocales (the set holds locale drafts) adds the set's locale drafts
// of each record (id, version, updated_at, as for the shared draft); a set
// without any reads today's statement, with NULL in their place.
func readPreviewQuery(k *Kind, withLocales bool) string {
	path := "NULL::text"
	if k == Pages {
		path = `(WITH RECURSIVE ` + draftedPathWalkIn("t", "", "$1", " AND "+inSet("pd", "$4", "$5")) + ` SELECT ` + draftedPathOf + `)`
	}
	locales := "NULL::jsonb"
	if withLocales {
		locales = `(SELECT jsonb_agg(jsonb_build_object('id', l.id, 'version', l.version, 'updated_at', l.updated_at))
    FROM drafts l WHERE l.item_type = $3 AND l.item_id = t.id AND l.locale <> '' AND ` + inSet("l", "$4", "$5") + `)`
	}
	// k.Table is one of the kinds' fixed table names, never input.
	return `SELECT x.row, x.draft_id, x.draft_version, x.draft_updated_at, x.path, x.locale_drafts, s.version, s.drafts_version, s.status
FROM (SELECT r.version, v.version AS drafts_version, r.status FROM releases r
    JOIN release_draft_versions v ON v.release_id = r.id WHERE r.site_id = $1 AND r.id = $4) s
LEFT JOIN LATERAL (SELECT to_jsonb(t) AS row, d.id AS draft_id, d.version AS draft_version, d.updated_at AS draft_updated_at, ` + path + ` AS path,
    ` + locales + ` AS locale_drafts
  FROM ` + k.Table + ` t LEFT JOIN drafts d ON d.item_type = $3 AND d.item_id = t.id AND d.locale = '' AND ` + inSet("d", "$4", "$5") + `
  WHERE t.site_id = $1 AND t.id = ANY($2)) x ON true`
}

// draftStamp is a draft's id, version and updated_at as a statement read
// them: the set's own decoded draft stands for it when they match.
type draftStamp struct {
	ID        uuid.UUID `json:"id"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// previewRow is one row of readPreviewQuery's answer.
type previewRow struct {
	row          sql.RawBytes
	draftID      uuid.NullUUID
	draftVersion sql.NullInt64
	draftUpdated sql.NullTime
	path         *string
	localeDrafts []byte // the set's locale drafts of the record: draftStamps as JSON
	stamp        ReleaseStamp
}

// loadPreview is loadMany under the preview p (readPreviewQuery): the
// records as p shows them, and the release's stamp as the statement read
// it (nil: the site has no such release).
func loadPreview(ctx context.Context, db bun.IDB, k *Kind, siteID uuid.UUID, ids []uuid.UUID, p *Preview) (map[uuid.UUID]*View, *ReleaseStamp, error) {
	rows, err := models.QueryPrepared(ctx, db, readPreviewQuery(k, p.hasLocales), models.UUIDParam(siteID), models.UUIDsParam(ids), k.Type,
		models.UUIDParam(p.Release), models.UUIDsParam(p.extraIDs))
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
	}
	defer rows.Close()
	var stamp *ReleaseStamp
	var views []*View
	reread := map[uuid.UUID]*View{} // by their drafts written since p was computed
	for rows.Next() {
		var r previewRow
		if err := rows.Scan(&r.row, &r.draftID, &r.draftVersion, &r.draftUpdated, &r.path, &r.localeDrafts,
			&r.stamp.Version, &r.stamp.DraftsVersion, &r.stamp.Status); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
		}
		if stamp == nil {
			stamp = &r.stamp
		}
		if len(r.row) == 0 {
			continue // the release alone: no record
		}
		v := &View{Kind: k, DraftedPath: r.path}
		if v.Row, err = decodeRow(r.row); err != nil { // before the next row: r.row is the driver's buffer
			return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
		}
		if r.draftID.Valid {
			d := p.byID[r.draftID.UUID]
			switch {
			case d == nil: // not in p's set: p.view leaves it off, as it would the draft
			case int64(d.Version) == r.draftVersion.Int64 && d.UpdatedAt.Equal(r.draftUpdated.Time):
				v.Draft = d
			default:
				reread[r.draftID.UUID] = v // read again below
			}
		}
		if err := p.layLocaleDrafts(v, r.localeDrafts, reread); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
		}
		views = append(views, v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
	}
	if err := rereadDrafts(ctx, db, siteID, reread); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", k.Type, err)
	}
	out := make(map[uuid.UUID]*View, len(views))
	for _, v := range views {
		if v = p.view(v); v != nil {
			out[v.Row.ID()] = v
		}
	}
	return out, stamp, nil
}

// layLocaleDrafts lays the set's locale drafts of v that the statement
// read (raw: draftStamps as JSON) over it: p's own when they match, the
// others to be read again (reread).
func (p *Preview) layLocaleDrafts(v *View, raw []byte, reread map[uuid.UUID]*View) error {
	if len(raw) == 0 {
		return nil
	}
	var stamps []draftStamp
	if err := json.Unmarshal(raw, &stamps); err != nil {
		return fmt.Errorf("locale drafts: %w", err)
	}
	for _, st := range stamps {
		d := p.byID[st.ID]
		switch {
		case d == nil: // not in p's set: left off
		case d.Version == st.Version && d.UpdatedAt.Equal(st.UpdatedAt):
			if v.LocaleDrafts == nil {
				v.LocaleDrafts = map[string]*Draft{}
			}
			v.LocaleDrafts[d.Locale] = d
		default:
			reread[st.ID] = v
		}
	}
	return nil
}

// rereadDrafts gives each view of byDraft the draft its key names as it is
// now (a locale's among its LocaleDrafts); a draft gone since (published
// or reverted) leaves the view without it.
func rereadDrafts(ctx context.Context, db bun.IDB, siteID uuid.UUID, byDraft map[uuid.UUID]*View) error {
	if len(byDraft) == 0 {
		return nil
	}
	ds, err := Drafts(ctx, db, siteID, slices.Collect(maps.Keys(byDraft)), false)
	if err != nil {
		return err
	}
	for _, d := range ds {
		v := byDraft[d.ID]
		if d.Locale == "" {
			v.Draft = d
			continue
		}
		if v.LocaleDrafts == nil {
			v.LocaleDrafts = map[string]*Draft{}
		}
		v.LocaleDrafts[d.Locale] = d
	}
	return nil
}

// StampWatch gathers the release stamps that the preview reads of one
// request saw in their own statements (LoadMany, Loader.Load), each read
// after the request began.
type StampWatch struct {
	mu    sync.Mutex
	stamp ReleaseStamp
	seen  bool
	mixed bool
}

type stampWatchKey struct{}

// WithStampWatch returns ctx carrying a new StampWatch, and the watch.
func WithStampWatch(ctx context.Context) (context.Context, *StampWatch) {
	w := &StampWatch{}
	return context.WithValue(ctx, stampWatchKey{}, w), w
}

// stampWatchOf is ctx's StampWatch (nil: none).
func stampWatchOf(ctx context.Context) *StampWatch {
	w, _ := ctx.Value(stampWatchKey{}).(*StampWatch)
	return w
}

// Seen is the stamp every read under the watch saw: false when none read
// one, or when they saw different ones.
func (w *StampWatch) Seen() (ReleaseStamp, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stamp, w.seen && !w.mixed
}

// Saw records a stamp read after the request began (a shared read's run
// seen by a request that waited for it).
func (w *StampWatch) Saw(s ReleaseStamp) { w.saw(s) }

func (w *StampWatch) saw(s ReleaseStamp) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.seen:
		w.stamp, w.seen = s, true
	case w.stamp != s:
		w.mixed = true
	}
}

// StampWatchOf is ctx's StampWatch, if any.
func StampWatchOf(ctx context.Context) (*StampWatch, bool) {
	w := stampWatchOf(ctx)
	return w, w != nil
}
