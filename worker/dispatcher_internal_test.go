package worker

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// A burst of notifications names the sites to dispatch; one without a
// site (an older process) or past the bound means every site (nil).
func TestSiteSetNamesTheNotifiedSites(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	s := newSiteSet()
	for _, p := range []string{a.String(), b.String(), a.String()} {
		s.add(p)
	}
	got := s.list()
	slices.SortFunc(got, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	want := []uuid.UUID{a, b}
	slices.SortFunc(want, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	if !slices.Equal(got, want) {
		t.Errorf("list = %v, want %v (each site once)", got, want)
	}

	s.add("") // a process older than per-site dispatch
	if s.list() != nil {
		t.Errorf("after a notification without a site, list = %v, want nil (every site)", s.list())
	}

	burst := newSiteSet()
	for range maxBurstSites + 1 {
		burst.add(uuid.NewString())
	}
	if burst.list() != nil {
		t.Errorf("a burst of %d sites names %d; want nil (every site), so one dispatch stays bounded", maxBurstSites+1, len(burst.list()))
	}
}
