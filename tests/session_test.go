package tests

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/vt"
)

// replayOf builds the recipe of a session's log as flinksim replay reads it:
// the live actions from the action events, and the cut from an INTERRUPTED
// summary.
func replayOf(t *testing.T, log []byte, opt cluster.Options) cluster.Options {
	t.Helper()
	evs := parseLog(t, log)
	for _, e := range eventsOf(evs, eventlog.KindAction) {
		a, err := action.Parse(e.str("action"))
		if err != nil {
			t.Fatal(err)
		}
		opt.LiveActions = append(opt.LiveActions, a)
	}
	last := evs[len(evs)-1]
	if last.str("job_status") == "INTERRUPTED" {
		opt.StopAt, opt.Stop = vt.Of(last.num("vt")), true
	}
	return opt
}

// TestSessionLiveActionsReplay steers a session as the UI does: run to a
// time, act (kill a TaskManager, trigger a checkpoint), run on, take single
// steps and act between them, then cut the run short. The log records the
// live actions as action events at the virtual times they happened; a
// fresh run of that recipe writes the same log byte for byte, with the
// Hollywood driver and with the plain one.
func TestSessionLiveActionsReplay(t *testing.T) {
	cfg := settings(t, "sim.duration=10 min", "restart-strategy.type=fixed-delay", "execution.checkpointing.interval=10 s")
	var live bytes.Buffer
	s, err := cluster.NewSession(cfg, cluster.Options{Log: &live})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.RunUntil(30_000_000); st.Now != 30_000_000 || st.Ended {
		t.Fatalf("paused at %+v, want 30 s", st)
	}
	a, err := s.Act("kill-taskmanager tm-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.String(); got != "at=30s kill-taskmanager tm-1" {
		t.Fatalf("scheduled %q", got)
	}
	s.RunUntil(45_500_000)
	if _, err := s.Act("trigger-checkpoint"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		s.Step()
	}
	st := s.Status()
	a, err = s.Act("trigger-savepoint")
	if err != nil {
		t.Fatal(err)
	}
	if vt.FromDuration(a.At) != st.Now+1 {
		t.Fatalf("after a step at %d the action went to %d, want 1 µs later", st.Now, vt.FromDuration(a.At))
	}
	if _, err := s.Act("at=20s trigger-checkpoint"); err == nil || !strings.Contains(err.Error(), "in the past") {
		t.Fatalf("an action in the past: %v", err)
	}
	s.RunUntil(70_000_000)
	s.Interrupt()
	res := s.Finish()
	if res.JobStatus != "INTERRUPTED" || res.EndVT != 70_000_000 {
		t.Fatalf("ended %s at %d", res.JobStatus, res.EndVT)
	}
	evs := parseLog(t, live.Bytes())
	acts := eventsOf(evs, eventlog.KindAction)
	if len(acts) != 3 {
		t.Fatalf("%d action events, want 3", len(acts))
	}
	if eventsOf(evs, "taskmanager_killed")[0].num("vt") != 30_000_000 {
		t.Fatal("the kill did not happen at 30 s")
	}
	if len(eventsOf(evs, "heartbeat_timeout")) != 1 {
		t.Fatal("the JobManager did not notice the lost TaskManager")
	}
	for _, plain := range []bool{false, true} {
		var again bytes.Buffer
		opt := replayOf(t, live.Bytes(), cluster.Options{Log: &again})
		run := cluster.Run
		if plain {
			run = cluster.RunPlain
		}
		if _, err := run(cfg, opt); err != nil {
			t.Fatal(err)
		}
		if line, x, y, differ := eventlog.FirstDifference(live.Bytes(), again.Bytes()); differ {
			t.Fatalf("plain=%v: the replay differs at line %d\n session: %s\n replay:  %s", plain, line, x, y)
		}
	}
}

// A run interrupted before its first step (Ctrl-C at once) ends
// INTERRUPTED at virtual time 0, and its replay stops there too rather
// than running the whole job.
func TestInterruptedAtTimeZeroReplays(t *testing.T) {
	cfg := settings(t, "sim.duration=10 s")
	var live bytes.Buffer
	s, err := cluster.NewSession(cfg, cluster.Options{Log: &live})
	if err != nil {
		t.Fatal(err)
	}
	s.Interrupt()
	if res := s.Finish(); res.JobStatus != "INTERRUPTED" || res.EndVT != 0 {
		t.Fatalf("ended %s at %d, want INTERRUPTED at 0", res.JobStatus, res.EndVT)
	}
	var again bytes.Buffer
	res, err := cluster.RunPlain(cfg, replayOf(t, live.Bytes(), cluster.Options{Log: &again}))
	if err != nil {
		t.Fatal(err)
	}
	if res.JobStatus != "INTERRUPTED" || res.EndVT != 0 {
		t.Fatalf("the replay ended %s at %d", res.JobStatus, res.EndVT)
	}
	if line, x, y, differ := eventlog.FirstDifference(live.Bytes(), again.Bytes()); differ {
		t.Fatalf("the replay differs at line %d\n session: %s\n replay:  %s", line, x, y)
	}
}

// TestObservingChangesNothing runs the same job twice: once straight to
// the end, once in small chunks with every actor inspected and the
// in-flight envelopes read between the chunks, and an observer attached.
// The logs are byte-identical, and the views say what the log says.
func TestObservingChangesNothing(t *testing.T) {
	cfg := settings(t, "sim.duration=20 s", "execution.checkpointing.interval=3 s")
	var plainLog bytes.Buffer
	if _, err := cluster.Run(cfg, cluster.Options{Log: &plainLog}); err != nil {
		t.Fatal(err)
	}
	var watched bytes.Buffer
	observed := 0
	s, err := cluster.NewSession(cfg, cluster.Options{Log: &watched, Observe: func(*eventlog.LogEvent) { observed++ }})
	if err != nil {
		t.Fatal(err)
	}
	sawWindow, sawInFlight := false, false
	for now := vt.Time(0); !s.Status().Ended; now += 137_000 {
		s.RunUntil(now)
		views := s.Inspect()
		if raw, ok := views["window-0"]; ok {
			var v struct {
				Inputs []struct{ Producer string } `json:"inputs"`
				Keys   int                         `json:"keys"`
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			if len(v.Inputs) != 2 {
				t.Fatalf("window-0 shows %d input channels, want 2", len(v.Inputs))
			}
			sawWindow = sawWindow || v.Keys > 0
		}
		if len(s.InFlight()) > 0 {
			sawInFlight = true
		}
	}
	s.Finish()
	if line, x, y, differ := eventlog.FirstDifference(plainLog.Bytes(), watched.Bytes()); differ {
		t.Fatalf("watching changed the log at line %d\n alone:   %s\n watched: %s", line, x, y)
	}
	if lines := bytes.Count(watched.Bytes(), []byte("\n")); observed != lines-2 {
		t.Fatalf("the observer saw %d events, the log has %d besides header and summary", observed, lines-2)
	}
	if !sawWindow || !sawInFlight {
		t.Fatalf("views showed no keys (%v) or nothing in flight (%v)", sawWindow, sawInFlight)
	}
}
