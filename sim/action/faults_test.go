package action

import (
	"strings"
	"testing"
	"time"
)

// The scheduler's other faults parse, render in the form they parse from,
// and refuse what is wrong with the allowed form.
func TestParseSchedulerFaults(t *testing.T) {
	for _, c := range []struct {
		give string
		want Action
	}{
		{"at=30s stall-taskmanager tm-2 for 12s", Action{30 * time.Second, StallTaskManager, "tm-2 for 12s"}},
		{"at=1 min stall-taskmanager tm-10 for 1500 ms", Action{time.Minute, StallTaskManager, "tm-10 for 1500ms"}},
		{"at=5s network-jitter 3ms for 10s", Action{5 * time.Second, NetworkJitter, "3ms for 10s"}},
		{"at=5s network-jitter 2 ms for 1 min", Action{5 * time.Second, NetworkJitter, "2ms for 1min"}},
		{"at=9s lose-rpc acknowledge-checkpoint within 5s", Action{9 * time.Second, LoseRPC, "acknowledge-checkpoint within 5s"}},
		{"at=9s lose-rpc notify-checkpoint-complete within 2 s", Action{9 * time.Second, LoseRPC, "notify-checkpoint-complete within 2s"}},
		{"at=9s lose-rpc decline-checkpoint within 300ms", Action{9 * time.Second, LoseRPC, "decline-checkpoint within 300ms"}},
	} {
		got, err := Parse(c.give)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.give, got, err, c.want)
			continue
		}
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Errorf("Parse(String()) of %q = %+v, %v", c.give, again, err)
		}
	}
	for give, want := range map[string]string{
		"at=1s stall-taskmanager tm-1":                      "needs 'tm-N for DURATION'",
		"at=1s stall-taskmanager jobmanager for 5s":         `"jobmanager" is not a task manager name`,
		"at=1s stall-taskmanager tm-1 for 0 ms":             "must be more than 0 ms",
		"at=1s network-jitter for 5s":                       "needs 'MAX for DURATION'",
		"at=1s network-jitter 3ms for":                      "needs 'MAX for DURATION'",
		"at=1s network-jitter 2s for 5s":                    "more than 1 s",
		"at=1s network-jitter 0ms for 5s":                   "must be more than 0 ms",
		"at=1s lose-rpc heartbeat within 5s":                `"heartbeat" is not an RPC it can lose`,
		"at=1s lose-rpc acknowledge-checkpoint":             "needs 'RPC within DURATION'",
		"at=1s lose-rpc acknowledge-checkpoint within soon": "within soon",
	} {
		if _, err := Parse(give); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", give, err, want)
		}
	}
}
