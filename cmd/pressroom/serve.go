package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/pressroom/pressroom/api"
	"github.com/pressroom/pressroom/api/intake"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/readcache"
	"github.com/pressroom/pressroom/storage"
)

// serve runs the HTTP API until ctx ends, then drains in-flight requests
// for up to the shutdown timeout.
func serve(ctx context.Context, env *environment) error {
	cfg := env.cfg
	db, err := models.Open(ctx, cfg.DatabaseURL, models.WithWebhookPendingLimit(cfg.Webhooks.PendingLimit))
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
		if err := models.ConfigureSearch(ctx, db, cfg.SearchLanguage); err != nil {
			return err
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

	// The read cache hears changes on a connection of its own, for as
	// long as the API serves (docs/caching.md).
	reads, listener := readcache.Listening(cfg.DatabaseURL, readcache.DefaultLimits)
	listening, stopListening := context.WithCancel(context.Background())
	defer stopListening()
	go listener.Run(listening)

	app, err := api.New(api.Deps{Config: cfg, DB: db, Temporal: tc, Storage: mc, Log: env.log, Reads: reads})
	if err != nil {
		return err
	}
	ln, err := listen(cfg, env.log)
	if err != nil {
		return err
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

// listen opens the API's socket, handing out connections within
// PRESSROOM_MAX_CONNS and PRESSROOM_MAX_CONNS_PER_IP (api/intake), and
// accepting on through a shortage of descriptors.
func listen(cfg config.Config, log *slog.Logger) (net.Listener, error) {
	limit := cfg.MaxConns
	if fit, files := connsThatFit(cfg); fit < limit {
		log.Warn("PRESSROOM_MAX_CONNS lowered to fit the open-file limit (raise it with ulimit -n or LimitNOFILE)",
			"max_conns", fit, "configured", limit, "open_file_limit", files)
		limit = fit
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	l, err := intake.NewListener(ln, intake.Limits{Max: limit, PerAddress: cfg.MaxConnsPerIP, Exempt: cfg.TrustedProxies}, log)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return l, nil
}

// connsThatFit is how many client connections fit in the process's
// open-file limit (RLIMIT_NOFILE; Go raises it to the hard limit at start)
// beside what the API needs besides: its database pool, Temporal, storage,
// the debug listener, files. Past the limit every accept fails, so the
// connection cap must bite first. An unknown limit fits anything.
func connsThatFit(cfg config.Config) (conns int, files uint64) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return cfg.MaxConns, 0
	}
	reserve := uint64(128 + cfg.DBMaxConns)
	if rl.Cur >= uint64(cfg.MaxConns)+reserve {
		return cfg.MaxConns, rl.Cur
	}
	return int(max(rl.Cur-min(reserve, rl.Cur), rl.Cur/2, 1)), rl.Cur
}
