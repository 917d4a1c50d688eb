package drafts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/webhooks"
)

// Revision publishes a set of drafts.
type Revision struct {
	bun.BaseModel `bun:"table:revisions,alias:r"`

	models.SiteRecord
	UserID *uuid.UUID `bun:"user_id,type:uuid"`
	// OAuthClientID is the integration client that posted it, when no
	// person did (its Idempotency-Key is remembered per client).
	OAuthClientID *string     `bun:"oauth_client_id"`
	Comments      string      `bun:"comments,notnull"`
	Status        string      `bun:"status,notnull"`
	DraftIDs      []uuid.UUID `bun:"draft_ids,array,notnull"`
	VersionsCount int         `bun:"versions_count,notnull"`
	ErrorMessage  *string     `bun:"error_message"`
	// ErrorCode and ErrorMeta say why it failed for machines, when a
	// PublishError said (path_taken); nil otherwise.
	ErrorCode      *string        `bun:"error_code"`
	ErrorMeta      map[string]any `bun:"error_meta,type:jsonb"`
	IdempotencyKey *string        `bun:"idempotency_key"`
	PublishAt      *time.Time     `bun:"publish_at"`
	RevertsID      *uuid.UUID     `bun:"reverts_id,type:uuid"`
	// StartedAt is when the revision's publish workflow was started, after
	// the revision committed (nil: not yet, the worker's commit sweep
	// starts it; nil too for a revert, which has no workflow).
	StartedAt *time.Time `bun:"started_at"`
	// ReleaseID is the release the revision publishes (releases.go); nil
	// for a revision of listed drafts.
	ReleaseID *uuid.UUID `bun:"release_id,type:uuid"`
}

// Revision statuses.
// Each transition happens in one function, in the caller's transaction:
// Reserve records a revision scheduled or publishing, Publish makes it
// published, MarkFailed failed, Cancel cancelled.
const (
	Scheduled  = "scheduled"
	Publishing = "publishing"
	Published  = "published"
	Failed     = "failed"
	Cancelled  = "cancelled"
)

// Version records one published draft.
type Version struct {
	bun.BaseModel `bun:"table:versions,alias:v"`

	models.SiteRow
	RevisionID    uuid.UUID       `bun:"revision_id,type:uuid,notnull"`
	ItemType      string          `bun:"item_type,notnull"`
	ItemID        uuid.UUID       `bun:"item_id,type:uuid,notnull"`
	Event         string          `bun:"event,notnull"`
	ObjectChanges map[string]any  `bun:"object_changes,type:jsonb,notnull"`
	Snapshot      json.RawMessage `bun:"snapshot,type:jsonb"`
	// State is the item's row right after the version (null after a
	// delete), filled by recordPublished (history.go).
	State  json.RawMessage `bun:"state,type:jsonb"`
	UserID *uuid.UUID      `bun:"user_id,type:uuid"`
	// Locale is the locale the version changed ("": shared and the base;
	// docs/locales.md).
	Locale string `bun:"locale,notnull"`
}

// PublishError is a publish that cannot succeed however often it is tried
// (a draft gone, a rule broken); the revision is marked failed with it.
// Code and Meta, when set, name the broken rule and what it is about
// (path_taken, with the pages), so the API can answer it as the write
// that breaks the same rule is answered.
type PublishError struct {
	Message string
	Code    string
	Meta    map[string]any
}

// PathTaken is the code of a publish that would put two live pages at one
// path (pages_live_path_excl), and of a write that drafts a page at a path
// another page holds.
const PathTaken = "path_taken"

func (e *PublishError) Error() string { return e.Message }

// Publish applies a revision in tx: the listed drafts plus their
// publication closure (computed here, with the rows locked, never trusted
// from an earlier read), parents before children for creates and updates,
// children before parents for deletes. Each draft becomes one version and
// is removed. Running it again for a published revision does nothing.
func (e *Engine) Publish(ctx context.Context, tx bun.Tx, revisionID uuid.UUID) (*Revision, error) {
	rev := new(Revision)
	if err := tx.NewSelect().Model(rev).Where("id = ?", revisionID).For("UPDATE").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load revision: %w", err)
	}
	if rev.Status != Publishing && rev.Status != Scheduled {
		return rev, nil // already done (a retried activity), or cancelled
	}
	scheduled := rev.Status == Scheduled
	ordered, err := e.lockPublication(ctx, tx, rev)
	if err != nil {
		return nil, err
	}
	// With the drafts locked: the release's approval still holds.
	if err := approvalHolds(ctx, tx, rev, ordered); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	snapshots, err := snapshotItems(ctx, tx, ordered)
	if err != nil {
		return nil, err
	}
	if err := e.applyDrafts(ctx, tx, rev.SiteID, ordered, now); err != nil {
		return nil, err
	}

	versions := make([]Version, len(ordered))
	for i, d := range ordered {
		var snap json.RawMessage
		if d.Event != EventCreate {
			snap = snapshots[d.ItemID]
		}
		versions[i] = Version{SiteRow: versionRow(rev, now, i), RevisionID: rev.ID, ItemType: d.ItemType, ItemID: d.ItemID,
			Event: d.Event, ObjectChanges: d.ObjectChanges, Snapshot: snap, UserID: d.UserID, Locale: d.Locale}
	}
	if err := recordPublished(ctx, tx, rev, versions, false); err != nil {
		return nil, err
	}
	if err := releaseFollows(ctx, tx, rev, ReleasePublished); err != nil {
		return nil, err
	}
	if _, err := tx.NewDelete().Model((*Draft)(nil)).Where("id IN (?)", bun.In(draftIDs(ordered))).Exec(ctx); err != nil {
		return nil, fmt.Errorf("remove published drafts: %w", err)
	}
	if scheduled {
		// A scheduled revision held its closure as it was when scheduled;
		// drafts edits have since taken out of it are free again.
		if _, err := tx.NewUpdate().Model((*Draft)(nil)).Set("revision_id = NULL").Where("revision_id = ?", rev.ID).Exec(ctx); err != nil {
			return nil, fmt.Errorf("release drafts left out: %w", err)
		}
	}
	return rev, nil
}

// lockPublication locks rev's listed drafts and computes their publication
// closure, ordered for applying; a draft gone, a closure too large or one
// another revision holds is a PublishError.
func (e *Engine) lockPublication(ctx context.Context, tx bun.Tx, rev *Revision) ([]*Draft, error) {
	listed, err := Drafts(ctx, tx, rev.SiteID, rev.DraftIDs, true)
	if err != nil {
		return nil, err
	}
	if len(listed) != len(rev.DraftIDs) {
		return nil, &PublishError{Message: fmt.Sprintf("%d of the listed drafts no longer exist (reverted or published meanwhile)", len(rev.DraftIDs)-len(listed))}
	}
	set, err := e.publication(ctx, tx, rev.SiteID, listed, true)
	if errors.Is(err, ErrTooLarge) {
		return nil, &PublishError{Message: fmt.Sprintf("the revision would publish more than %d drafts", MaxClosure)}
	}
	if err != nil {
		return nil, err
	}
	ordered := set.Drafts
	if held := heldElsewhere(ordered, rev.ID); len(held) > 0 {
		return nil, &PublishError{Message: fmt.Sprintf("draft %s, a dependency, is being published by revision %s", held[0].ID, held[0].RevisionID)}
	}
	// The publisher's rights, now, over the closure computed here: a draft
	// pulled in since the request (or since a revision was scheduled)
	// cannot slip through (section.go).
	if err := e.checkPublisher(ctx, tx, rev, ordered); err != nil {
		return nil, err
	}
	return ordered, nil
}

// snapshotItems locks the items of ds and returns their rows as they are
// before publishing, by item id: one query per kind.
func snapshotItems(ctx context.Context, tx bun.Tx, ds []*Draft) (map[uuid.UUID]json.RawMessage, error) {
	snapshots := map[uuid.UUID]json.RawMessage{}
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		ids := itemIDs(ds, typ, "")
		if len(ids) == 0 {
			continue
		}
		var rows []struct {
			ID  uuid.UUID       `bun:"id"`
			Row json.RawMessage `bun:"row"`
		}
		if err := tx.NewRaw("SELECT id, to_jsonb(t) AS row FROM ? t WHERE id IN (?) ORDER BY id FOR UPDATE",
			bun.Ident(kinds[typ].Table), bun.In(ids)).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", typ, err)
		}
		for _, r := range rows {
			snapshots[r.ID] = r.Row
		}
	}
	return snapshots, nil
}

// applyDrafts makes the drafts of ordered live, kind by kind: a few
// statements per kind and event, whatever the number of drafts.
func (e *Engine) applyDrafts(ctx context.Context, tx bun.Tx, siteID uuid.UUID, ordered []*Draft, now time.Time) error {
	for _, typ := range []string{"pages", "contents", "content-blocks"} {
		k := kinds[typ]
		if ids := itemIDs(ordered, typ, EventCreate); len(ids) > 0 {
			if _, err := tx.NewUpdate().TableExpr(k.Table).Where("id IN (?)", bun.In(ids)).
				Set("published_at = coalesce(published_at, ?), updated_at = ?, version = version + 1", now, now).Exec(ctx); err != nil {
				return fmt.Errorf("publish created %s: %w", typ, err)
			}
		}
		updates, locales := splitShared(draftsOf(ordered, typ, EventUpdate))
		if len(updates) > 0 {
			if err := applyUpdates(ctx, tx, k, updates, now); err != nil {
				return err
			}
		}
		if len(locales) > 0 {
			if err := applyTranslations(ctx, tx, k, locales, now); err != nil {
				return err
			}
		}
	}
	for _, typ := range []string{"content-blocks", "contents", "pages"} { // deletes: children first
		if ids := itemIDs(ordered, typ, EventDelete); len(ids) > 0 {
			if _, err := tx.NewDelete().TableExpr(kinds[typ].Table).Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
				return fmt.Errorf("publish deleted %s: %w", typ, err)
			}
		}
	}
	shared, _ := splitShared(ordered)
	// Created and updated pages (a new slug or parent) move their subtrees.
	moved := append(itemIDs(shared, "pages", EventCreate), itemIDs(shared, "pages", EventUpdate)...)
	if len(moved) > 0 {
		if err := e.refreshPaths(ctx, tx, siteID, moved); err != nil {
			return err
		}
		if err := livePathsFree(ctx, tx, siteID, moved); err != nil {
			return err
		}
	}
	// In every other locale than the base, those and the pages given a
	// slug in a locale (docs/locales.md).
	if roots := append(moved, localeSlugPages(ordered)...); len(roots) > 0 {
		if err := refreshLocalePaths(ctx, tx, siteID, roots); err != nil {
			return err
		}
		if err := localePathsFree(ctx, tx, siteID, roots); err != nil {
			return err
		}
	}
	// Block links: the drafted links become the live ones (a locale
	// draft's links are not indexed yet: the live ones stay).
	if blocks := itemIDs(shared, "content-blocks", ""); len(blocks) > 0 {
		blockDrafts := draftIDs(draftsOf(shared, "content-blocks", ""))
		if _, err := tx.NewDelete().Model((*Hyperlink)(nil)).Where("linkable_id IN (?) AND draft_id IS NULL", bun.In(blocks)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*Hyperlink)(nil)).Set("draft_id = NULL").Where("draft_id IN (?)", bun.In(blockDrafts)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// livePathsFree refuses a publish that leaves one of the pages it created
// or moved at the live path of another page: the whole revision fails,
// naming both. pages_live_path_excl enforces the same rule at commit for
// every page (a moved page's descendants included); this check runs first
// so the failure names the pages.
func livePathsFree(ctx context.Context, tx bun.Tx, siteID uuid.UUID, pages []uuid.UUID) error {
	var clash []struct {
		ID    uuid.UUID `bun:"id"`
		Path  string    `bun:"path"`
		Other uuid.UUID `bun:"other"`
	}
	err := tx.NewRaw(`SELECT p.id, p.path, q.id AS other FROM pages p
    JOIN pages q ON q.site_id = p.site_id AND q.path = p.path AND q.id <> p.id AND q.published_at IS NOT NULL
  WHERE p.site_id = ? AND p.id IN (?) AND p.published_at IS NOT NULL
  ORDER BY p.id LIMIT 1`, siteID, bun.In(pages)).Scan(ctx, &clash)
	if err != nil && !models.IsNoRows(err) {
		return fmt.Errorf("check live page paths: %w", err)
	}
	if len(clash) == 0 {
		return nil
	}
	c := clash[0]
	return &PublishError{Code: PathTaken,
		Message: fmt.Sprintf("page %s would be live at %s, the path of live page %s", c.ID, c.Path, c.Other),
		// As a write's path_taken: meta.page is the page at the path.
		Meta: map[string]any{"path": c.Path, "page": map[string]any{"type": "pages", "id": c.Other.String()},
			"published-page": map[string]any{"type": "pages", "id": c.ID.String()}}}
}

// applyUpdates writes drafted columns onto live rows in one statement.
func applyUpdates(ctx context.Context, tx bun.Tx, k *Kind, ds []*Draft, now time.Time) error {
	records := make([]map[string]any, len(ds))
	for i, d := range ds {
		r := map[string]any{"id": d.ItemID}
		for _, f := range k.Fields {
			r[f.Column] = d.Drafted[f.Column]
		}
		records[i] = r
	}
	payload, err := json.Marshal(records)
	if err != nil {
		return err
	}
	var sets, defs []string
	for _, f := range k.Fields {
		sets = append(sets, fmt.Sprintf("%s = d.%s", f.Column, f.Column))
		defs = append(defs, f.Column+" "+f.SQLType())
	}
	query := fmt.Sprintf("UPDATE %s t SET %s, updated_at = ?, version = t.version + 1 FROM jsonb_to_recordset(?::jsonb) AS d(id uuid, %s) WHERE t.id = d.id",
		k.Table, strings.Join(sets, ", "), strings.Join(defs, ", "))
	if _, err := tx.NewRaw(query, now, string(payload)).Exec(ctx); err != nil {
		return fmt.Errorf("publish updated %s: %w", k.Type, err)
	}
	return nil
}

// splitShared divides ds into the shared drafts and the locale drafts.
func splitShared(ds []*Draft) (shared, locales []*Draft) {
	for _, d := range ds {
		if d.Locale == "" {
			shared = append(shared, d)
		} else {
			locales = append(locales, d)
		}
	}
	return shared, locales
}

// localeSlugPages are the pages whose locale drafts of ds change a slug.
func localeSlugPages(ds []*Draft) []uuid.UUID {
	var out []uuid.UUID
	for _, d := range ds {
		if d.ItemType == "pages" && d.Locale != "" {
			if _, ok := d.ObjectChanges["slug@"+d.Locale]; ok {
				out = append(out, d.ItemID)
			}
		}
	}
	return out
}

// applyTranslations makes locale drafts live, in one statement whatever
// their number: each item's translations take the drafts' values (a null
// removes the locale's key, so a read falls back). The base columns are
// not in the statement: publishing German cannot change English. An item
// with drafts of several locales is one record of the statement.
func applyTranslations(ctx context.Context, tx bun.Tx, k *Kind, ds []*Draft, now time.Time) error {
	type record struct {
		ID    uuid.UUID      `json:"id"`
		Set   map[string]any `json:"set"`
		Unset []string       `json:"unset"`
	}
	byItem := map[uuid.UUID]*record{}
	var records []*record
	for _, d := range ds {
		r := byItem[d.ItemID]
		if r == nil {
			r = &record{ID: d.ItemID, Set: map[string]any{}, Unset: []string{}}
			byItem[d.ItemID] = r
			records = append(records, r)
		}
		for key, v := range d.Drafted {
			if !isLocaleKey(k, key) {
				continue
			}
			if v == nil {
				r.Unset = append(r.Unset, key)
			} else {
				r.Set[key] = v
			}
		}
	}
	payload, err := json.Marshal(records)
	if err != nil {
		return err
	}
	// k.Table is one of the kinds' fixed table names, never input.
	if _, err := tx.NewRaw(`UPDATE `+k.Table+` t SET translations = (t.translations - d.unset) || d.set, updated_at = ?, version = t.version + 1
FROM jsonb_to_recordset(?::jsonb) AS d(id uuid, set jsonb, unset text[]) WHERE t.id = d.id`, now, string(payload)).Exec(ctx); err != nil {
		return fmt.Errorf("publish %s in their locales: %w", k.Type, err)
	}
	return nil
}

// publicationSet is what publishing some drafts applies: the drafts and
// their publication closure in the order they take effect, and the live
// paths of the parent pages the set hangs from.
type publicationSet struct {
	Drafts      []*Draft
	ParentPaths map[string]string // page id -> live path
}

// publication computes the publication set of listed: the one function
// behind both Publish (with the rows locked, in the publishing
// transaction) and Plan (a dry run), so a plan is what a publish does.
func (e *Engine) publication(ctx context.Context, db bun.IDB, siteID uuid.UUID, listed []*Draft, lock bool) (*publicationSet, error) {
	all, err := Closure(ctx, db, siteID, listed, Publication, lock)
	if err != nil {
		return nil, err
	}
	outside, paths, err := liveParents(ctx, db, siteID, all)
	if err != nil {
		return nil, err
	}
	return &publicationSet{Drafts: order(all, outside), ParentPaths: paths}, nil
}

// liveParents are the depths and live paths of the pages ds's pages hang
// from (their drafted parents), so parents sort before children even when
// the pages between them are not in the set, and a moved page's new path
// continues its parent's.
func liveParents(ctx context.Context, db bun.IDB, siteID uuid.UUID, ds []*Draft) (map[string]int, map[string]string, error) {
	outside := map[string]int{}
	paths := map[string]string{}
	var parents []string
	for _, d := range ds {
		if p, _ := d.Drafted["parent_id"].(string); d.ItemType == "pages" && p != "" {
			parents = append(parents, p)
		}
	}
	if len(parents) == 0 {
		return outside, paths, nil
	}
	var rows []struct {
		ID   string `bun:"id"`
		Path string `bun:"path"`
	}
	if err := db.NewSelect().Table("pages").Column("id", "path").Where("site_id = ? AND id IN (?)", siteID, bun.In(parents)).Scan(ctx, &rows); err != nil {
		return nil, nil, fmt.Errorf("depths of parent pages: %w", err)
	}
	for _, r := range rows {
		outside[r.ID] = strings.Count(strings.TrimSuffix(r.Path, "/"), "/")
		paths[r.ID] = r.Path
	}
	return outside, paths, nil
}

// order sorts drafts for publication: by kind (pages, contents, blocks),
// then event (create, update, delete), then id, so versions read in the
// order they take effect. Within one transaction with deferred keys, the
// order of statements does not matter for integrity, including for records
// that point at each other.
func order(ds []*Draft, outside map[string]int) []*Draft {
	out := append([]*Draft(nil), ds...)
	// A page's depth in the tree: one more than its (drafted) parent's,
	// following pages in the set and ending at a live page outside it,
	// whose depth its stored path gives.
	parent := map[string]string{}
	for _, d := range ds {
		if d.ItemType == "pages" {
			p, _ := d.Drafted["parent_id"].(string)
			parent[d.ItemID.String()] = p
		}
	}
	depth := func(id string) int {
		n := 0
		for p := parent[id]; p != "" && n < 64; n++ {
			next, in := parent[p]
			if !in {
				return n + 1 + outside[p]
			}
			p = next
		}
		return n
	}
	ev := map[string]int{EventCreate: 0, EventUpdate: 1, EventDelete: 2}
	key := func(d *Draft) [4]int {
		pd := 0
		if d.ItemType == "pages" {
			pd = depth(d.ItemID.String())
		}
		if d.Event == EventDelete {
			return [4]int{1, -depthOrder[d.ItemType], -pd, 0} // after the rest, children first
		}
		return [4]int{0, depthOrder[d.ItemType], pd, ev[d.Event]} // parents first
	}
	keys := make(map[*Draft][4]int, len(out))
	for _, d := range out {
		keys[d] = key(d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := keys[out[i]], keys[out[j]]
		for n := range a {
			if a[n] != b[n] {
				return a[n] < b[n]
			}
		}
		return out[i].ID.String() < out[j].ID.String()
	})
	return out
}

// Order exposes the publication order (tests of the rules); outside gives
// the depths of live parent pages not in ds.
func Order(ds []*Draft, outside ...map[string]int) []*Draft {
	if len(outside) == 0 {
		return order(ds, nil)
	}
	return order(ds, outside[0])
}

func itemIDs(ds []*Draft, typ, event string) []uuid.UUID {
	var out []uuid.UUID
	for _, d := range ds {
		if d.ItemType == typ && (event == "" || d.Event == event) {
			out = append(out, d.ItemID)
		}
	}
	return out
}

func draftsOf(ds []*Draft, typ, event string) []*Draft {
	var out []*Draft
	for _, d := range ds {
		if d.ItemType == typ && (event == "" || d.Event == event) {
			out = append(out, d)
		}
	}
	return out
}

func draftIDs(ds []*Draft) []uuid.UUID {
	out := make([]uuid.UUID, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// MarkFailed records a failed publish (why: failure's message, and its
// code and meta when set) and releases its drafts, in its own transaction
// (the publishing one was rolled back: nothing changed).
func MarkFailed(ctx context.Context, db bun.IDB, revisionID uuid.UUID, failure *PublishError) error {
	var code *string
	if failure.Code != "" {
		code = &failure.Code
	}
	var meta any
	if failure.Meta != nil {
		meta = failure.Meta
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var revs []Revision
		err := tx.NewUpdate().Model((*Revision)(nil)).Set("status = ?, error_message = ?, error_code = ?, error_meta = ?, updated_at = now()",
			Failed, failure.Message, code, meta).
			Where("id = ? AND status IN (?, ?)", revisionID, Publishing, Scheduled).Returning("site_id, release_id").Scan(ctx, &revs)
		if err != nil && !models.IsNoRows(err) {
			return err
		}
		if len(revs) == 0 {
			return nil
		}
		siteIDs := []uuid.UUID{revs[0].SiteID}
		// A release whose publish failed is open again, with its drafts.
		if err := releaseFollows(ctx, tx, &revs[0], ReleaseOpen); err != nil {
			return err
		}
		if _, err = tx.NewUpdate().Model((*Draft)(nil)).Set("revision_id = NULL").Where("revision_id = ?", revisionID).Exec(ctx); err != nil {
			return err
		}
		// The webhook event commits with the failure (docs/webhooks.md).
		return models.RecordEvent(ctx, tx, models.Event{SiteID: siteIDs[0], Type: webhooks.RevisionFailed, SubjectType: "revisions", SubjectID: revisionID})
	})
}

// approvalHolds refuses (a PublishError) publishing a release whose
// approval lapsed since it was scheduled, while the site requires
// approvals: the revision fails and the release is in review again. A
// revision that names drafts directly fails too when the site requires
// approvals now: it was made (scheduled, or raced PATCH /site) while the
// site required none, and drafts go live only through an approved release.
// The site's row is read FOR SHARE, so a PATCH /site that turns approvals
// on waits for this publish or is seen by it.
func approvalHolds(ctx context.Context, tx bun.Tx, rev *Revision, ordered []*Draft) error {
	if rev.RevertsID != nil {
		return nil // a rollback stays allowed (it never comes here today)
	}
	if rev.ReleaseID == nil {
		var required int
		if err := tx.NewSelect().Table("sites").Column("release_approvals").Where("id = ?", rev.SiteID).For("SHARE").Scan(ctx, &required); err != nil {
			return fmt.Errorf("site approvals: %w", err)
		}
		if required > 0 {
			return &PublishError{Code: "approval_required", Meta: map[string]any{"approvals-count": 0, "approvals-required": required},
				Message: fmt.Sprintf("the site requires %d approval(s) since this revision was made: drafts go live only through an approved release", required)}
		}
		return nil
	}
	states, err := ReviewStates(ctx, tx, rev.SiteID, []uuid.UUID{*rev.ReleaseID})
	if err != nil {
		return err
	}
	s := states[*rev.ReleaseID]
	if s.Required > 0 && s.Approved() {
		// The closure locked here, against what each valid approval
		// recorded: a draft pulled in since nobody approved.
		if s.Approvals, err = approvalsCovering(ctx, tx, *rev.ReleaseID, ordered); err != nil {
			return err
		}
	}
	if !s.Approved() {
		return &PublishError{Code: "approval_required", Meta: map[string]any{"approvals-count": s.Approvals, "approvals-required": s.Required},
			Message: fmt.Sprintf("the release's approval lapsed before it was published: %d of %d valid approvals (a draft it publishes changed, was pulled in, or was staged or unstaged)", s.Approvals, s.Required)}
	}
	return nil
}
