package main

import (
	"strings"
	"testing"
	"time"
)

// TestSoakCI runs the soak in CI mode (1 minute, the same load and
// faults) in `make test`, on the services devstack hands over (or a
// private stack): it fails when an invariant breaks.
func TestSoakCI(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: runs four pressroom processes under load for a minute")
	}
	report, err := run(t.Context(), options{duration: time.Minute, rate: 20, pages: 40, apis: 2, workers: 2, sample: 10 * time.Second})
	t.Log("\n" + report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, "All held.") {
		t.Fatal("the report does not say the invariants held")
	}
}
