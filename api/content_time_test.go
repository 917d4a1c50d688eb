package api

import (
	"math/rand/v2"
	"testing"
	"time"
)

// formatTime's fast path (utcMillis) must write what parsing and
// formatting wrote, for every form to_jsonb writes and for others.
func TestFormatTimeMatchesParsing(t *testing.T) {
	slow := func(s string) any {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return s
		}
		return timestamp(tm)
	}
	cases := []string{
		"2026-11-24T06:47:55.123456+00:00", "2026-11-24T06:47:55+00:00", "2026-11-24T06:47:55.1+00:00",
		"2026-11-24T06:47:55.1299+00:00", "2024-02-29T23:59:59.999999+00:00", "2023-02-29T10:00:00+00:00",
		"2026-04-31T10:00:00+00:00", "2026-12-31T10:00:00+00:00", "2000-02-29T00:00:00+00:00", "1900-02-29T00:00:00+00:00",
		"2026-11-24T24:00:00+00:00", "2026-11-24T06:60:00+00:00", "2026-11-24T06:47:55.+00:00", "2026-11-24T06:47:55.12a+00:00",
		"2026-11-24T06:47:55.123456+01:00", "2026-11-24T06:47:55.123456Z", "2026-11-24 06:47:55+00:00", "0001-01-01T00:00:00+00:00 BC",
		"2026-13-01T00:00:00+00:00", "2026-00-01T00:00:00+00:00", "2026-11-00T00:00:00+00:00", "x", "", "2026-11-24T06:47:55.1234567890+00:00",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		tm := time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC()
		cases = append(cases, tm.Format("2006-01-02T15:04:05.999999")+"+00:00")
	}
	for _, s := range cases {
		if got, want := formatTime(s), slow(s); got != want {
			t.Errorf("formatTime(%q) = %v, parsing gives %v", s, got, want)
		}
	}
	if formatTime(nil) != nil || formatTime(3.0) != nil {
		t.Error("a non-string timestamp must render as null")
	}
}
