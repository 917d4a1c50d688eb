// Package worker builds Pressroom's Temporal worker: one task queue, every
// workflow and activity registered, with bounded concurrency.
package worker

import (
	"log/slog"

	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/pressroom/pressroom/config"
)

// Deps is what the activities need from the outside world.
type Deps struct {
	Config  config.Config
	DB      *bun.DB
	Storage *minio.Client
	Log     *slog.Logger
}

// New returns a worker polling cfg.TaskQueue with every workflow and
// activity registered. Concurrency is bounded so a burst of uploads cannot
// exhaust the machine's memory: image work is the expensive part.
func New(c client.Client, d Deps) sdkworker.Worker {
	w := sdkworker.New(c, d.Config.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:     8,
		MaxConcurrentWorkflowTaskExecutionSize: 16,
	})
	Register(w, d)
	return w
}

// Register adds every workflow and activity to r. Tests use it with the
// SDK's test environment so they exercise exactly what production registers.
func Register(r sdkworker.Registry, d Deps) {
	_ = d // the workflows and activities arrive with the features that need them
}
