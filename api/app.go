// Package api is Pressroom's HTTP API: a Fiber app speaking JSON:API 1.1,
// with plain-JSON exceptions for OAuth, health and asset types.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
)

// Deps is what the API needs from the outside world. main builds it.
type Deps struct {
	Config     config.Config
	DB         *bun.DB
	Temporal   client.Client
	Storage    *minio.Client
	Log        *slog.Logger
	AssetTypes models.AssetTypes
}

// New builds the Fiber app with every route and middleware.
func New(d Deps) *fiber.App {
	if d.AssetTypes == nil {
		d.AssetTypes = models.DefaultAssetTypes()
	}
	errs := errorHandler(d.Log)
	app := fiber.New(fiber.Config{
		AppName:               "pressroom",
		BodyLimit:             d.Config.BodyLimit,
		ErrorHandler:          errs,
		DisableStartupMessage: true,
		StrictRouting:         true,
		CaseSensitive:         true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		// Bounded so a flood of huge headers cannot exhaust memory.
		ReadBufferSize: 16 << 10,
	})
	app.Use(withRequestID)
	app.Use(accessLog(d.Log, errs))
	app.Use(recover.New(recover.Config{
		EnableStackTrace: true,
		StackTraceHandler: func(c *fiber.Ctx, e any) {
			d.Log.Error("panic in handler", "request_id", requestID(c), "path", c.Path(), "panic", fmt.Sprint(e))
		},
	}))
	app.Use(negotiate)

	app.Get("/healthz", healthz)
	app.Get("/readyz", readyz(dependencyChecks(d), d.Config.ReadinessTimeout))
	app.Get("/asset-types", assetTypes(d.AssetTypes))
	return app
}

// dependencyChecks are the probes of GET /readyz: Postgres, Temporal and
// both storage buckets.
func dependencyChecks(d Deps) []Check {
	return []Check{
		{Name: "postgres", Probe: func(ctx context.Context) error { return d.DB.PingContext(ctx) }},
		{Name: "temporal", Probe: func(ctx context.Context) error {
			_, err := d.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}},
		{Name: "storage", Probe: func(ctx context.Context) error {
			for _, b := range []string{d.Config.Storage.UploadsBucket, d.Config.Storage.AssetsBucket} {
				ok, err := d.Storage.BucketExists(ctx, b)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("bucket %q does not exist", b)
				}
			}
			return nil
		}},
	}
}

// assetTypes serves GET /asset-types: plain JSON, the table as it is.
func assetTypes(t models.AssetTypes) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		return c.JSON(t)
	}
}
