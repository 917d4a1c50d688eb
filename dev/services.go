package dev

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
)

// SearchAttributes are registered on the Temporal dev server so operators
// can filter Pressroom's workflows by site, upload and revision in the UI,
// and completed ingestions by outcome (workflows.OutcomeAttribute).
var SearchAttributes = []string{"PressroomSiteId", "PressroomUploadId", "PressroomRevisionId", "PressroomReleaseId", "PressroomWebhookId", "PressroomOutcome"}

// DatetimeSearchAttributes are registered as Datetime: when a scheduled
// revision publishes (workflows.PublishAtAttribute).
var DatetimeSearchAttributes = []string{"PressroomPublishAt"}

// TemporalDynamicConfig is the dynamic configuration Pressroom runs Temporal
// with, as `KEY=VALUE` pairs (JSON values) for `temporal server start-dev
// --dynamic-config-value`. Production's server reads the same settings from
// dev/temporal-dynamicconfig.yaml (docker-compose.yml mounts it; a test
// keeps the two in step). Measured and explained in docs/drafts.md,
// "Publish latency":
//
//   - history.transferProcessorMaxPollRPS: every workflow and activity task
//     reaches matching through the history shard's transfer queue, whose
//     reads are rate limited to 20 per second by default. One publish
//     makes three or four such tasks back to back, so at that rate each
//     waited about 40 ms for the limiter (a one-draft publish: ~145 ms, of
//     which ~5 ms of work). 200 per second cuts the wait to a few ms and
//     still bounds the reads a shard makes.
//   - system.enableActivityEagerExecution: a worker that schedules an
//     activity on its own task queue gets the activity task back in the
//     answer to its workflow task completion instead of through matching:
//     one transfer task and one dispatch fewer. The activity stays an
//     ordinary one (history events, timeouts, heartbeats, retries through
//     matching, the UI). The server defaults it to off.
var TemporalDynamicConfig = []string{
	"history.transferProcessorMaxPollRPS=200",
	"system.enableActivityEagerExecution=true",
}

// TemporalOptions configures the Temporal dev server.
type TemporalOptions struct {
	Bin      string
	Port     int
	UIPort   int    // 0 runs headless (no Web UI)
	DBFile   string // "" keeps everything in memory
	LogLevel string
	// DynamicConfig replaces TemporalDynamicConfig when not nil (an empty
	// slice runs the server's defaults): bench/temporal compares settings.
	DynamicConfig []string
}

// StartTemporal starts `temporal server start-dev` and waits until its
// frontend answers health checks.
func StartTemporal(ctx context.Context, o TemporalOptions, out io.Writer) (*Process, string, error) {
	addr := "127.0.0.1:" + strconv.Itoa(o.Port)
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(o.Port),
		"--namespace", "default", "--log-level", orDefault(o.LogLevel, "warn")}
	if o.DBFile != "" {
		args = append(args, "--db-filename", o.DBFile)
	}
	if o.UIPort != 0 {
		args = append(args, "--ui-ip", "127.0.0.1", "--ui-port", strconv.Itoa(o.UIPort))
	} else {
		args = append(args, "--headless")
	}
	for _, sa := range SearchAttributes {
		args = append(args, "--search-attribute", sa+"=Keyword")
	}
	for _, sa := range DatetimeSearchAttributes {
		args = append(args, "--search-attribute", sa+"=Datetime")
	}
	dynamic := TemporalDynamicConfig
	if o.DynamicConfig != nil {
		dynamic = o.DynamicConfig
	}
	for _, kv := range dynamic {
		args = append(args, "--dynamic-config-value", kv)
	}
	p, err := StartProcess("temporal", o.Bin, args, nil, out, nil)
	if err != nil {
		return nil, "", err
	}
	err = p.WaitFor(ctx, 90*time.Second, func(ctx context.Context) error { return temporalHealthy(ctx, addr) })
	if err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, "", err
	}
	return p, addr, nil
}

func temporalHealthy(ctx context.Context, addr string) error {
	if err := dialable(ctx, addr); err != nil {
		return err
	}
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default", Logger: quietLogger{}})
	if err != nil {
		return err
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = c.CheckHealth(cctx, &client.CheckHealthRequest{})
	return err
}

// MinIOOptions configures the MinIO server.
type MinIOOptions struct {
	Bin                  string
	DataDir              string
	Port, ConsolePort    int
	AccessKey, SecretKey string
}

// StartMinIO starts `minio server` and waits until it reports itself live.
func StartMinIO(ctx context.Context, o MinIOOptions, out io.Writer) (*Process, string, error) {
	addr := "127.0.0.1:" + strconv.Itoa(o.Port)
	args := []string{"server", o.DataDir, "--quiet", "--address", addr,
		"--console-address", "127.0.0.1:" + strconv.Itoa(o.ConsolePort)}
	env := []string{
		"MINIO_ROOT_USER=" + o.AccessKey,
		"MINIO_ROOT_PASSWORD=" + o.SecretKey,
		"MINIO_API_CORS_ALLOW_ORIGIN=*",
		"MINIO_BROWSER_REDIRECT=off",
		"MINIO_UPDATE=off",
		"MINIO_CALLHOME_ENABLE=off",
	}
	p, err := StartProcess("minio", o.Bin, args, env, out, nil)
	if err != nil {
		return nil, "", err
	}
	endpoint := "http://" + addr
	err = p.WaitFor(ctx, 60*time.Second, func(ctx context.Context) error {
		return httpOK(ctx, endpoint+"/minio/health/live")
	})
	if err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, "", err
	}
	return p, endpoint, nil
}

func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, resp.StatusCode)
	}
	return nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// quietLogger silences the SDK's connection chatter during readiness polls.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// HTTPOK tells whether url answers 200.
func HTTPOK(ctx context.Context, url string) error { return httpOK(ctx, url) }
