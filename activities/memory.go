package activities

import (
	"context"
	"time"

	"golang.org/x/sync/semaphore"
)

// BytesPerPixel estimates what decoding and resizing an image holds at
// once. Baseline JPEGs use far less (libvips shrinks them while loading),
// but progressive JPEG, interlaced PNG and GIF decode the whole image:
// measured peaks of about 7 bytes per pixel at 48 megapixels.
const BytesPerPixel = 8

// MemoryBudget bounds the memory all image work of one worker may hold at
// once. Each image reserves its estimate before decoding; a larger image
// waits for smaller ones to finish, and one over the whole budget runs
// alone.
type MemoryBudget struct {
	total int64
	sem   *semaphore.Weighted
}

// NewMemoryBudget returns a budget of total bytes.
func NewMemoryBudget(total int64) *MemoryBudget {
	return &MemoryBudget{total: total, sem: semaphore.NewWeighted(total)}
}

// Reserve waits until pixels' estimate fits, heartbeating meanwhile so the
// wait does not look like a dead worker, and returns the release. The
// heartbeats carry details (the caller's progress, kept for its next attempt).
func (m *MemoryBudget) Reserve(ctx context.Context, pixels int64, details ...any) (release func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	n := min(max(pixels*BytesPerPixel, 1), m.total)
	stop := heartbeat(ctx, 5*time.Second, details...)
	err = m.sem.Acquire(ctx, n)
	stop()
	if err != nil {
		return nil, err
	}
	return func() { m.sem.Release(n) }, nil
}
