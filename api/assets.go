package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

type assetsHandler struct {
	db      *bun.DB
	storage config.Storage
	links   links
}

type assetAttributes struct {
	Title       string  `json:"title"`
	ContentType string  `json:"content-type"`
	AssetType   string  `json:"asset-type"`
	SubType     string  `json:"sub-type"`
	ThemePath   *string `json:"theme-path"`
	timestamps
}

type variantAttributes struct {
	URL         string `json:"url" oas:"uri"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	ContentType string `json:"content-type"`
}

type imageAttributes struct {
	URL             string                       `json:"url" oas:"uri"`
	FileName        string                       `json:"file-name"`
	ContentType     string                       `json:"content-type"`
	FileSize        int64                        `json:"file-size"`
	Width           int                          `json:"width"`
	Height          int                          `json:"height"`
	ImageProperties models.ImageProperties       `json:"image-properties"`
	Fingerprint     string                       `json:"fingerprint"`
	Variants        map[string]variantAttributes `json:"variants"`
	timestamps
}

// objectURL is where browsers fetch an object of the (publicly readable) assets bucket.
func (h assetsHandler) objectURL(key string) string {
	return h.storage.PublicEndpoint + "/" + h.storage.AssetsBucket + "/" + key
}

func (h assetsHandler) assetResource(a *models.Asset) *jsonapi.Resource {
	p := "/assets/" + a.ID.String()
	img := models.ImageID(a.ID).String()
	return &jsonapi.Resource{Type: "assets", ID: a.ID.String(), Links: h.links.self(p),
		Attributes: assetAttributes{Title: a.Title, ContentType: a.ContentType, AssetType: a.AssetType, SubType: a.SubType,
			ThemePath: a.ThemePath, timestamps: timestampsOf(a.CreatedAt, a.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{"asset-file": h.links.relationship(p, "asset-file", jsonapi.ToOne("asset-images", &img))},
	}
}

func (h assetsHandler) imageResource(i *models.AssetImage) *jsonapi.Resource {
	p := "/asset-images/" + i.ID.String()
	variants := make(map[string]variantAttributes, len(i.Variants))
	for name, v := range i.Variants {
		variants[name] = variantAttributes{URL: h.objectURL(v.StorageKey), Width: v.Width, Height: v.Height, ContentType: v.ContentType}
	}
	asset := i.AssetID.String()
	return &jsonapi.Resource{Type: "asset-images", ID: i.ID.String(), Links: h.links.self(p),
		Attributes: imageAttributes{URL: h.objectURL(i.StorageKey), FileName: i.FileName, ContentType: i.ContentType, FileSize: i.FileSize,
			Width: i.Width, Height: i.Height, ImageProperties: i.ImageProperties, Fingerprint: i.Fingerprint, Variants: variants,
			timestamps: timestampsOf(i.CreatedAt, i.UpdatedAt)},
		Relationships: map[string]*jsonapi.Relationship{"asset": h.links.relationship(p, "asset", jsonapi.ToOne("assets", &asset))},
	}
}

func idParam(c *fiber.Ctx, what string) (uuid.UUID, error) {
	if probing(c) { // the OpenAPI description's probe has no route params (openapi_query.go)
		return uuid.Nil, nil
	}
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return id, models.NotFound(what)
	}
	return id, nil
}

// assetSpec is the query GET /assets reads: the site's assets, newest first.
var assetSpec = QuerySpec{Collection: true, Fields: fieldsOf("assets"), Includes: includesOf("assets"),
	Sorts:       map[string]string{"title": "title", "created-at": "created_at", "updated-at": "updated_at"},
	DefaultSort: models.OrderNewest,
	Operators:   filterTable("assets"),
	Type:        "assets",
	Search:      "assets"}

// registerAssetRoutes registers /assets and /asset-images.
func registerAssetRoutes(r routes) {
	assets := assetsHandler{db: r.deps.DB, storage: r.deps.Config.Storage, links: r.links}
	t := &resourceType{typ: "assets", what: "asset", fetch: byIDs(assets.db, assets.assetResource)}
	images := &resourceType{typ: "asset-images", what: "asset image", fetch: byIDs(assets.db, assets.imageResource)}
	r.cat.add(t)
	r.cat.add(images)
	r.get("/assets", models.PermRead, rowRenderer[models.Asset]{render: renderEach(assets.assetResource), cat: r.cat, searchDB: assets.db}.list(assetSpec, assets.links, "/assets", assets.db, models.ListAssets))
	r.get("/assets/:id", models.PermRead, r.cat.get(t))
	r.get("/asset-images/:id", models.PermRead, r.cat.get(images))
}
