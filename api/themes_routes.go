package api

// themes registers the themes, layouts and theme-assets endpoints, and the
// site's theme relationship links (docs/themes.md).
func (r routes) themes() {
	d, a, app := r.deps, r.authed, r.app
	k := &themeResources{
		db:         d.DB,
		links:      r.links,
		assets:     assetsHandler{db: d.DB, storage: d.Config.Storage, links: r.links},
		users:      usersHandler{db: d.DB, links: r.links},
		pageCounts: livePagesPerLayout(d.DB),
	}
	themes, layouts, themeAssets := themesHandler{k}, layoutsHandler{k}, themeAssetsHandler{k}
	site := siteHandler{db: d.DB, links: r.links}

	app.Get("/themes", a(themes.list)...)
	app.Post("/themes", a(themes.create)...)
	app.Get("/themes/:id", a(themes.get)...)
	app.Patch("/themes/:id", a(themes.patch)...)
	for _, name := range []string{"user", "layouts", "theme-assets"} {
		app.Get("/themes/:id/"+name, a(themes.related(name))...)
		app.Get("/themes/:id/relationships/"+name, a(themes.relationship(name))...)
	}

	app.Get("/layouts", a(layouts.list)...)
	app.Post("/layouts", a(layouts.create)...)
	app.Get("/layouts/:id", a(layouts.get)...)
	app.Patch("/layouts/:id", a(layouts.patch)...)
	app.Get("/layouts/:id/theme", a(layouts.theme)...)
	app.Get("/layouts/:id/relationships/theme", a(layouts.relationship)...)

	app.Post("/theme-assets", a(themeAssets.create)...)
	app.Get("/theme-assets/:id", a(themeAssets.get)...)
	app.Delete("/theme-assets/:id", a(themeAssets.delete)...)
	for _, name := range []string{"theme", "asset"} {
		app.Get("/theme-assets/:id/"+name, a(themeAssets.related(name))...)
		app.Get("/theme-assets/:id/relationships/"+name, a(themeAssets.relationship(name))...)
	}

	app.Get("/site/theme", a(themes.live)...)
	app.Get("/site/relationships/theme", a(site.themeRelationship)...)
	app.Patch("/site/relationships/theme", a(site.patchThemeRelationship)...)
}
