package checkpoint

import (
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// coordDriver feeds a Coordinator random inputs the way the simulator must: time never goes
// back, CheckTimeouts runs before anything else at a time, periodic triggers fire when due.
type coordDriver struct {
	t       *rapid.T
	c       *Coordinator
	now     int64
	started []int64 // checkpoint ids in the order they started
	mark    int     // len(started) before the current step
	forced  map[int64]bool
}

func (d *coordDriver) absorb(r TriggerResult) {
	if r.CheckpointID > 0 {
		d.started = append(d.started, r.CheckpointID)
		if r.Savepoint && !d.c.Config().Unaligned {
			d.forced[r.CheckpointID] = true
		}
	}
}

// drain takes Ready and puts the ids started during the last call in start order: a call's
// own request and the queued ones it started share a trigger time, their ids say the order.
func (d *coordDriver) drain() {
	for _, r := range d.c.TakeReady().Triggered {
		d.absorb(r)
	}
	step := d.started[d.mark:]
	sort.Slice(step, func(i, j int) bool { return step[i] < step[j] })
}

func (d *coordDriver) check() {
	// ids strictly increase, from 1, without gaps
	for i, id := range d.started {
		if id != int64(i+1) {
			d.t.Fatalf("started ids %v", d.started)
		}
	}
	// at most MaxConcurrent pending checkpoints besides forced savepoints
	n := 0
	for _, id := range d.c.Pending() {
		if !d.forced[id] {
			n++
		}
	}
	if n > d.c.Config().MaxConcurrent {
		d.t.Fatalf("%d non-forced pending > max %d (pending %v)", n, d.c.Config().MaxConcurrent, d.c.Pending())
	}
	// history agrees with the pending set
	pending := map[int64]bool{}
	for _, id := range d.c.Pending() {
		pending[id] = true
	}
	h := d.c.History()
	if len(h) != len(d.started) {
		d.t.Fatalf("history %d rows, %d started", len(h), len(d.started))
	}
	for i, s := range h {
		if s.ID != int64(i+1) || (s.Status == StatusInProgress) != pending[s.ID] {
			d.t.Fatalf("history row %+v, pending %v", s, d.c.Pending())
		}
	}
}

func TestPropertyCoordinatorInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		interval := rapid.Int64Range(10, 200).Draw(rt, "interval")
		cfg := CoordinatorConfig{
			IntervalMs:        interval,
			TimeoutMs:         rapid.Int64Range(10, 400).Draw(rt, "timeout"),
			MinPauseMs:        rapid.Int64Range(0, 100).Draw(rt, "minPause"),
			MaxConcurrent:     rapid.IntRange(1, 3).Draw(rt, "maxConcurrent"),
			TolerableFailures: rapid.IntRange(0, 3).Draw(rt, "tolerable"),
			Unaligned:         rapid.Bool().Draw(rt, "unaligned"),
		}
		tasks := []string{"a", "b", "c"}[:rapid.IntRange(1, 3).Draw(rt, "tasks")]
		c, err := NewCoordinator(cfg, tasks)
		if err != nil {
			rt.Fatal(err)
		}
		d := &coordDriver{t: rt, c: c, forced: map[int64]bool{}}
		lo, hi, _ := cfg.InitialDelayRange()
		if err := c.StartScheduler(0, rapid.Int64Range(lo, hi).Draw(rt, "initialDelay")); err != nil {
			rt.Fatal(err)
		}
		steps := rapid.IntRange(1, 120).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			d.mark = len(d.started)
			d.now += rapid.Int64Range(0, 60).Draw(rt, "gap")
			// timers first: the checkpoint canceller, then the periodic trigger
			c.CheckTimeouts(d.now)
			d.drain()
			if at, ok := c.NextPeriodicTrigger(d.now); ok && at <= d.now {
				d.absorb(c.Trigger(d.now, KindPeriodic))
				d.drain()
			}
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0:
				d.absorb(c.Trigger(d.now, KindManual))
			case 1:
				d.absorb(c.Trigger(d.now, rapid.SampledFrom([]Kind{KindSavepoint, KindStopWithSavepoint}).Draw(rt, "sp")))
			case 2:
				if p := c.Pending(); len(p) > 0 {
					c.Decline(rapid.SampledFrom(p).Draw(rt, "declineID"), tasks[0], ReasonCheckpointDeclined, d.now)
				}
			case 3:
				c.SetTasksRunning(rapid.Bool().Draw(rt, "running"))
			default:
				if p := c.Pending(); len(p) > 0 {
					id := rapid.SampledFrom(p).Draw(rt, "ackID")
					task := rapid.SampledFrom(tasks).Draw(rt, "ackTask")
					c.Acknowledge(id, task, TaskAck{StateSizeBytes: 1}, d.now)
				}
			}
			d.drain()
			d.check()
		}
	})
}

// A checkpoint completes iff every task acknowledged it before its timeout (and, with
// several in flight, no newer checkpoint completed first and subsumed it). The oracle is a
// naive replay of those rules over the same timed events.
func TestPropertyCompletesIffAllAckedBeforeTimeout(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		timeout := rapid.Int64Range(10, 100).Draw(rt, "timeout")
		tasks := []string{"t0", "t1", "t2", "t3"}[:rapid.IntRange(1, 4).Draw(rt, "tasks")]
		c, err := NewCoordinator(CoordinatorConfig{TimeoutMs: timeout, MaxConcurrent: 1000}, tasks)
		if err != nil {
			rt.Fatal(err)
		}
		type event struct {
			at      int64
			trigger bool
			kind    Kind
			id      int64 // ack: checkpoint id
			task    string
		}
		// n checkpoints triggered at increasing times, each task acks each at a random time
		n := rapid.IntRange(1, 6).Draw(rt, "checkpoints")
		var events []event
		var trig []int64
		kinds := make([]Kind, n+1)
		at := int64(0)
		for id := 1; id <= n; id++ {
			at += rapid.Int64Range(1, 2*timeout).Draw(rt, "triggerGap")
			trig = append(trig, at)
			kinds[id] = rapid.SampledFrom([]Kind{KindManual, KindManual, KindSavepoint, KindStopWithSavepoint}).Draw(rt, "kind")
			events = append(events, event{at: at, trigger: true, kind: kinds[id]})
			for _, task := range tasks {
				if rapid.IntRange(0, 9).Draw(rt, "lost") == 0 {
					continue // this ack never comes
				}
				events = append(events, event{at: at + rapid.Int64Range(1, 2*timeout).Draw(rt, "ackDelay"), id: int64(id), task: task})
			}
		}
		sort.SliceStable(events, func(i, j int) bool {
			if events[i].at != events[j].at {
				return events[i].at < events[j].at
			}
			return events[i].trigger && !events[j].trigger
		})
		// oracle state
		status := make([]Status, n+1)
		reason := make([]FailureReason, n+1)
		acked := make([]map[string]bool, n+1)
		nextID := int64(1)
		expire := func(now int64) {
			for id := 1; id <= n; id++ {
				if status[id] == StatusInProgress && trig[id-1]+timeout <= now {
					status[id], reason[id] = StatusFailed, ReasonCheckpointExpired
				}
			}
		}
		for _, e := range events {
			c.CheckTimeouts(e.at)
			expire(e.at)
			if e.trigger {
				r := c.Trigger(e.at, e.kind)
				if r.CheckpointID != nextID {
					rt.Fatalf("trigger %+v, want id %d", r, nextID)
				}
				status[nextID] = StatusInProgress
				acked[nextID] = map[string]bool{}
				nextID++
				continue
			}
			cc, _ := c.Acknowledge(e.id, e.task, TaskAck{}, e.at)
			if status[e.id] != StatusInProgress {
				if cc != nil {
					rt.Fatalf("checkpoint %d completed while the oracle has it %v", e.id, status[e.id])
				}
				continue
			}
			acked[e.id][e.task] = true
			if len(acked[e.id]) == len(tasks) {
				status[e.id] = StatusCompleted
				if kinds[e.id] != KindSavepoint {
					for old := int64(1); old < e.id; old++ {
						if status[old] == StatusInProgress && !kinds[old].IsSavepoint() {
							status[old], reason[old] = StatusFailed, ReasonCheckpointSubsumed
						}
					}
				}
			}
			if (cc != nil) != (status[e.id] == StatusCompleted) {
				rt.Fatalf("ack of %d by %s at %d: completed=%v, oracle %v", e.id, e.task, e.at, cc != nil, status[e.id])
			}
		}
		final := trig[n-1] + 3*timeout
		c.CheckTimeouts(final)
		expire(final)
		for _, s := range c.History() {
			if s.Status != status[s.ID] || (s.Status == StatusFailed && s.FailureReason != reason[s.ID]) {
				rt.Fatalf("checkpoint %d: %v %v, oracle %v %v", s.ID, s.Status, s.FailureReason, status[s.ID], reason[s.ID])
			}
		}
	})
}

// gateSim is a naive input gate: one FIFO queue per channel of barrier ids (0 = end of
// partition); a blocked channel delivers nothing.
type gateSim struct {
	queues [][]int64
}

func drawGate(rt *rapid.T, channels, checkpoints int, allowMissing bool) *gateSim {
	g := &gateSim{queues: make([][]int64, channels)}
	for ch := range g.queues {
		for id := 1; id <= checkpoints; id++ {
			if allowMissing && rapid.IntRange(0, 7).Draw(rt, fmt.Sprintf("miss%d_%d", ch, id)) == 0 {
				continue
			}
			g.queues[ch] = append(g.queues[ch], int64(id))
		}
		if rapid.Bool().Draw(rt, fmt.Sprintf("eop%d", ch)) {
			g.queues[ch] = append(g.queues[ch], 0)
		}
	}
	return g
}

// handlerRun drives a handler from a gateSim in a random order and checks the invariants
// every mode shares; it returns the triggered ids in order and whether each was unaligned.
// A gate may stall only when barriers are missing: an alignment then waits for a barrier
// that never comes, as in Flink (until a newer barrier subsumes it).
func handlerRun(rt *rapid.T, cfg BarrierHandlerConfig, g *gateSim, cancels, missing bool) (trig []int64, unaligned []bool) {
	h := NewBarrierHandler(cfg)
	n := cfg.NumChannels
	mirror := make([]bool, n) // blocked channels as told by the actions
	ended := make([]bool, n)
	delivered := map[int64]map[int]bool{}
	triggered := map[int64]bool{}
	firstSeen := map[int64]int64{} // checkpoint id -> its timestamp
	now := int64(0)
	apply := func(a BarrierAction, channel int, what string) {
		if a.UnblockAll {
			clear(mirror)
		}
		for _, ch := range a.BlockChannels {
			mirror[ch] = true
		}
		for ch := 0; ch < n; ch++ {
			if mirror[ch] != h.Blocked(ch) {
				rt.Fatalf("%s: action says blocked=%v for channel %d, handler %v (%+v)", what, mirror[ch], ch, h.Blocked(ch), a)
			}
		}
		if a.TriggerSnapshot {
			id := a.CheckpointID
			if triggered[id] {
				rt.Fatalf("checkpoint %d triggered twice", id)
			}
			if len(trig) > 0 && trig[len(trig)-1] >= id {
				rt.Fatalf("trigger %d after %v", id, trig)
			}
			triggered[id] = true
			trig = append(trig, id)
			unaligned = append(unaligned, a.Unaligned)
			if !a.Unaligned {
				// aligned: every channel delivered this barrier or ended, and this input completed it
				for ch := 0; ch < n; ch++ {
					if !delivered[id][ch] && !ended[ch] {
						rt.Fatalf("aligned checkpoint %d triggered without channel %d", id, ch)
					}
				}
				if !a.AllBarriersReceived {
					rt.Fatalf("aligned trigger of %d before all barriers", id)
				}
			} else if cfg.AlignedTimeoutMs > 0 && !a.SwitchedToUnaligned {
				rt.Fatalf("unaligned trigger without a switch: %+v", a)
			} else if a.SwitchedToUnaligned && now < firstSeen[id]+cfg.AlignedTimeoutMs {
				rt.Fatalf("checkpoint %d switched to unaligned at %d, before its timeout %d", id, now, firstSeen[id]+cfg.AlignedTimeoutMs)
			}
		}
		// blocked channels are exactly those whose (aligned) barrier arrived in the
		// current alignment
		if !cfg.Unaligned || cfg.AlignedTimeoutMs > 0 {
			for ch := 0; ch < n; ch++ {
				want := h.CheckpointPending() && delivered[h.CurrentCheckpoint()][ch] && !ended[ch]
				if !cfg.Unaligned && h.Blocked(ch) != want {
					rt.Fatalf("%s: channel %d blocked=%v, want %v (current %d)", what, ch, h.Blocked(ch), want, h.CurrentCheckpoint())
				}
				if cfg.Unaligned && h.Blocked(ch) && !want {
					rt.Fatalf("%s: channel %d blocked without its barrier", what, ch)
				}
			}
		} else {
			for ch := 0; ch < n; ch++ {
				if h.Blocked(ch) {
					rt.Fatalf("pure unaligned mode blocked channel %d", ch)
				}
			}
		}
	}
	for step := 0; step < 1000; step++ {
		now += rapid.Int64Range(0, 20).Draw(rt, "gap")
		if at, ok := h.NextTimer(); ok && at <= now {
			apply(h.OnTimer(at), -1, "timer")
		}
		var ready []int
		for ch := 0; ch < n; ch++ {
			if len(g.queues[ch]) > 0 && !h.Blocked(ch) {
				ready = append(ready, ch)
			}
		}
		if len(ready) == 0 {
			if at, ok := h.NextTimer(); ok {
				now = max(now, at)
				continue
			}
			break
		}
		if cancels && rapid.IntRange(0, 15).Draw(rt, "cancel") == 0 {
			id := rapid.Int64Range(1, 8).Draw(rt, "cancelID")
			apply(h.OnCancellation(id), -1, "cancel")
			continue
		}
		ch := rapid.SampledFrom(ready).Draw(rt, "channel")
		id := g.queues[ch][0]
		g.queues[ch] = g.queues[ch][1:]
		if id == 0 {
			ended[ch] = true
			apply(h.OnEndOfPartition(ch, now), ch, "eop")
			continue
		}
		if delivered[id] == nil {
			delivered[id] = map[int]bool{}
		}
		delivered[id][ch] = true
		ts, ok := firstSeen[id]
		if !ok {
			ts = now - rapid.Int64Range(0, 30).Draw(rt, "age")
			firstSeen[id] = ts
		}
		apply(h.OnBarrier(ch, Barrier{ID: id, TimestampMs: ts}, now), ch, fmt.Sprintf("barrier %d on %d", id, ch))
	}
	for ch := 0; ch < n && !missing; ch++ {
		if len(g.queues[ch]) > 0 {
			rt.Fatalf("gate stalled: channel %d still holds %v (blocked=%v)", ch, g.queues[ch], h.Blocked(ch))
		}
	}
	return trig, unaligned
}

func TestPropertyAlignedHandler(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "channels")
		k := rapid.IntRange(1, 6).Draw(rt, "checkpoints")
		missing := rapid.Bool().Draw(rt, "missing")
		cancels := rapid.Bool().Draw(rt, "cancels")
		g := drawGate(rt, n, k, missing)
		noEOP := true
		for _, q := range g.queues {
			if len(q) > 0 && q[len(q)-1] == 0 {
				noEOP = false
			}
		}
		trig, _ := handlerRun(rt, BarrierHandlerConfig{NumChannels: n}, g, cancels, missing)
		// with every barrier present and nothing cancelled, every checkpoint triggers once
		// (an input may end while others still carry barriers, which then align without it)
		if !missing && !cancels && noEOP && len(trig) != k {
			rt.Fatalf("triggered %v of %d checkpoints", trig, k)
		}
	})
}

func TestPropertyUnalignedHandler(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "channels")
		k := rapid.IntRange(1, 6).Draw(rt, "checkpoints")
		g := drawGate(rt, n, k, false)
		trig, unaligned := handlerRun(rt, BarrierHandlerConfig{NumChannels: n, Unaligned: true}, g, false, false)
		for _, u := range unaligned {
			if !u {
				rt.Fatalf("aligned snapshot in unaligned mode: %v", trig)
			}
		}
	})
}

func TestPropertyAlternatingHandler(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "channels")
		k := rapid.IntRange(1, 6).Draw(rt, "checkpoints")
		timeout := rapid.Int64Range(1, 60).Draw(rt, "timeout")
		missing := rapid.Bool().Draw(rt, "missing")
		g := drawGate(rt, n, k, missing)
		handlerRun(rt, BarrierHandlerConfig{NumChannels: n, Unaligned: true, AlignedTimeoutMs: timeout}, g, rapid.Bool().Draw(rt, "cancels"), missing)
	})
}
