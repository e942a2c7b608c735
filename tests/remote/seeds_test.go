package remote_test

import (
	"fmt"
	"testing"
)

// Many seeds, each with its own faults (kills, cuts between the
// TaskManagers and between a TaskManager and the JobManager, a stall),
// checkpointing on and a restart strategy: over a jobmanager and three
// taskmanager processes (one spare for the replacement TaskManager) the
// log and the output are flinksim run's, byte for byte (the plain driver
// behind flinksim run is the oracle). The faults are simulated ones
// (--action): the real loss of a process is TestSIGKILLTaskManager's and
// TestSeparateHostsLinkDown's.
func TestManySeedsWithFaultsSameLog(t *testing.T) {
	seeds := 8
	if testing.Short() {
		seeds = 3
	}
	for seed := 1; seed <= seeds; seed++ {
		// the faults of a seed, from the seed alone
		at := func(k int) int { return 3 + (seed*7+k*5)%9 }
		faults := [][]string{
			{"--action", fmt.Sprintf("at=%ds kill-taskmanager tm-%d", at(1), 1+seed%2)},
			{"--action", fmt.Sprintf("at=%ds partition-network tm-1 tm-2 for %ds", at(2), 1+seed%4)},
			{"--action", fmt.Sprintf("at=%ds partition-network tm-%d jobmanager for 8s", at(3), 2-seed%2)},
			{"--action", fmt.Sprintf("at=%ds stall-taskmanager tm-%d for 2s", at(4), 1+seed%2)},
		}
		args := []string{"--seed", fmt.Sprint(seed), "--duration", "25s",
			"--set", "execution.checkpointing.interval=2s", "--set", "restart-strategy.type=fixed-delay", "--set", "restart-strategy.fixed-delay.attempts=100",
			"--set", "heartbeat.interval=1s", "--set", "heartbeat.timeout=3s"}
		// two of the four kinds per seed, the pair turning with the seed
		args = append(append(args, faults[seed%4]...), faults[(seed+1+seed/4)%4]...)
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			sameAsOneProcess(t, spec{tms: 3, args: []string{"--spare-taskmanagers", "1"}}, args...)
		})
	}
}
