package readcache

import "github.com/pressroom/pressroom/models"

// Listening is a cache that hears the database's changes: Run the
// listener (on a connection of its own to databaseURL) for as long as the
// cache serves; until it listens the cache serves nothing.
func Listening(databaseURL string, limits Limits) (*Cache, *models.ReadListener) {
	ln := &models.ReadListener{URL: databaseURL}
	c := New(limits, ln)
	ln.Notified, ln.Live = c.Notified, c.Live
	return c, ln
}
