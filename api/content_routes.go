package api

// content registers the pages, contents, content-blocks, drafts, revisions
// and versions endpoints.
func (r routes) content() {}
