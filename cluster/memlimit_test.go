package cluster

import (
	"io"
	"math"
	"runtime/debug"
	"testing"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// A Run that adapts its GC has RunMemoryLimit while it runs and while its
// result is read, and gives the process its own limit back; one that does
// not, or a process with a limit of its own, keeps the process's.
func TestRunSoftMemoryLimit(t *testing.T) {
	cfg := config.Default()
	if err := cfg.Set("sim.duration", "2 s"); err != nil {
		t.Fatal(err)
	}
	during := func(adapt bool) (seen int64) {
		seen = -1
		obs := func(*eventlog.LogEvent) {
			if seen < 0 {
				seen = debug.SetMemoryLimit(-1)
			}
		}
		if _, err := Run(cfg, Options{Log: io.Discard, AdaptGC: adapt, Observe: obs}); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	before := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(before)
	if got := during(true); got != RunMemoryLimit {
		t.Errorf("limit during an adapting run: %d, want %d", got, RunMemoryLimit)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit after the run: %d, want none", got)
	}
	if got := during(false); got != math.MaxInt64 {
		t.Errorf("limit during a run that does not adapt: %d, want none", got)
	}
	debug.SetMemoryLimit(1 << 30)
	if got := during(true); got != 1<<30 {
		t.Errorf("limit during a run in a process with its own: %d, want 1 GiB", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("limit after that run: %d, want 1 GiB", got)
	}
}
