package testsupport

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strconv"

	"github.com/pressroom/pressroom/config"
)

// BombPNG is a tiny PNG whose header declares w×h pixels: decoding it would
// need gigabytes, so the service must refuse it from the header alone.
// Tests and the upload benchmark share it.
func BombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.Write([]byte("\x89PNG\r\n\x1a\n"))
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// WorkerEnv is the environment that points a `pressroom worker` process at
// cfg (with its temporary files in tmp), for fault tests and benchmarks
// that run the worker as a separate process.
func WorkerEnv(cfg config.Config, tmp string) []string {
	st := cfg.Storage
	return []string{
		"DATABASE_URL=" + cfg.DatabaseURL,
		"TEMPORAL_ADDRESS=" + cfg.TemporalAddress,
		"TEMPORAL_NAMESPACE=" + cfg.TemporalNamespace,
		"PRESSROOM_TASK_QUEUE=" + cfg.TaskQueue,
		"PRESSROOM_PUBLISH_TASK_QUEUE=" + cfg.PublishTaskQueue,
		"PRESSROOM_S3_ENDPOINT=" + st.Endpoint,
		"PRESSROOM_S3_PUBLIC_ENDPOINT=" + st.PublicEndpoint,
		"PRESSROOM_S3_ACCESS_KEY=" + st.AccessKey,
		"PRESSROOM_S3_SECRET_KEY=" + st.SecretKey,
		"PRESSROOM_S3_REGION=" + st.Region,
		"PRESSROOM_UPLOADS_BUCKET=" + st.UploadsBucket,
		"PRESSROOM_ASSETS_BUCKET=" + st.AssetsBucket,
		"PRESSROOM_MAX_IMAGE_PIXELS=" + strconv.FormatInt(cfg.MaxImagePixels, 10),
		"PRESSROOM_UPLOAD_WAIT=" + cfg.UploadWait.String(),
		// The worker gives processing slots by the same number as the API.
		"PRESSROOM_SITE_UPLOAD_LIMIT=" + strconv.Itoa(cfg.SiteUploadLimit),
		"PRESSROOM_WEBHOOK_TASK_QUEUE=" + cfg.Webhooks.TaskQueue,
		"PRESSROOM_WEBHOOK_ALLOW_PRIVATE=" + strconv.FormatBool(cfg.Webhooks.AllowPrivate),
		"PRESSROOM_WEBHOOK_RETRY_BASE=" + cfg.Webhooks.RetryBase.String(),
		"PRESSROOM_WEBHOOK_GIVE_UP=" + cfg.Webhooks.GiveUpAfter.String(),
		"PRESSROOM_WEBHOOK_SWEEP_EVERY=" + cfg.Webhooks.SweepEvery.String(),
		"PRESSROOM_WEBHOOK_SECRET_KEY=" + cfg.Webhooks.SecretKey,
		"PRESSROOM_CLIENT_SECRET_KEY=" + cfg.OAuth.ClientSecretKey,
		"PRESSROOM_DEV=" + strconv.FormatBool(cfg.Dev),
		"PRESSROOM_WEBHOOK_PENDING_LIMIT=" + strconv.Itoa(cfg.Webhooks.PendingLimit),
		"PRESSROOM_REVIEW_REMINDER=" + cfg.ReviewReminder.String(),
		"PRESSROOM_LOG_LEVEL=warn",
		"TMPDIR=" + tmp,
	}
}
