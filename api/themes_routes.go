package api

// themes registers the themes, layouts and theme-assets endpoints.
func (r routes) themes() {}
