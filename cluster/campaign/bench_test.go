package campaign

import (
	"testing"
	"time"

	"github.com/flinksim/flinksim/sim/swarm"
)

// BenchmarkSwarmSeeds runs the swarm's seeds 1, 2, ... (both runs of each
// and the checks) on one worker and reports seeds per second, the figure
// the README's swarm section gives (the goal: at least 4 seeds/s on 2
// cores with --parallel 2, CI's 200 seeds within 3 minutes). Every seed
// must pass.
func BenchmarkSwarmSeeds(b *testing.B) {
	c := Campaign{WallLimit: 2 * time.Minute}
	start := time.Now()
	for i := 0; i < b.N; i++ {
		seed := uint64(i%200 + 1)
		if r := c.RunSeed(seed); r.Verdict.Class != swarm.ClassOK {
			b.Fatalf("seed %d: %s %s", seed, r.Verdict.Class, r.Verdict.Invariant())
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "seeds/s")
}
