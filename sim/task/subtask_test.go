package task

import (
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// states lists the execution states the subtask reported to its
// TaskExecutor, in order.
func (h *harness) states() []string {
	var out []string
	for _, e := range h.sent {
		if st, ok := e.Body.(*messages.Envelope_TaskExecutionState); ok {
			out = append(out, status.Execution(st.TaskExecutionState.State).String())
		}
	}
	return out
}

// harness drives one window subtask (window-0 of 2, with the chained sink,
// two input channels from source-0 and source-1) by hand, as the scheduler
// would, and keeps what it sends.
type harness struct {
	t    *testing.T
	s    *StreamTask
	o    *kernel.Out
	sent []*messages.Envelope
	logs []kernel.Event
}

// newDeployedHarness makes the subtask as the TaskExecutor spawns it, not
// started yet (DEPLOYING).
func newDeployedHarness(t *testing.T, kv ...string) *harness {
	cfg := config.Default()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := cfg.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Operator, cfg.CostWindow, cfg.CostSink, cfg.TaskInitTime = "window", time.Millisecond, 0, 0
	d := &messages.SubmitTask{ExecutionId: "window-0", JobVertex: jobgraph.VertexKeyed, TaskName: "Window -> Sink", Parallelism: 2,
		MaxParallelism: 128, Chain: []string{"Window", "Sink: out"}, KeyGroupStart: 0, KeyGroupEnd: 63, Checkpointing: true,
		InputGate: &messages.InputGateDeployment{Producers: []string{"source-0", "source-1"}, ProducerLocations: []string{"tm-1", "tm-2"}}}
	return &harness{t: t, s: NewSubtask(&cfg, d, "tm-1"), o: kernel.NewOut("window-0", 1, nil)}
}

// newHarness is newDeployedHarness with the task started and RUNNING.
func newHarness(t *testing.T, kv ...string) *harness {
	h := newDeployedHarness(t, kv...)
	h.at(0, &messages.Envelope_Start{Start: &messages.Start{}})
	// INITIALIZING ends with the timer sim.task.init-time later (here at
	// once): only then does the task take its mail
	h.at(0, &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerInitialized}})
	return h
}

// at delivers body to the subtask at virtual time now (µs).
func (h *harness) at(now vt.Time, body messages.Body) {
	h.t.Helper()
	d := kernel.Deliver(h.s, h.o, 1, now, []*messages.Envelope{{DeliverAt: now.Micros(), To: "window-0", From: "test", Body: body}})
	if d.Failure != "" {
		h.t.Fatalf("at %d: %s", now, d.Failure)
	}
	h.sent = append(h.sent, d.Out...)
	h.logs = append(h.logs, d.Events...)
}

func records(n int) *messages.Buffer {
	b := &messages.Buffer{SizeBytes: int32(100 * n)}
	for i := 0; i < n; i++ {
		b.Kinds = append(b.Kinds, byte(exchange.KindRecord))
		b.Keys = append(b.Keys, "k")
		b.Timestamps = append(b.Timestamps, 1000)
		b.Values = append(b.Values, 1)
	}
	return b
}

func barrier(id int64, unaligned bool) *messages.Buffer {
	return exchange.BarrierBuffer(&messages.Buffer{CheckpointId: id, CheckpointTimestampMs: 10, Unaligned: unaligned})
}

func chBuf(ci int, b *messages.Buffer) messages.Body {
	return &messages.Envelope_ChannelBuffer{ChannelBuffer: &messages.ChannelBuffer{ChannelIndex: int32(ci), Buffer: b}}
}

func (h *harness) acks() []*messages.AcknowledgeCheckpoint {
	var out []*messages.AcknowledgeCheckpoint
	for _, e := range h.sent {
		if a, ok := e.Body.(*messages.Envelope_AcknowledgeCheckpoint); ok {
			out = append(out, a.AcknowledgeCheckpoint)
		}
	}
	return out
}

func (h *harness) sentTo(to string, match func(messages.Body) bool) int {
	n := 0
	for _, e := range h.sent {
		if e.To == to && match(e.Body) {
			n++
		}
	}
	return n
}

// Aligned checkpoint 1 by hand (SingleCheckpointBarrierHandler): channel
// 0's barrier arrives at 10 ms and blocks channel 0; channel 1's data is
// processed meanwhile (3 records at 1 ms each); its barrier at 25 ms ends
// the alignment (15 ms), the snapshot is taken and acknowledged to the
// CheckpointCoordinator, and channel 0's producer is told to resume.
func TestSubtaskAlignedCheckpoint(t *testing.T) {
	h := newHarness(t)
	h.at(10_000, chBuf(0, barrier(1, false)))
	h.at(11_000, chBuf(0, records(2)))
	h.at(12_000, chBuf(1, records(3)))
	if !h.s.input.barriers.blocked[0] || h.s.input.barriers.blocked[1] {
		t.Fatalf("blocked %v, want channel 0 only", h.s.input.barriers.blocked)
	}
	if h.s.m.recordsIn != 3 {
		t.Fatalf("%d records in while aligning, want channel 1's 3 (channel 0's 2 wait)", h.s.m.recordsIn)
	}
	h.at(25_000, chBuf(1, barrier(1, false)))
	acks := h.acks()
	if len(acks) != 1 || acks[0].CheckpointId != 1 || acks[0].AlignmentMs != 15 || acks[0].PersistedRecords != 0 {
		t.Fatalf("acks %v, want checkpoint 1 with 15 ms alignment and no channel state", acks)
	}
	if h.s.input.barriers.blocked[0] {
		t.Fatal("channel 0 still blocked after the alignment")
	}
	resumed := h.sentTo("window-0/ch-0", func(b messages.Body) bool { _, ok := b.(*messages.Envelope_ResumeConsumption); return ok })
	if resumed != 1 {
		t.Fatalf("%d ResumeConsumption to channel 0, want 1", resumed)
	}
	for _, e := range h.sent {
		if _, ok := e.Body.(*messages.Envelope_AcknowledgeCheckpoint); ok && e.To != jobgraph.CheckpointCoordinatorName {
			t.Fatalf("ack sent to %s", e.To)
		}
	}
}

// Unaligned checkpoint 2 by hand (FLIP-76): the task is busy with a slice
// (4 records, 4 ms) when a priority barrier arrives on channel 0 while 3
// more records wait in channel 1's queue: the barrier overtakes them, the
// snapshot is taken at once and those 3 records, and what channel 1 brings
// until its own barrier (2 more), are persisted as channel state.
func TestSubtaskUnalignedCheckpoint(t *testing.T) {
	h := newHarness(t, "execution.checkpointing.unaligned.enabled", "true")
	h.at(10_000, chBuf(1, records(4)))
	h.at(10_500, chBuf(1, records(3)))
	h.at(11_000, chBuf(0, barrier(2, true)))
	if acks := h.acks(); len(acks) != 0 {
		t.Fatalf("acknowledged before channel 1's barrier: %v", acks)
	}
	h.at(12_000, chBuf(1, records(2)))
	h.at(13_000, chBuf(1, barrier(2, true)))
	acks := h.acks()
	if len(acks) != 1 || acks[0].CheckpointId != 2 || acks[0].PersistedRecords != 5 {
		t.Fatalf("acks %v, want checkpoint 2 with 5 persisted in-flight records", acks)
	}
	if got := len(acks[0].State.InputChannelState); got != 5 {
		t.Fatalf("%d records of input channel state, want 5", got)
	}
}

// A task takes no mail while DEPLOYING and INITIALIZING (Task.doRun,
// StreamTask.restore): a buffer that arrives meanwhile is processed once
// the task is RUNNING, and a cancel during INITIALIZING ends the task
// there: the end of initialization then does nothing.
func TestSubtaskInitializing(t *testing.T) {
	h := newDeployedHarness(t)
	h.at(0, &messages.Envelope_Start{Start: &messages.Start{}})
	h.at(10, chBuf(0, records(3)))
	if h.s.m.recordsIn != 0 || len(h.states()) != 1 || h.states()[0] != "INITIALIZING" {
		t.Fatalf("while initializing: %d records in, states %v; want 0 and [INITIALIZING]", h.s.m.recordsIn, h.states())
	}
	h.at(100_000, &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerInitialized}})
	if got := h.states(); len(got) != 2 || got[1] != "RUNNING" {
		t.Fatalf("states %v, want INITIALIZING then RUNNING", got)
	}
	h.at(200_000, &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerContinue}})
	if h.s.m.recordsIn != 3 {
		t.Fatalf("%d records in after RUNNING, want the 3 that waited", h.s.m.recordsIn)
	}

	c := newDeployedHarness(t)
	c.at(0, &messages.Envelope_Start{Start: &messages.Start{}})
	c.at(50, &messages.Envelope_CancelTask{CancelTask: &messages.CancelTask{ExecutionId: "window-0"}})
	c.at(100_000, &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerInitialized}})
	if got := c.states(); len(got) != 2 || got[1] != "CANCELED" {
		t.Fatalf("states %v, want INITIALIZING then CANCELED and nothing after", got)
	}
}
