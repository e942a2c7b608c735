package resourcemanager

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/vt"
)

// rmRun steps one ResourceManager as the scheduler would: the envelopes a
// test hands it, and the timers it sets itself, in virtual-time order. It
// keeps what the ResourceManager sends to others, logs and spawns.
type rmRun struct {
	t      *testing.T
	rm     *ResourceManager
	o      *kernel.Out
	step   uint64
	timers []*messages.Envelope // its own, not yet delivered
	sent   []*messages.Envelope // to others, in order
	events []kernel.Event
	spawns []string // "name spec-kind"
	specs  []kernel.Spec
}

func newRMRun(t *testing.T, cfg config.Config) *rmRun {
	r := &rmRun{t: t}
	r.rm = New(&cfg)
	r.o = kernel.NewOut(jobgraph.ResourceManagerName, 1, func(name string, s kernel.Spec) (*messages.Spawned, error) {
		r.spawns = append(r.spawns, name+" "+s.Component())
		r.specs = append(r.specs, s)
		return &messages.Spawned{Name: name}, nil
	})
	return r
}

func (r *rmRun) deliver(e *messages.Envelope) {
	r.t.Helper()
	r.step++
	e.To = jobgraph.ResourceManagerName
	d := kernel.Deliver(r.rm, r.o, r.step, vt.Of(e.DeliverAt), []*messages.Envelope{e})
	if d.Failure != "" {
		r.t.Fatalf("delivery failed: %s", d.Failure)
	}
	for _, out := range d.Out {
		if out.To == jobgraph.ResourceManagerName {
			r.timers = append(r.timers, out)
		} else {
			r.sent = append(r.sent, out)
		}
	}
	r.events = append(r.events, d.Events...)
}

// send delivers body from actor from at virtual time at, after every timer
// due before it.
func (r *rmRun) send(at vt.Time, from string, body messages.Body) {
	r.t.Helper()
	r.runTimers(at)
	r.deliver(&messages.Envelope{DeliverAt: at.Micros(), From: from, Body: body})
}

// runTimers delivers the ResourceManager's own timers due before until.
func (r *rmRun) runTimers(until vt.Time) {
	r.t.Helper()
	for {
		slices.SortStableFunc(r.timers, func(a, b *messages.Envelope) int { return cmp.Compare(a.DeliverAt, b.DeliverAt) })
		if len(r.timers) == 0 || vt.Of(r.timers[0].DeliverAt) >= until {
			return
		}
		next := r.timers[0]
		r.timers = r.timers[1:]
		r.deliver(next)
	}
}

func register(tm string, slots int32) messages.Body {
	return &messages.Envelope_RegisterTaskExecutor{RegisterTaskExecutor: &messages.RegisterTaskExecutor{TaskManagerId: tm, NumSlots: slots}}
}

// requests are the RequestSlot messages sent so far, "tm slot alloc".
func (r *rmRun) requests() []string {
	var out []string
	for _, e := range r.sent {
		if m := e.GetRequestSlot(); m != nil {
			out = append(out, e.To+" "+string(rune('0'+m.SlotIndex))+" "+m.AllocationId)
		}
	}
	return out
}

// The slots the JobMaster declares go to the registered TaskManagers in
// name order and slot index order, whatever order they registered in; a
// requirement larger than what is free waits for the next registration.
func TestSlotsGoToTheRequirementInNameOrder(t *testing.T) {
	r := newRMRun(t, config.Default())
	r.send(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	r.send(vt.Millisecond, "tm-2", register("tm-2", 1))
	r.send(2*vt.Millisecond, "tm-1", register("tm-1", 2))
	r.send(3*vt.Millisecond, jobgraph.JobManagerName, &messages.Envelope_DeclareResourceRequirements{
		DeclareResourceRequirements: &messages.DeclareResourceRequirements{JobId: jobgraph.JobID, NumSlots: 4}})
	want := []string{"tm-1 0 alloc-1", "tm-1 1 alloc-2", "tm-2 0 alloc-3"}
	if got := r.requests(); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("requests %v, want %v", got, want)
	}
	r.send(4*vt.Millisecond, "tm-3", register("tm-3", 2))
	want = append(want, "tm-3 0 alloc-4")
	if got := r.requests(); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("after tm-3 registered: requests %v, want %v", got, want)
	}
	for _, e := range r.sent {
		if m := e.GetRequestSlot(); m != nil && (m.JobManager != jobgraph.JobManagerName || m.JobId != jobgraph.JobID) {
			t.Errorf("a slot request names job manager %q and job %q", m.JobManager, m.JobId)
		}
	}
	if r.rm.free() != 1 {
		t.Errorf("free slots %d, want 1 (tm-3's second)", r.rm.free())
	}
}

// A TaskManager whose heartbeat times out loses its slots, and the
// ResourceManager starts a replacement by spec, named after the last
// TaskManager there was (tm-3 after sim.taskmanagers 2), with a Start at
// once; the replacement that dies before it registers is replaced in turn
// (onWorkerTerminated); the termination of a registered one is left to the
// heartbeat.
func TestALostTaskManagerIsReplacedBySpec(t *testing.T) {
	cfg := config.Default()
	cfg.HeartbeatInterval, cfg.HeartbeatTimeout = time.Second, 5*time.Second
	r := newRMRun(t, cfg)
	r.send(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	r.send(vt.Millisecond, "tm-1", register("tm-1", 1))
	r.send(vt.Millisecond, "tm-2", register("tm-2", 1))
	// tm-2 answers every heartbeat request, tm-1 none
	for s := vt.Time(1); s <= 8; s++ {
		r.send(s*vt.Second+10*vt.Millisecond, "tm-2", &messages.Envelope_HeartbeatResponse{HeartbeatResponse: &messages.HeartbeatResponse{TaskManagerId: "tm-2"}})
	}
	r.send(8*vt.Second+20*vt.Millisecond, "tm-1", &messages.Envelope_WorkerTerminated{WorkerTerminated: &messages.WorkerTerminated{TaskManagerId: "tm-1"}})
	if want := []string{"tm-3 TaskExecutor"}; strings.Join(r.spawns, ",") != strings.Join(want, ",") {
		t.Fatalf("spawned %v, want %v", r.spawns, want)
	}
	if _, ok := r.specs[0].(spawn.TaskExecutorSpec); !ok {
		t.Errorf("spec %T, want a TaskExecutorSpec", r.specs[0])
	}
	var lostAt int64 = -1
	for _, ev := range r.events {
		if string(ev.Kind()) == string(eventlog.KindTaskManagerLost) {
			lostAt = ev.Vt
		}
	}
	// registered at 1 ms, never heard: timed out 5 s later
	if lostAt != (5*vt.Second + vt.Millisecond).Micros() {
		t.Errorf("tm-1 lost at %d µs, want at 5.001 s", lostAt)
	}
	started := false
	for _, e := range r.sent {
		if e.To == "tm-3" && e.GetStart() != nil && e.DeliverAt == lostAt {
			started = true
		}
	}
	if !started {
		t.Error("the replacement was not started when it was spawned")
	}
	if _, ok := r.rm.slots["tm-1"]; ok || len(r.rm.tms) != 1 {
		t.Errorf("tm-1's slots are still counted: %v", r.rm.tms)
	}
	// the replacement dies before it registers: tm-4 replaces it
	r.send(9*vt.Second, "tm-3", &messages.Envelope_WorkerTerminated{WorkerTerminated: &messages.WorkerTerminated{TaskManagerId: "tm-3"}})
	if want := []string{"tm-3 TaskExecutor", "tm-4 TaskExecutor"}; strings.Join(r.spawns, ",") != strings.Join(want, ",") {
		t.Fatalf("spawned %v, want %v", r.spawns, want)
	}
	// tm-2 registered: its termination is the heartbeat's to notice
	r.send(9*vt.Second+vt.Millisecond, "tm-2", &messages.Envelope_WorkerTerminated{WorkerTerminated: &messages.WorkerTerminated{TaskManagerId: "tm-2"}})
	if len(r.spawns) != 2 {
		t.Errorf("a registered worker's termination started %v", r.spawns[2:])
	}
}

// A TaskManager that registers again (a reconnect) is counted once and
// comes back with all its slots free; every heartbeat interval each
// registered TaskManager gets a HeartbeatRequest, in name order, and one
// that answers is not lost; the final event counts what is left.
func TestReRegistrationHeartbeatsAndFinalCounters(t *testing.T) {
	cfg := config.Default()
	r := newRMRun(t, cfg)
	r.send(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	r.send(vt.Millisecond, "tm-2", register("tm-2", 2))
	r.send(2*vt.Millisecond, "tm-1", register("tm-1", 2))
	r.send(3*vt.Millisecond, jobgraph.JobManagerName, &messages.Envelope_DeclareResourceRequirements{
		DeclareResourceRequirements: &messages.DeclareResourceRequirements{JobId: jobgraph.JobID, NumSlots: 3}})
	if got := r.rm.free(); got != 1 {
		t.Fatalf("free slots %d after a requirement of 3 out of 4, want 1", got)
	}
	r.send(4*vt.Millisecond, "tm-1", register("tm-1", 2))
	if len(r.rm.tms) != 2 || r.rm.free() != 3 {
		t.Fatalf("after tm-1 registered again: task managers %v, free slots %d; want 2 and 3", r.rm.tms, r.rm.free())
	}
	var regs []int64
	for _, ev := range r.events {
		if p, ok := ev.Body.(eventlog.TaskExecutorRegistered); ok {
			regs = append(regs, p.RegisteredTaskManagers)
		}
	}
	if !slices.Equal(regs, []int64{1, 2, 2}) {
		t.Errorf("registered_task_managers %v, want [1 2 2]", regs)
	}
	// the first heartbeat round, one interval after the start; both answer
	interval := vt.FromDuration(cfg.HeartbeatInterval)
	r.runTimers(interval + vt.Millisecond)
	var asked []string
	for _, e := range r.sent {
		if e.GetHeartbeatRequest() != nil {
			asked = append(asked, e.To)
		}
	}
	if !slices.Equal(asked, []string{"tm-1", "tm-2"}) {
		t.Fatalf("heartbeat requests to %v at the first interval, want [tm-1 tm-2]", asked)
	}
	for _, tm := range []string{"tm-1", "tm-2"} {
		r.send(interval+2*vt.Millisecond, tm, &messages.Envelope_HeartbeatResponse{HeartbeatResponse: &messages.HeartbeatResponse{TaskManagerId: tm}})
	}
	r.runTimers(vt.FromDuration(cfg.HeartbeatTimeout) + interval)
	for _, ev := range r.events {
		if ev.Kind() == eventlog.KindTaskManagerLost {
			t.Fatalf("a TaskManager that answered was lost: %v", ev)
		}
	}
	r.send(vt.FromDuration(cfg.HeartbeatTimeout)+interval, kernel.SchedulerName, &messages.Envelope_EndOfRun{EndOfRun: &messages.EndOfRun{}})
	last := r.events[len(r.events)-1]
	got := map[string]int64{}
	if p, ok := last.Body.(eventlog.FinalCounters); ok {
		for _, v := range p.List {
			got[v.Key] = v.Int
		}
	}
	if last.Kind() != eventlog.KindFinal || got["registered_task_managers"] != 2 || got["free_slots_left"] != 3 {
		t.Errorf("final event %s %v, want final with 2 task managers and 3 free slots", last.Kind(), got)
	}
}
