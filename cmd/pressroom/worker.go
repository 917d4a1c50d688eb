package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/storage"
	"github.com/pressroom/pressroom/worker"
)

// runWorker runs the Temporal worker until ctx ends.
func runWorker(ctx context.Context, env *environment) error {
	cfg := env.cfg
	db, err := models.Open(ctx, cfg.DatabaseURL, models.WithWebhookPendingLimit(cfg.Webhooks.PendingLimit))
	if err != nil {
		return err
	}
	defer db.Close()
	models.SizePool(db, cfg.DBMaxConns)
	mc, err := storage.NewClient(cfg.Storage)
	if err != nil {
		return err
	}
	tc, err := dialTemporal(ctx, env)
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := worker.EnsureSchedules(ctx, tc, cfg); err != nil {
		return err
	}
	w := worker.New(tc, worker.Deps{Config: cfg, DB: db, Storage: mc, Log: env.log})
	env.log.Info("worker polling", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace)
	if err := w.Run(stopOn(ctx)); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// dialTemporal connects to Temporal, retrying with backoff while it is not
// up yet, so the worker can be started before the server.
func dialTemporal(ctx context.Context, env *environment) (client.Client, error) {
	delay := 500 * time.Millisecond
	for {
		c, err := client.Dial(temporalOptions(env))
		if err == nil {
			return c, nil
		}
		env.log.Warn("temporal not reachable yet; retrying", "address", env.cfg.TemporalAddress, "error", err, "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to temporal at %s: %w", env.cfg.TemporalAddress, err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 10*time.Second)
	}
}

// stopOn adapts a context to the worker's interrupt channel.
func stopOn(ctx context.Context) <-chan any {
	ch := make(chan any)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch
}
