package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/storage"
)

// serve runs the HTTP API until ctx ends, then drains in-flight requests
// for up to the shutdown timeout.
func serve(ctx context.Context, env *environment) error {
	cfg := env.cfg
	db, err := models.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	models.SizePool(db, cfg.DBMaxConns)
	if cfg.AutoMigrate {
		m, err := models.NewMigrator(db)
		if err != nil {
			return err
		}
		applied, err := m.Up(ctx)
		if err != nil {
			return err
		}
		if len(applied) > 0 {
			env.log.Info("applied migrations", "migrations", applied)
		}
	}
	// Lazy: the API starts (and /readyz reports the outage) while Temporal is down.
	tc, err := client.NewLazyClient(temporalOptions(env))
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer tc.Close()
	mc, err := storage.NewClient(cfg.Storage)
	if err != nil {
		return err
	}

	app, err := api.New(api.Deps{Config: cfg, DB: db, Temporal: tc, Storage: mc, Log: env.log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	env.log.Info("api listening", "addr", ln.Addr().String(), "public_url", cfg.PublicURL)
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	env.log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	if err := app.ShutdownWithTimeout(cfg.ShutdownTimeout); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func temporalOptions(env *environment) client.Options {
	return client.Options{
		HostPort:  env.cfg.TemporalAddress,
		Namespace: env.cfg.TemporalNamespace,
		Logger:    sdklog.NewStructuredLogger(env.log.With("component", "temporal-sdk")),
		ConnectionOptions: client.ConnectionOptions{
			KeepAliveTime:    30 * time.Second,
			KeepAliveTimeout: 10 * time.Second,
		},
	}
}
