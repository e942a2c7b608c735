package tests

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// TestHollywoodAndPlainDriversAgree runs each scenario twice: with every
// component a Hollywood actor (the product) and with the plain driver that
// calls the same components one after the other (kernel.Loop). The two
// logs and outputs must be byte-identical: the plain loop is the oracle for
// the actor path.
func TestHollywoodAndPlainDriversAgree(t *testing.T) {
	clicks := dataPath("playground-clicks.jsonl")
	kill := func(at string) []action.Action {
		a, err := action.Parse("at=" + at + " kill-taskmanager tm-1")
		if err != nil {
			t.Fatal(err)
		}
		return []action.Action{a}
	}
	rescale, err := action.Parse("at=70s rescale 3")
	if err != nil {
		t.Fatal(err)
	}
	widen, err := action.Parse("at=10s rescale 64")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		kv     []string
		events string
		acts   []action.Action
		adapt  bool // the Hollywood run chooses its Ps and GC percent (cluster.Options.AdaptProcs, AdaptGC)
	}{
		{name: "default", kv: []string{"sim.duration=60 s"}},
		{name: "events file", kv: []string{"job.window.size=15 s"}, events: clicks},
		{name: "checkpoints, kill, exactly-once", events: clicks, acts: kill("67s"),
			kv: []string{"sim.events.pace=event-time", "execution.checkpointing.interval=10 s",
				"sink.delivery-guarantee=exactly-once", "sim.output.isolation-level=read_committed"}},
		{name: "unaligned under backpressure", kv: []string{"sim.duration=30 s", "execution.checkpointing.interval=5 s",
			"execution.checkpointing.unaligned.enabled=true", "sim.cost.window=3 ms"}},
		{name: "rescale 2 to 3", events: clicks, acts: []action.Action{rescale},
			kv: []string{"sim.events.pace=event-time", "taskmanager.numberOfTaskSlots=2"}},
		// narrow steps on one P, then wide ones (64 x 64 channels, ~57
		// deliveries per step) on every P
		{name: "Ps chosen by step width, rescale 2 to 64", acts: []action.Action{widen}, adapt: true,
			kv: []string{"sim.duration=20 s", "sim.taskmanagers=4", "taskmanager.numberOfTaskSlots=16", "job.source.partitions=64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := settings(t, tt.kv...)
			opt := cluster.Options{Actions: tt.acts}
			if tt.events != "" {
				opt.Events = readEvents(t, tt.events, cfg)
			}
			var a, b bytes.Buffer
			opt.Log = &a
			opt.AdaptProcs, opt.AdaptGC = tt.adapt, tt.adapt
			procs, gc := runtime.GOMAXPROCS(0), debug.SetGCPercent(-1)
			debug.SetGCPercent(gc)
			ra, err := cluster.Run(cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := runtime.GOMAXPROCS(0); got != procs {
				t.Fatalf("GOMAXPROCS %d after the run, %d before", got, procs)
			}
			if got := debug.SetGCPercent(gc); got != gc {
				t.Fatalf("GC percent %d after the run, %d before", got, gc)
			}
			opt.AdaptProcs, opt.AdaptGC = false, false
			opt.Log = &b
			rb, err := cluster.RunPlain(cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			if ra.Invariant != "" {
				t.Fatalf("invariant %s: %s", ra.Invariant, ra.Failure)
			}
			if line, x, y, differ := eventlog.FirstDifference(a.Bytes(), b.Bytes()); differ {
				t.Fatalf("logs differ at line %d\n hollywood: %s\n plain:     %s", line, x, y)
			}
			if !sameSink(ra, rb) {
				t.Fatalf("outputs differ: %d and %d records", len(ra.Sink), len(rb.Sink))
			}
			if ra.Steps < 300 {
				t.Fatalf("only %d steps: the scenario did not run", ra.Steps)
			}
		})
	}
}

func sameSink(a, b *cluster.Result) bool {
	if len(a.Sink) != len(b.Sink) {
		return false
	}
	for i := range a.Sink {
		if !bytes.Equal(a.Sink[i].Value, b.Sink[i].Value) || a.Sink[i].Offset != b.Sink[i].Offset {
			return false
		}
	}
	return true
}
