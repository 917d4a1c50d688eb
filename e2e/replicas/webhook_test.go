package replicas

import (
	"strings"
	"testing"
)

func TestOutOfOrder(t *testing.T) {
	seq := map[string]int64{"a": 1, "b": 2, "c": 3, "d": 4}
	arr := func(id string, pending ...string) Arrival {
		p := map[string]int64{}
		for _, q := range pending {
			p[q] = seq[q]
		}
		return Arrival{ID: id, Pending: p}
	}
	// In order.
	if bad, late := outOfOrder([]Arrival{arr("a", "a", "b"), arr("b", "b", "c"), arr("c", "c")}, seq); len(bad) > 0 || late != 0 {
		t.Errorf("in order: %v, %d late", bad, late)
	}
	// b committed after c was sent: late, not wrong.
	if bad, late := outOfOrder([]Arrival{arr("a", "a"), arr("c", "c"), arr("b", "b")}, seq); len(bad) > 0 || late != 1 {
		t.Errorf("late commit: %v, %d late", bad, late)
	}
	// b was pending when a arrived, yet c went before it.
	bad, _ := outOfOrder([]Arrival{arr("a", "a", "b", "c"), arr("c", "b", "c"), arr("b", "b")}, seq)
	if len(bad) != 1 || !strings.Contains(bad[0], "delivery c (seq 3) arrived before b (seq 2)") {
		t.Errorf("out of order: %v", bad)
	}
	// Unknown pending (the database was down) proves nothing.
	if bad, _ := outOfOrder([]Arrival{{ID: "a"}, {ID: "c"}, {ID: "b"}}, seq); len(bad) > 0 {
		t.Errorf("unknown: %v", bad)
	}
}
