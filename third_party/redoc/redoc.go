// Package redoc embeds Redoc's standalone bundle, the renderer GET /docs
// serves (README.md here says which version and how to update it). It is
// third-party code kept out of api/, which only serves it.
package redoc

import _ "embed"

// JS is redoc.standalone.js, served at /docs/redoc.standalone.js.
//
//go:embed redoc.standalone.js
var JS []byte
