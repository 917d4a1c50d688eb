// Package worker builds Pressroom's Temporal worker: two task queues with
// slots of their own (asset ingestion and the sweep on one, publishing on the
// other), with bounded concurrency.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/uptrace/bun"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/pressroom/pressroom/activities"
	"github.com/pressroom/pressroom/activities/images"
	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/webhooks"
	"github.com/pressroom/pressroom/workflows"
)

// Deps is what the activities need from the outside world.
type Deps struct {
	Config  config.Config
	DB      *bun.DB
	Storage *minio.Client
	Log     *slog.Logger
}

// MaxConcurrentImageWork bounds how many activities run at once on one
// worker: four keep both cores of a 2-core machine busy. Memory is bounded
// separately by PRESSROOM_IMAGE_MEMORY (activities.MemoryBudget): four
// ordinary 12 MP images fit at once, a 48 MP progressive JPEG runs alone.
const MaxConcurrentImageWork = 4

// MaxConcurrentPublishes bounds the publish activities one worker runs at
// once, on slots image work never takes.
const MaxConcurrentPublishes = 4

// Worker polls both task queues.
type Worker struct {
	// Ingest polls cfg.TaskQueue: uploads, the sweep, and publish workflows
	// started before the publish queue existed (a workflow keeps its queue).
	Ingest sdkworker.Worker
	// Publish polls cfg.PublishTaskQueue: every publish started since.
	Publish sdkworker.Worker
	// Webhooks polls cfg.Webhooks.TaskQueue: deliveries and their sweep.
	Webhooks sdkworker.Worker
	// dispatcher starts delivery workflows when events commit.
	dispatcher *dispatcher
	// commits starts upload and publish workflows a crash left unstarted.
	commits *commitSweeper
}

// MaxConcurrentDeliveries bounds the webhook requests one worker has in
// flight: they wait on the network, not the CPU.
const MaxConcurrentDeliveries = 32

// New returns a worker polling cfg.TaskQueue with every workflow and
// activity registered, and cfg.PublishTaskQueue with publishing's.
func New(c client.Client, d Deps) *Worker {
	ingest := sdkworker.New(c, d.Config.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:     MaxConcurrentImageWork,
		MaxConcurrentWorkflowTaskExecutionSize: 16,
	})
	Register(ingest, c, d)
	publish := sdkworker.New(c, d.Config.PublishTaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:     MaxConcurrentPublishes,
		MaxConcurrentWorkflowTaskExecutionSize: 16,
	})
	RegisterPublish(publish, d)
	hooks := sdkworker.New(c, d.Config.Webhooks.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      MaxConcurrentDeliveries,
		MaxConcurrentLocalActivityExecutionSize: MaxConcurrentDeliveries,
		MaxConcurrentWorkflowTaskExecutionSize:  16,
	})
	a := webhookActivities(c, d)
	RegisterWebhooks(hooks, a)
	hooks.RegisterActivity(&activities.Reviews{DB: d.DB})
	commits := &activities.CommitSweep{DB: d.DB, Temporal: c, TaskQueue: d.Config.TaskQueue, PublishTaskQueue: d.Config.PublishTaskQueue,
		ReviewTaskQueue: d.Config.Webhooks.TaskQueue, ReviewReminder: d.Config.ReviewReminder}
	return &Worker{Ingest: ingest, Publish: publish, Webhooks: hooks,
		dispatcher: &dispatcher{activities: a, databaseURL: d.Config.DatabaseURL, log: d.Log},
		commits:    &commitSweeper{sweep: commits, every: commitSweepEvery, log: d.Log}}
}

// Start starts polling both queues.
func (w *Worker) Start() error {
	if err := w.Publish.Start(); err != nil {
		return fmt.Errorf("start the publish worker: %w", err)
	}
	if err := w.Ingest.Start(); err != nil {
		w.Publish.Stop()
		return fmt.Errorf("start the ingestion worker: %w", err)
	}
	if err := w.Webhooks.Start(); err != nil {
		w.Publish.Stop()
		w.Ingest.Stop()
		return fmt.Errorf("start the webhook worker: %w", err)
	}
	w.dispatcher.start()
	w.commits.start()
	return nil
}

// Stop stops the queues, the dispatcher and the commit sweep, letting
// running activities finish.
func (w *Worker) Stop() {
	w.commits.stop()
	w.dispatcher.stop()
	w.Ingest.Stop()
	w.Publish.Stop()
	w.Webhooks.Stop()
}

// Run polls until interrupt is closed.
func (w *Worker) Run(interrupt <-chan any) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-interrupt
	w.Stop()
	return nil
}

// Register adds every workflow and activity to r: the ingestion queue's
// worker runs them all. The upload sweep signals ingestions through c.
func Register(r sdkworker.Registry, c client.Client, d Deps) {
	RegisterWorkflows(r)
	r.RegisterActivity(publisher(d))
	r.RegisterActivity(&activities.Uploads{
		DB: d.DB, Storage: d.Storage, Buckets: d.Config.Storage, AssetTypes: models.DefaultAssetTypes(),
		Limits: images.Limits{MaxPixels: d.Config.MaxImagePixels}, WaitForObject: d.Config.UploadWait, Log: d.Log,
		Memory: activities.NewMemoryBudget(d.Config.ImageMemory), SiteLimit: d.Config.SiteUploadLimit,
	})
	r.RegisterActivity(&activities.Sweeper{DB: d.DB, Storage: d.Storage, Buckets: d.Config.Storage, Temporal: c,
		SiteLimit: d.Config.SiteUploadLimit})
	r.RegisterActivity(&activities.OAuthPrune{DB: d.DB, LoginWindow: d.Config.OAuth.LoginWindow, Log: d.Log})
	r.RegisterActivity(&activities.AuditPrune{DB: d.DB, Retention: d.Config.AuditRetention, Log: d.Log})
	r.RegisterActivity(&activities.HistoryPrune{DB: d.DB, Retention: d.Config.History, Log: d.Log})
}

// RegisterWorkflows adds every workflow to r. The replay test registers
// its replayer with it, so it replays exactly what workers run.
func RegisterWorkflows(r sdkworker.WorkflowRegistry) {
	r.RegisterWorkflow(workflows.IngestUpload)
	r.RegisterWorkflow(workflows.AssetUpload) // runs started before IngestUpload
	r.RegisterWorkflow(workflows.SweepUploads)
	r.RegisterWorkflow(workflows.PublishRevision)
	r.RegisterWorkflow(workflows.WebhookDelivery)
	r.RegisterWorkflow(workflows.SweepWebhookDeliveries)
	r.RegisterWorkflow(workflows.PruneWebhookHistory)
	r.RegisterWorkflow(workflows.PruneExpiredOAuth)
	r.RegisterWorkflow(workflows.PruneAuditEvents)
	r.RegisterWorkflow(workflows.PruneHistory)
	r.RegisterWorkflow(workflows.ReleaseReview)
}

// RegisterWebhooks adds the webhook workflows and activities to r, and the
// release reviews' workflow, whose work is writing webhook events (its
// activities, activities.Reviews, are registered beside).
func RegisterWebhooks(r sdkworker.Registry, a *activities.Webhooks) {
	r.RegisterWorkflow(workflows.ReleaseReview)
	r.RegisterWorkflow(workflows.WebhookDelivery)
	r.RegisterWorkflow(workflows.SweepWebhookDeliveries)
	r.RegisterWorkflow(workflows.PruneWebhookHistory)
	r.RegisterActivity(a)
}

// webhookActivities builds the delivery activities from the configuration.
func webhookActivities(c client.Client, d Deps) *activities.Webhooks {
	box, err := models.NewSecretBox(d.Config.Webhooks.SecretKey)
	if err != nil {
		// The configuration always has a key (a default); an empty one is
		// a programming error of the caller.
		panic(fmt.Sprintf("webhook secret key: %v", err))
	}
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return &activities.Webhooks{DB: d.DB, Temporal: c, Box: box, HTTP: webhooks.Client(d.Config.Webhooks.AllowPrivate),
		Config: d.Config.Webhooks, PublicURL: d.Config.PublicURL, Log: log}
}

// RegisterPublish adds the publish workflow and its activity to r.
func RegisterPublish(r sdkworker.Registry, d Deps) {
	r.RegisterWorkflow(workflows.PublishRevision)
	r.RegisterActivity(publisher(d))
}

// publisher is the publish activity, registered on both queues.
func publisher(d Deps) *activities.Publisher {
	return &activities.Publisher{DB: d.DB, Engine: drafts.NewEngine(d.Config.Storage)}
}

// EnsureSchedules creates the periodic sweeps (unconfirmed uploads, webhook
// deliveries), the webhook retention prune, the prune of expired OAuth
// rows, the audit prune and the history prune, each unless it exists.
// Every worker calls it at start; the first one wins.
func EnsureSchedules(ctx context.Context, c client.Client, cfg config.Config) error {
	for _, s := range schedulesOf(cfg) {
		_, err := c.ScheduleClient().Create(ctx, s.opts)
		if err := ignoreExisting(err); err != nil {
			return fmt.Errorf("create %s schedule: %w", s.what, err)
		}
	}
	return nil
}

// schedule is one schedule EnsureSchedules creates.
type schedule struct {
	what string
	opts client.ScheduleOptions
}

// schedulesOf are the schedules of the configuration cfg.
func schedulesOf(cfg config.Config) []schedule {
	hooks := cfg.Webhooks.TaskQueue
	return []schedule{
		{"sweep", client.ScheduleOptions{
			ID:   workflows.SweepScheduleID,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
			Action: &client.ScheduleWorkflowAction{
				ID: "sweep-uploads", Workflow: workflows.SweepUploads, TaskQueue: cfg.TaskQueue,
				WorkflowRunTimeout: 30 * time.Minute,
			},
		}},
		// The webhook schedules: one of each per webhook task queue, so
		// deployments (and tests) sharing a namespace each sweep and prune
		// their own deliveries.
		{"webhook sweep", client.ScheduleOptions{
			ID:   workflows.WebhookSweepScheduleID + "-" + hooks,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: cfg.Webhooks.SweepEvery}}},
			Action: &client.ScheduleWorkflowAction{
				ID: "sweep-webhook-deliveries-" + hooks, Workflow: workflows.SweepWebhookDeliveries,
				TaskQueue: hooks, WorkflowRunTimeout: 10 * time.Minute,
			},
		}},
		// The retention is not in the schedule: the activity reads it from
		// its worker's configuration at every run, so changing it needs no
		// schedule update.
		{"webhook prune", client.ScheduleOptions{
			ID:   workflows.WebhookPruneScheduleID + "-" + hooks,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: workflows.WebhookPruneEvery}}},
			Action: &client.ScheduleWorkflowAction{
				ID: "prune-webhook-history-" + hooks, Workflow: workflows.PruneWebhookHistory,
				TaskQueue: hooks, WorkflowRunTimeout: time.Hour,
			},
		}},
		// One per task queue too; it runs on the ingestion queue, beside
		// the upload sweep.
		{"OAuth prune", client.ScheduleOptions{
			ID:   workflows.OAuthPruneScheduleID + "-" + cfg.TaskQueue,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: workflows.OAuthPruneEvery}}},
			Action: &client.ScheduleWorkflowAction{
				ID: "prune-expired-oauth-" + cfg.TaskQueue, Workflow: workflows.PruneExpiredOAuth,
				TaskQueue: cfg.TaskQueue, WorkflowRunTimeout: time.Hour,
			},
		}},
		// The audit trail's retention, read by the activity at every run
		// like the webhook prune's.
		{"audit prune", client.ScheduleOptions{
			ID:   workflows.AuditPruneScheduleID + "-" + cfg.TaskQueue,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: workflows.AuditPruneEvery}}},
			Action: &client.ScheduleWorkflowAction{
				ID: "prune-audit-events-" + cfg.TaskQueue, Workflow: workflows.PruneAuditEvents,
				TaskQueue: cfg.TaskQueue, WorkflowRunTimeout: time.Hour,
			},
		}},
		// The trash and the versions (docs/history.md), read by the
		// activity at every run too.
		{"history prune", client.ScheduleOptions{
			ID:   workflows.HistoryPruneScheduleID + "-" + cfg.TaskQueue,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: workflows.HistoryPruneEvery}}},
			Action: &client.ScheduleWorkflowAction{
				ID: "prune-history-" + cfg.TaskQueue, Workflow: workflows.PruneHistory,
				TaskQueue: cfg.TaskQueue, WorkflowRunTimeout: time.Hour,
			},
		}},
	}
}

// ignoreExisting passes on an error other than "the schedule exists".
func ignoreExisting(err error) error {
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) && !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return err
	}
	return nil
}
