package taskexecutor

import (
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// tmHarness delivers envelopes to one TaskExecutor at virtual times of the
// test's choosing, as the scheduler would, and keeps the timers it sets.
type tmHarness struct {
	t      *testing.T
	te     *TaskExecutor
	o      *kernel.Out
	step   uint64
	timers []*messages.Envelope
}

func newTMHarness(t *testing.T) *tmHarness {
	cfg := config.Default() // heartbeat.interval 1 s, heartbeat.timeout 5 s
	return &tmHarness{t: t, te: New(&cfg), o: kernel.NewOut("tm-2", 1, nil)}
}

// deliver hands body from actor from to the TaskExecutor at ms and returns
// the kinds of the events it logged and the messages it sent to others
// (RegisterTaskExecutor>receiver, other>receiver for the rest), in order.
func (h *tmHarness) deliver(ms int64, from string, body messages.Body) []string {
	h.t.Helper()
	h.step++
	d := kernel.Deliver(h.te, h.o, h.step, vt.FromMillis(ms), []*messages.Envelope{{DeliverAt: int64(vt.FromMillis(ms)), To: "tm-2", From: from, Body: body}})
	if d.Failure != "" {
		h.t.Fatalf("delivery failed: %s", d.Failure)
	}
	var out []string
	for _, ev := range d.Events {
		out = append(out, string(ev.Kind()))
	}
	for _, e := range d.Out {
		if e.To == "tm-2" {
			h.timers = append(h.timers, e)
			continue
		}
		name := "other"
		if e.GetRegisterTaskExecutor() != nil {
			name = "RegisterTaskExecutor"
		}
		out = append(out, name+">"+e.To)
	}
	return out
}

// TestMonitorsFromRegistration: the ResourceManager's heartbeat monitor
// runs from the registration on, its timeout scheduled then (no cut needs
// to arm it). tm-2 registers at 12.004 s and is cut off from the
// JobManager's host at 13 s, before the ResourceManager's first heartbeat
// request reached it: it times the ResourceManager out at 17.004 s (12.004
// + heartbeat.timeout) and registers again. Before, it never
// heard a heartbeat, so its monitor never armed: it stayed registered in
// its own eyes for ever while the ResourceManager had dropped it, and its
// slots were lost to the cluster.
func TestMonitorsFromRegistration(t *testing.T) {
	h := newTMHarness(t)
	h.deliver(12_002, "tm-2", &messages.Envelope_Start{Start: &messages.Start{}})
	h.timers = nil
	h.deliver(12_004, jobgraph.ResourceManagerName, &messages.Envelope_RegistrationResponse{RegistrationResponse: &messages.RegistrationResponse{Success: true}})
	if len(h.timers) != 1 || h.timers[0].GetTimer().GetKind() != timerRMHeartbeatTimeout || h.timers[0].DeliverAt != int64(vt.FromMillis(17_004)) {
		t.Fatalf("at the registration the TaskExecutor set %v, want one %s timer at 17.004 s", h.timers, timerRMHeartbeatTimeout)
	}
	if got := h.deliver(13_001, "scheduler", &messages.Envelope_ConnectionLost{ConnectionLost: &messages.ConnectionLost{Peer: jobgraph.ResourceManagerName}}); len(got) != 0 {
		t.Fatalf("the connection loss of a registered TaskExecutor did %v, want nothing", got)
	}
	got := h.deliver(17_004, "tm-2", &messages.Envelope_Timer{Timer: h.timers[0].GetTimer()})
	want := []string{"heartbeat_timeout", "register_task_executor", "RegisterTaskExecutor>" + jobgraph.ResourceManagerName}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("at the timeout: %v, want %v", got, want)
	}
}

// TestStalledTaskManagerTimesOutItsJobManager: the JobManager's monitor
// runs from the slot offer on; heartbeat requests push its timeout on; a
// TaskManager that stalled past heartbeat.timeout wakes with its overdue
// timeout, finds no request since the last one and fails its tasks.
func TestStalledTaskManagerTimesOutItsJobManager(t *testing.T) {
	h := newTMHarness(t)
	h.deliver(0, "tm-2", &messages.Envelope_Start{Start: &messages.Start{}})
	h.timers = nil
	h.deliver(0, jobgraph.ResourceManagerName, &messages.Envelope_RequestSlot{RequestSlot: &messages.RequestSlot{
		JobManager: jobgraph.JobManagerName, AllocationId: "alloc-1", JobId: jobgraph.JobID}})
	h.deliver(1_000, jobgraph.JobManagerName, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
	h.deliver(2_000, jobgraph.JobManagerName, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
	var first *messages.Envelope
	for _, e := range h.timers {
		if e.GetTimer().GetKind() == timerJMHeartbeatTimeout {
			first = e
		}
	}
	if first == nil || first.DeliverAt != int64(vt.FromMillis(5_000)) {
		t.Fatalf("want the JobManager's timeout at 5 s (monitoring began at 0), got %v", h.timers)
	}
	// at 5 s it finds the request of 2 s: the next check is at 7 s
	h.timers = nil
	if got := h.deliver(5_000, "tm-2", &messages.Envelope_Timer{Timer: first.GetTimer()}); len(got) != 0 {
		t.Fatalf("a check that found a later heartbeat did %v", got)
	}
	if len(h.timers) != 1 || h.timers[0].DeliverAt != int64(vt.FromMillis(7_000)) {
		t.Fatalf("want the next check at 7 s, got %v", h.timers)
	}
	// the process stalls from 6 s to 20 s: the check of 7 s comes at 20 s
	next := h.timers[0]
	got := h.deliver(20_000, "tm-2", &messages.Envelope_Timer{Timer: next.GetTimer()})
	if len(got) == 0 || got[0] != "heartbeat_timeout" {
		t.Fatalf("the woken TaskManager did %v, want heartbeat_timeout first", got)
	}
}
