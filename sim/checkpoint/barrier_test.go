package checkpoint

import (
	"reflect"
	"testing"
)

// bstep is one input to a BarrierHandler: "b" barrier, "a" announcement, "eop" end of
// partition, "cancel" cancellation marker, "timer" timer check.
type bstep struct {
	op  string
	ch  int
	id  int64
	ts  int64 // barrier timestamp (checkpoint trigger time)
	now int64
	sp  bool // savepoint barrier
	ua  bool // barrier arrives unaligned (switched upstream)
	// want is the exact action expected (nil: not checked); blocked the blocked channels
	// after the step (always checked).
	want    *BarrierAction
	blocked []int
}

type bsummary struct {
	triggered  []int64
	unaligned  []bool
	aborted    []int64
	reasons    []FailureReason
	alignments []int64
}

func runSteps(t *testing.T, h *BarrierHandler, steps []bstep) bsummary {
	t.Helper()
	var sum bsummary
	for i, s := range steps {
		var a BarrierAction
		b := Barrier{ID: s.id, TimestampMs: s.ts, Savepoint: s.sp, Unaligned: s.ua}
		switch s.op {
		case "b":
			a = h.OnBarrier(s.ch, b, s.now)
		case "a":
			a = h.OnAnnouncement(s.ch, b, s.now)
		case "eop":
			a = h.OnEndOfPartition(s.ch, s.now)
		case "cancel":
			a = h.OnCancellation(s.id)
		case "timer":
			a = h.OnTimer(s.now)
		default:
			t.Fatalf("step %d: op %q", i, s.op)
		}
		if s.want != nil && !reflect.DeepEqual(a, *s.want) {
			t.Fatalf("step %d (%s ch=%d id=%d now=%d):\n got  %+v\n want %+v", i, s.op, s.ch, s.id, s.now, a, *s.want)
		}
		var blocked []int
		for ch := 0; ch < h.cfg.NumChannels; ch++ {
			if h.Blocked(ch) {
				blocked = append(blocked, ch)
			}
		}
		if !reflect.DeepEqual(blocked, s.blocked) {
			t.Fatalf("step %d (%s ch=%d id=%d): blocked %v, want %v (action %+v)", i, s.op, s.ch, s.id, blocked, s.blocked, a)
		}
		if a.Abort {
			sum.aborted = append(sum.aborted, a.AbortCheckpointID)
			sum.reasons = append(sum.reasons, a.FailureReason)
		}
		if a.TriggerSnapshot {
			sum.triggered = append(sum.triggered, a.CheckpointID)
			sum.unaligned = append(sum.unaligned, a.Unaligned)
		}
		if a.AllBarriersReceived {
			sum.alignments = append(sum.alignments, a.AlignmentDurationMs)
		}
	}
	return sum
}

func ba(a BarrierAction) *BarrierAction { return &a }

// AlignedCheckpointsTest.testMultiChannelJumpingOverCheckpoint (end of partition aborts:
// checkpoints after tasks finish disabled). Data buffers are left out: the handler never
// sees them. Step i happens at 10*i ms; every checkpoint was triggered at 0.
func TestAlignedJumpingOverCheckpoint(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3, DisableCheckpointsAfterTasksFinish: true})
	subsumed := ReasonCheckpointDeclinedSubsumed
	eos := ReasonCheckpointDeclinedInputEndOfStream
	steps := []bstep{
		{op: "b", ch: 1, id: 1, now: 10, blocked: []int{1},
			want: ba(BarrierAction{BlockChannels: []int{1}, CheckpointID: 1, AlignmentStarted: true, StartDelayMs: 10})},
		{op: "b", ch: 2, id: 1, now: 20, blocked: []int{1, 2},
			want: ba(BarrierAction{BlockChannels: []int{2}, CheckpointID: 1})},
		{op: "b", ch: 0, id: 1, now: 30, blocked: nil,
			want: ba(BarrierAction{UnblockAll: true, TriggerSnapshot: true, CheckpointID: 1, AllBarriersReceived: true, AlignmentDurationMs: 20})},
		{op: "b", ch: 1, id: 2, now: 40, blocked: []int{1},
			want: ba(BarrierAction{BlockChannels: []int{1}, CheckpointID: 2, AlignmentStarted: true, StartDelayMs: 40})},
		{op: "b", ch: 0, id: 2, now: 50, blocked: []int{0, 1}},
		// checkpoint 2 aborted, checkpoint 3 started
		{op: "b", ch: 2, id: 3, now: 60, blocked: []int{2},
			want: ba(BarrierAction{Abort: true, AbortCheckpointID: 2, Reason: subsumed.Message(), FailureReason: subsumed,
				UnblockAll: true, BlockChannels: []int{2}, CheckpointID: 3, AlignmentStarted: true, StartDelayMs: 60})},
		{op: "b", ch: 0, id: 3, now: 70, blocked: []int{0, 2}},
		// checkpoint 3 aborted, checkpoint 4 started
		{op: "b", ch: 1, id: 4, now: 80, blocked: []int{1}},
		// checkpoint 4 aborted (end of partition)
		{op: "eop", ch: 0, now: 90, blocked: nil,
			want: ba(BarrierAction{Abort: true, AbortCheckpointID: 4, Reason: eos.Message(), FailureReason: eos, UnblockAll: true, CheckpointID: 4})},
		{op: "eop", ch: 2, now: 100, want: ba(BarrierAction{Ignored: true, CheckpointID: 4})},
		{op: "eop", ch: 1, now: 110},
	}
	sum := runSteps(t, h, steps)
	if !reflect.DeepEqual(sum.triggered, []int64{1}) || !reflect.DeepEqual(sum.aborted, []int64{2, 3, 4}) {
		t.Fatalf("triggered %v aborted %v; Flink: 1 triggered, 3 aborted", sum.triggered, sum.aborted)
	}
	if h.CurrentCheckpoint() != 4 || h.NumOpenChannels() != 0 {
		t.Fatalf("current %d open %d", h.CurrentCheckpoint(), h.NumOpenChannels())
	}
}

// AlignedCheckpointsTest.testMultiChannelWithBarriers: four checkpoints align and trigger
// in order; nothing stays blocked.
func TestAlignedMultiChannelWithBarriers(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3})
	steps := []bstep{
		{op: "b", ch: 1, id: 1, blocked: []int{1}},
		{op: "b", ch: 2, id: 1, blocked: []int{1, 2}},
		{op: "b", ch: 0, id: 1},
		{op: "b", ch: 0, id: 2, blocked: []int{0}},
		{op: "b", ch: 1, id: 2, blocked: []int{0, 1}},
		{op: "b", ch: 2, id: 2},
		{op: "b", ch: 2, id: 3, blocked: []int{2}},
		{op: "b", ch: 0, id: 3, blocked: []int{0, 2}},
		{op: "b", ch: 1, id: 3},
		{op: "b", ch: 1, id: 4, blocked: []int{1}},
		{op: "b", ch: 2, id: 4, blocked: []int{1, 2}},
		{op: "b", ch: 0, id: 4},
		{op: "eop", ch: 0}, {op: "eop", ch: 1}, {op: "eop", ch: 2},
	}
	sum := runSteps(t, h, steps)
	if !reflect.DeepEqual(sum.triggered, []int64{1, 2, 3, 4}) || len(sum.aborted) != 0 {
		t.Fatalf("%+v", sum)
	}
}

// AlignedCheckpointsTest.testSingleChannelAbortCheckpoint.
func TestAlignedSingleChannelAbortCheckpoint(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 1})
	cancel := ReasonCheckpointDeclinedOnCancellationBarrier
	steps := []bstep{
		{op: "b", ch: 0, id: 1, now: 5, ts: 2,
			want: ba(BarrierAction{TriggerSnapshot: true, CheckpointID: 1, AlignmentStarted: true, StartDelayMs: 3, AllBarriersReceived: true})},
		{op: "b", ch: 0, id: 2},
		{op: "cancel", id: 4,
			want: ba(BarrierAction{Abort: true, AbortCheckpointID: 4, Reason: cancel.Message(), FailureReason: cancel, CheckpointID: 4})},
		{op: "b", ch: 0, id: 5},
		{op: "cancel", id: 6},
	}
	sum := runSteps(t, h, steps)
	if !reflect.DeepEqual(sum.triggered, []int64{1, 2, 5}) || !reflect.DeepEqual(sum.aborted, []int64{4, 6}) {
		t.Fatalf("%+v; Flink: 3 triggered, 2 aborted", sum)
	}
	if h.CurrentCheckpoint() != 6 {
		t.Fatalf("latest checkpoint id %d, want 6", h.CurrentCheckpoint())
	}
}

// AlignedCheckpointsTest.testMultiChannelAbortCheckpoint.
func TestAlignedMultiChannelAbortCheckpoint(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3})
	steps := []bstep{
		{op: "b", ch: 1, id: 1, blocked: []int{1}},
		{op: "b", ch: 2, id: 1, blocked: []int{1, 2}},
		{op: "b", ch: 0, id: 1},
		// aborted on last barrier
		{op: "b", ch: 0, id: 2, blocked: []int{0}},
		{op: "b", ch: 2, id: 2, blocked: []int{0, 2}},
		{op: "cancel", id: 2},
		// successful checkpoint
		{op: "b", ch: 1, id: 3, blocked: []int{1}},
		{op: "b", ch: 2, id: 3, blocked: []int{1, 2}},
		{op: "b", ch: 0, id: 3},
		// abort on first barrier: the later barriers of 4 are obsolete
		{op: "cancel", id: 4},
		{op: "b", ch: 2, id: 4, want: ba(BarrierAction{Ignored: true, CheckpointID: 4})},
		{op: "b", ch: 0, id: 4},
		// another successful checkpoint
		{op: "b", ch: 2, id: 5, blocked: []int{2}},
		{op: "b", ch: 1, id: 5, blocked: []int{1, 2}},
		{op: "b", ch: 0, id: 5},
		// multiple cancellations and a barrier after them
		{op: "cancel", id: 6},
		{op: "cancel", id: 6, want: ba(BarrierAction{Ignored: true})},
		{op: "b", ch: 0, id: 6},
	}
	sum := runSteps(t, h, steps)
	if !reflect.DeepEqual(sum.triggered, []int64{1, 3, 5}) || !reflect.DeepEqual(sum.aborted, []int64{2, 4, 6}) {
		t.Fatalf("%+v", sum)
	}
}

// AlignedCheckpointsTest.testMissingCancellationBarriers: a cancellation of a newer id
// releases the alignment of the older one; older and repeated cancellations are ignored.
func TestAlignedMissingCancellationBarriers(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 2})
	sum := runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 1, blocked: []int{0}},
		{op: "cancel", ch: 1, id: 3},
		{op: "cancel", ch: 0, id: 2, want: ba(BarrierAction{Ignored: true})},
		{op: "cancel", ch: 0, id: 3, want: ba(BarrierAction{Ignored: true})},
	})
	if !reflect.DeepEqual(sum.aborted, []int64{3}) || len(sum.triggered) != 0 {
		t.Fatalf("%+v", sum)
	}
}

// AlignedCheckpointsTest.testStartAlignmentWithClosedChannels: closed channels do not
// count; a checkpoint on the last open channel triggers at once.
func TestAlignedStartWithClosedChannels(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 4})
	sum := runSteps(t, h, []bstep{
		{op: "eop", ch: 2}, {op: "eop", ch: 1},
		{op: "b", ch: 3, id: 2, blocked: []int{3}},
		{op: "b", ch: 0, id: 2},
		{op: "b", ch: 0, id: 3, blocked: []int{0}},
		{op: "b", ch: 3, id: 3},
		{op: "eop", ch: 0},
		{op: "b", ch: 3, id: 4},
		{op: "eop", ch: 3},
	})
	if !reflect.DeepEqual(sum.triggered, []int64{2, 3, 4}) || !reflect.DeepEqual(sum.alignments, []int64{0, 0, 0}) {
		t.Fatalf("%+v", sum)
	}
}

// AlignedCheckpointsTest.testEndOfStreamWhileCheckpoint with checkpoints after tasks finish
// enabled (Flink 1.20's default): the ended channel counts as aligned, so checkpoint 2
// completes on it and nothing stays blocked.
func TestAlignedEndOfStreamWhileCheckpoint(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3})
	sum := runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 1, blocked: []int{0}},
		{op: "b", ch: 1, id: 1, blocked: []int{0, 1}},
		{op: "b", ch: 2, id: 1},
		{op: "b", ch: 2, id: 2, now: 10, blocked: []int{2}},
		{op: "b", ch: 0, id: 2, now: 20, blocked: []int{0, 2}},
		{op: "eop", ch: 1, now: 35,
			want: ba(BarrierAction{UnblockAll: true, TriggerSnapshot: true, CheckpointID: 2, AllBarriersReceived: true, AlignmentDurationMs: 25})},
		{op: "eop", ch: 2, now: 40},
		{op: "eop", ch: 0, now: 50},
	})
	if !reflect.DeepEqual(sum.triggered, []int64{1, 2}) || len(sum.aborted) != 0 {
		t.Fatalf("%+v", sum)
	}
}

// AlignedCheckpointsTest.testMetrics: start delay is first barrier - checkpoint timestamp,
// alignment duration last barrier - first barrier.
func TestAlignmentMetrics(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3})
	runSteps(t, h, []bstep{
		{op: "b", ch: 1, id: 1, ts: 100, now: 110, blocked: []int{1},
			want: ba(BarrierAction{BlockChannels: []int{1}, CheckpointID: 1, AlignmentStarted: true, StartDelayMs: 10})},
		{op: "b", ch: 0, id: 1, ts: 100, now: 115, blocked: []int{0, 1}},
		{op: "b", ch: 2, id: 1, ts: 100, now: 130,
			want: ba(BarrierAction{UnblockAll: true, TriggerSnapshot: true, CheckpointID: 1, AllBarriersReceived: true, AlignmentDurationMs: 20})},
	})
}

// Unaligned checkpoints (UnalignedCheckpointsTest): the first barrier triggers at once,
// nothing is blocked, the other channels persist their in-flight data until their barrier.
func TestUnalignedCheckpoint(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3, Unaligned: true})
	runSteps(t, h, []bstep{
		{op: "b", ch: 1, id: 1, ts: 0, now: 4,
			want: ba(BarrierAction{TriggerSnapshot: true, CheckpointID: 1, Unaligned: true, PersistChannels: []int{0, 1, 2}, AlignmentStarted: true, StartDelayMs: 4})},
	})
	if h.Persisting(1) || !h.Persisting(0) || !h.Persisting(2) || h.Blocked(1) {
		t.Fatal("after the first barrier channels 0 and 2 persist, nothing blocks")
	}
	runSteps(t, h, []bstep{
		{op: "b", ch: 2, id: 1, now: 9, want: ba(BarrierAction{CheckpointID: 1})},
		{op: "b", ch: 0, id: 1, now: 12, want: ba(BarrierAction{CheckpointID: 1, AllBarriersReceived: true, AlignmentDurationMs: 8})},
	})
	if h.Persisting(0) || h.Persisting(2) {
		t.Fatal("persisting ends with the barriers")
	}
	// a newer barrier aborts the unaligned checkpoint in progress
	sub := ReasonCheckpointDeclinedSubsumed
	runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 2, now: 20},
		{op: "b", ch: 1, id: 3, now: 30,
			want: ba(BarrierAction{Abort: true, AbortCheckpointID: 2, Reason: sub.Message(), FailureReason: sub,
				TriggerSnapshot: true, CheckpointID: 3, Unaligned: true, PersistChannels: []int{0, 1, 2}, AlignmentStarted: true, StartDelayMs: 30})},
		{op: "eop", ch: 0, now: 31, want: ba(BarrierAction{CheckpointID: 3})},
		{op: "b", ch: 2, id: 3, now: 35, want: ba(BarrierAction{CheckpointID: 3, AllBarriersReceived: true, AlignmentDurationMs: 5})},
	})
	// savepoints stay aligned under the unaligned configuration
	runSteps(t, h, []bstep{
		{op: "b", ch: 1, id: 4, sp: true, now: 40, blocked: []int{1}},
		{op: "b", ch: 2, id: 4, sp: true, now: 50,
			want: ba(BarrierAction{UnblockAll: true, TriggerSnapshot: true, CheckpointID: 4, AllBarriersReceived: true, AlignmentDurationMs: 10})},
	})
}

// AlternatingCheckpointsTest.testTimeoutAlignmentBeforeFirstBarrier: the timeout passed
// before the first barrier arrived, so it starts unaligned.
func TestAlternatingTimeoutBeforeFirstBarrier(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 2, Unaligned: true, AlignedTimeoutMs: 100})
	runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 1, ts: 0, now: 101, blocked: []int{0},
			want: ba(BarrierAction{BlockChannels: []int{0}, TriggerSnapshot: true, CheckpointID: 1, Unaligned: true, SwitchedToUnaligned: true,
				PersistChannels: []int{1}, AlignmentStarted: true, StartDelayMs: 101})},
		{op: "b", ch: 1, id: 1, ts: 0, now: 120, blocked: nil,
			want: ba(BarrierAction{UnblockAll: true, CheckpointID: 1, AllBarriersReceived: true, AlignmentDurationMs: 19})},
	})
}

// AlternatingCheckpointsTest.testTimeoutAlignment: both channels announced their barriers
// behind data; the timer fires, the barriers are prioritized and the checkpoint is taken
// unaligned, the overtaken data persisted.
func TestAlternatingTimeoutByTimer(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 2, Unaligned: true, AlignedTimeoutMs: 10})
	runSteps(t, h, []bstep{
		{op: "a", ch: 0, id: 1, ts: 0, now: 0, want: ba(BarrierAction{CheckpointID: 1})},
		{op: "a", ch: 1, id: 1, ts: 0, now: 0},
	})
	if at, ok := h.NextTimer(); !ok || at != 10 {
		t.Fatalf("NextTimer = %d %v", at, ok)
	}
	runSteps(t, h, []bstep{
		{op: "timer", now: 9, want: ba(BarrierAction{Ignored: true})},
		{op: "timer", now: 20, want: ba(BarrierAction{PrioritizeChannels: []int{0, 1}, CheckpointID: 1, SwitchedToUnaligned: true})},
		{op: "b", ch: 0, id: 1, ts: 0, now: 20, blocked: []int{0},
			want: ba(BarrierAction{BlockChannels: []int{0}, TriggerSnapshot: true, CheckpointID: 1, Unaligned: true,
				PersistChannels: []int{0, 1}, AlignmentStarted: true, StartDelayMs: 20})},
		{op: "b", ch: 1, id: 1, ts: 0, now: 20,
			want: ba(BarrierAction{UnblockAll: true, CheckpointID: 1, AllBarriersReceived: true})},
	})
	if _, ok := h.NextTimer(); ok {
		t.Fatal("timer must be gone")
	}
}

// The aligned phase times out while collecting: the snapshot is taken unaligned at the
// timer, the channels whose barrier is still to come persist, the blocked one stays blocked
// until the end.
func TestAlternatingTimeoutWhileCollecting(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3, Unaligned: true, AlignedTimeoutMs: 50})
	runSteps(t, h, []bstep{
		{op: "b", ch: 1, id: 7, ts: 100, now: 110, blocked: []int{1}},
		{op: "a", ch: 2, id: 7, ts: 100, now: 120, blocked: []int{1}},
	})
	if at, _ := h.NextTimer(); at != 150 {
		t.Fatalf("timer at %d, want checkpoint timestamp 100 + timeout 50", at)
	}
	runSteps(t, h, []bstep{
		{op: "timer", now: 150, blocked: []int{1},
			want: ba(BarrierAction{PrioritizeChannels: []int{2}, TriggerSnapshot: true, CheckpointID: 7, Unaligned: true, SwitchedToUnaligned: true, PersistChannels: []int{0, 2}})},
		{op: "a", ch: 0, id: 7, ts: 100, now: 155, blocked: []int{1},
			want: ba(BarrierAction{PrioritizeChannels: []int{0}, CheckpointID: 7})},
		{op: "b", ch: 2, id: 7, ts: 100, now: 160, blocked: []int{1, 2}, want: ba(BarrierAction{BlockChannels: []int{2}, CheckpointID: 7})},
		{op: "b", ch: 0, id: 7, ts: 100, now: 170, blocked: nil,
			want: ba(BarrierAction{UnblockAll: true, CheckpointID: 7, AllBarriersReceived: true, AlignmentDurationMs: 60})},
	})
}

// AlternatingCheckpointsTest.testAlignedAfterTimedOut (one channel): the first checkpoint
// times out before its barrier is processed and is taken unaligned, the next one aligned.
func TestAlternatingAlignedAfterTimedOut(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 1, Unaligned: true, AlignedTimeoutMs: 100})
	sum := runSteps(t, h, []bstep{
		{op: "a", ch: 0, id: 1, ts: 0, now: 0},
		{op: "timer", now: 101},
		{op: "b", ch: 0, id: 1, ts: 0, now: 101},
		{op: "b", ch: 0, id: 2, ts: 101, now: 101},
	})
	if !reflect.DeepEqual(sum.triggered, []int64{1, 2}) || !reflect.DeepEqual(sum.unaligned, []bool{true, false}) {
		t.Fatalf("%+v", sum)
	}
}

// AlternatingCheckpointsTest.testAlignedNeverTimeoutableCheckpoint and
// testTimeoutAlignmentWhenLocalBarrierFirst.
func TestAlternatingNoTimeoutAndLateSecondBarrier(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 2, Unaligned: true, AlignedTimeoutMs: 1 << 31})
	sum := runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 1, now: 0, blocked: []int{0}},
		{op: "b", ch: 1, id: 1, now: 1000},
	})
	if !reflect.DeepEqual(sum.unaligned, []bool{false}) {
		t.Fatalf("%+v", sum)
	}

	h = NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3, Unaligned: true, AlignedTimeoutMs: 100})
	sum = runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 1, ts: 0, now: 0, blocked: []int{0}},
		{op: "a", ch: 1, id: 1, ts: 0, now: 0, blocked: []int{0}},
		{op: "a", ch: 2, id: 1, ts: 0, now: 0, blocked: []int{0}},
		{op: "b", ch: 1, id: 1, ts: 0, now: 0, blocked: []int{0, 1}},
		{op: "b", ch: 2, id: 1, ts: 0, now: 0},
		// checkpoint 2 triggered at 101, its first barrier (local, no announcement) at once
		{op: "b", ch: 0, id: 2, ts: 101, now: 101, blocked: []int{0}},
		// the timer (101 + 100) has passed when the second channel delivers
		{op: "timer", now: 202, blocked: []int{0}},
		{op: "a", ch: 1, id: 2, ts: 101, now: 202, blocked: []int{0}},
		{op: "b", ch: 1, id: 2, ts: 101, now: 202, blocked: []int{0, 1}},
	})
	if !reflect.DeepEqual(sum.triggered, []int64{1, 2}) || !reflect.DeepEqual(sum.unaligned, []bool{false, true}) {
		t.Fatalf("%+v", sum)
	}
}

// AlternatingCheckpointsTest.testSwitchToUnalignedByUpstream: an announcement on one channel,
// then the same checkpoint's barrier arrives unaligned on another: it triggers at once.
func TestAlternatingSwitchToUnalignedByUpstream(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 2, Unaligned: true, AlignedTimeoutMs: 1 << 31})
	runSteps(t, h, []bstep{
		{op: "a", ch: 0, id: 1, want: ba(BarrierAction{CheckpointID: 1})},
		{op: "b", ch: 1, id: 1, ua: true,
			want: ba(BarrierAction{PrioritizeChannels: []int{0}, TriggerSnapshot: true, CheckpointID: 1, Unaligned: true, SwitchedToUnaligned: true,
				PersistChannels: []int{0, 1}, AlignmentStarted: true})},
	})
}

// An EndOfPartition during an aligned alternating checkpoint that already timed out
// switches it to unaligned (AlternatingCollectingBarriers.endOfPartitionReceived).
func TestAlternatingEndOfPartitionAfterTimeout(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: 3, Unaligned: true, AlignedTimeoutMs: 10})
	runSteps(t, h, []bstep{
		{op: "b", ch: 0, id: 1, ts: 0, now: 5, blocked: []int{0}},
		{op: "eop", ch: 1, now: 20, blocked: []int{0},
			want: ba(BarrierAction{TriggerSnapshot: true, CheckpointID: 1, Unaligned: true, SwitchedToUnaligned: true, PersistChannels: []int{2}})},
		{op: "b", ch: 2, id: 1, ts: 0, now: 30, blocked: nil},
	})
}

func TestBarrierHandlerBadInput(t *testing.T) {
	h := NewBarrierHandler(BarrierHandlerConfig{NumChannels: -3, AlignedTimeoutMs: -1})
	if h.NumOpenChannels() != 0 || h.CurrentCheckpoint() != -1 || h.CheckpointPending() {
		t.Fatal("clamped handler")
	}
	h = NewBarrierHandler(BarrierHandlerConfig{NumChannels: 2})
	for _, a := range []BarrierAction{
		h.OnBarrier(-1, Barrier{ID: 1}, 0),
		h.OnBarrier(2, Barrier{ID: 1}, 0),
		h.OnEndOfPartition(5, 0),
		h.OnAnnouncement(0, Barrier{ID: 1}, 0), // aligned config: no announcements
		h.OnTimer(100),
	} {
		if !a.Ignored {
			t.Fatalf("%+v", a)
		}
	}
	if h.Blocked(-1) || h.Persisting(9) {
		t.Fatal("out of range")
	}
	h.OnEndOfPartition(0, 0)
	if a := h.OnEndOfPartition(0, 0); !a.Ignored {
		t.Fatal("second end of partition")
	}
	if a := h.OnBarrier(0, Barrier{ID: 1}, 0); !a.Ignored {
		t.Fatal("barrier on a finished channel")
	}
}
