package swarm

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The generator's picture of the cluster against what the simulator's
// ResourceManager does, in the cases where they used to differ. Each case
// was run with `flinksim run` and the actions below (heartbeat 1 s / 5 s);
// the ResourceManager's registered_task_managers at the end and its
// taskmanager_lost / action_ignored events are noted beside it.
func TestClusterPicture(t *testing.T) {
	type fault struct {
		kill     bool
		tm       string
		at, heal time.Duration
	}
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	tests := []struct {
		name   string
		tms    int
		faults []fault
		alive  string // the names the faults pick from
		want   int    // TaskManagers the cluster surely has
	}{
		{
			// seed 90095: tm-2 (tm-1's replacement, started at 12.002) is
			// cut off from 11.985 on and registers only at 24.703; nothing
			// replaces it
			name: "replacement cut off before it registered", tms: 1,
			faults: []fault{{true, "tm-1", s(7.582), 0}, {false, "tm-2", s(11.985), s(23.8)}},
			alive:  "tm-2 tm-3", want: 1,
		},
		{
			// ... and once it registered (12.003), the ResourceManager
			// replaces it when its heartbeat times out
			name: "replacement cut off after it registered", tms: 1,
			faults: []fault{{true, "tm-1", s(7.582), 0}, {false, "tm-2", s(13), s(25)}},
			alive:  "tm-2 tm-3", want: 2,
		},
		{
			// the kill of tm-2 at 6 s comes before the ResourceManager
			// starts it (9.002): action_ignored, and tm-2 is the one
			// TaskManager
			name: "kill of a replacement not started yet", tms: 1,
			faults: []fault{{true, "tm-1", s(5), 0}, {true, "tm-2", s(6), 0}},
			alive:  "tm-3", want: 1,
		},
		{
			// tm-1, cut off 4-15 s, registers again at 20.702: killed at
			// 16 s it is not replaced (2 at the end) ...
			name: "kill of a cut TaskManager before it registered again", tms: 2,
			faults: []fault{{false, "tm-1", s(4), s(15)}, {true, "tm-1", s(16), 0}},
			alive:  "tm-2 tm-3 tm-4", want: 2,
		},
		{
			// ... killed at 22 s it is (taskmanager_lost at 26.002, tm-4;
			// 3 at the end)
			name: "kill of a cut TaskManager after it registered again", tms: 2,
			faults: []fault{{false, "tm-1", s(4), s(15)}, {true, "tm-1", s(22), 0}},
			alive:  "tm-2 tm-3 tm-4", want: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(&Scenario{TaskManagers: tt.tms, HeartbeatInterval: time.Second, HeartbeatTimeout: 5 * time.Second})
			for _, f := range tt.faults {
				until := f.heal
				if f.kill {
					until = f.at
				}
				c.lose(f.tm, f.kill, f.at, until)
			}
			alive := ""
			for i, tm := range c.alive {
				if i > 0 {
					alive += " "
				}
				alive += tm
			}
			if alive != tt.alive || c.taskManagers() != tt.want {
				t.Errorf("picture %q with %d TaskManagers surely there, want %q with %d", alive, c.taskManagers(), tt.alive, tt.want)
			}
		})
	}
}

// firstAttemptAfter against an oracle that replays RetryingRegistration's
// attempts (timeouts 100 ms, doubled up to 30 s) for every begin in [lo, hi]
// in 1 ms steps: it is never earlier than the latest first attempt after
// the heal, and at most 1 ms later.
func TestFirstAttemptAfter(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := time.Duration(rapid.IntRange(0, 60_000).Draw(t, "lo_ms")) * time.Millisecond
		hi := lo + time.Duration(rapid.IntRange(0, 2_000).Draw(t, "width_ms"))*time.Millisecond
		heal := lo + time.Duration(rapid.IntRange(0, 120_000).Draw(t, "heal_after_lo_ms"))*time.Millisecond
		var want time.Duration
		for begin := lo; begin <= hi; begin += time.Millisecond {
			at, step := begin, registrationFirstRetry
			for at < heal {
				at += step
				step = min(2*step, registrationMaxRetry)
			}
			want = max(want, at)
		}
		got := firstAttemptAfter(lo, hi, heal)
		if got < want || got > want+time.Millisecond {
			t.Fatalf("firstAttemptAfter(%v, %v, %v) = %v, the oracle says %v", lo, hi, heal, got, want)
		}
	})
}
