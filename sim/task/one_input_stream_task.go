package task

import (
	"math"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
	"github.com/flinksim/flinksim/sim/watermark"
)

// oneInputStreamTask is the head of a task with one input: Flink's
// OneInputStreamTask with its StreamTaskNetworkInput. Its InputGate
// (sim/exchange) has one InputChannel per producer; it reads a buffer
// element by element (the record deserializer), hands records to the
// operator chain (the window operator or the process function, then the
// sink; or an unchained ParseOrder, Filter or sink), takes watermarks and
// watermark status through the StatusWatermarkValve, and gives checkpoint
// barriers to its barrier handler. Restored input channel state is read
// before any new input.
type oneInputStreamTask struct {
	t           *StreamTask
	gate        *exchange.InputGate // nil until the task starts
	in          deserializing       // the buffer being read
	valve       *watermark.StatusWatermarkValve
	lastInputWm int64                      // the operator's last input watermark (ms)
	replayIn    []*messages.InFlightRecord // restored input channel state, processed first
	barriers    singleCheckpointBarrierHandler
	debloat     *gateDebloat // nil: buffer debloating off
}

var _ streamTaskHead = (*oneInputStreamTask)(nil)

// deserializing is the buffer a task reads element by element
// (StreamTaskNetworkInput's record deserializer): a task whose output
// becomes unavailable stops between two records and goes on with the same
// buffer once it is available again.
type deserializing struct {
	buf *messages.Buffer // nil: none
	ch  int              // its channel
	pos int              // the next element
}

// init builds the InputGate (a channel is local when its producer runs on
// this TaskManager), the valve, the keyed operator and the barrier handler.
func (g *oneInputStreamTask) init(o *kernel.Out) bool {
	t := g.t
	d := t.d
	local := make([]bool, len(d.InputGate.Producers))
	for i, at := range d.InputGate.ProducerLocations {
		local[i] = at == t.tm
	}
	g.gate = exchange.NewInputGate(len(d.InputGate.Producers), t.cfg.FloatingBuffersPerGate, local)
	g.debloat = g.newGateDebloat(len(d.InputGate.Producers))
	g.valve, _ = watermark.NewStatusWatermarkValve(g.gate.NumChannels())
	g.lastInputWm = math.MinInt64
	if !t.chain.initKeyed(o) {
		return false
	}
	g.barriers.init(checkpoint.BarrierHandlerConfig{NumChannels: g.gate.NumChannels(),
		Unaligned: t.cfg.UnalignedCheckpoints, AlignedTimeoutMs: t.cfg.AlignedCheckpointTimeout.Milliseconds(),
		DisableCheckpointsAfterTasksFinish: !t.cfg.CheckpointsAfterTasksFinish})
	return true
}

// onChannelBuffer is a buffer (data or event) arriving on channel
// m.ChannelIndex: counted, queued, and a barrier announced to the handler;
// an unaligned barrier is a priority event, processed at once.
func (g *oneInputStreamTask) onChannelBuffer(o *kernel.Out, m *messages.ChannelBuffer) {
	ci, buf := int(m.ChannelIndex), m.Buffer
	g.gate.Count(buf)
	if g.debloat != nil {
		g.debloat.backlog[ci] = int(m.Backlog)
	}
	barrier := buf.IsEvent && buf.Kinds[0] == exchange.KindBarrier
	if barrier {
		if buf.Unaligned {
			// a priority event: processed at once, overtaking the
			// buffers queued in its channel
			g.t.spend(o, g.barriers.onChannelBarrier(o, ci, buf, false))
			return
		}
		g.barriers.barrierQueued[ci]++
	} else if buf.IsEvent && buf.Kinds[0] == exchange.KindEndOfPartition {
		g.barriers.endOfPartitionArrives(o, ci)
	} else if !buf.IsEvent {
		g.barriers.onDataArrived(ci, buf)
	}
	g.gate.Enqueue(ci, buf)
	if barrier {
		g.barriers.announceBarrier(o, ci, buf)
	}
}

// grantFloating tells channels of the floating buffers the gate's pool
// granted them (LocalBufferPool with BufferListeners).
func (g *oneInputStreamTask) grantFloating(o *kernel.Out, grants []exchange.Grant) {
	for _, gr := range grants {
		o.Send(jobgraph.ChannelName(o.Name(), gr.Channel), 0, &messages.Envelope_FloatingBuffers{FloatingBuffers: &messages.FloatingBuffers{Count: int32(gr.Count)}})
	}
}

// processInput is one slice of the gate: restored channel state first,
// then buffers (one that only holds watermarks changing nothing costs no
// time, so the next is taken at once), then the end of the input.
func (g *oneInputStreamTask) processInput(o *kernel.Out) (cost vt.Time) {
	t := g.t
	if t.rp == nil || t.rp.Available() {
		t.unblock(o)
	}
	if len(g.replayIn) > 0 && !t.mb.Blocked() {
		cost = g.replaySlice(o)
	}
	for cost == 0 && g.gateReady() && !t.mb.Blocked() {
		cost = g.gateSlice(o)
	}
	if !g.gateReady() {
		// once this slice is done the task finds nothing in the gate
		// (getNextBufferOrEvent): the throughput's clock pauses then
		g.debloat.idle(o.Now() + cost)
	}
	g.maybeFinish(o)
	return cost
}

// hasInput reports whether a buffer or restored channel state waits.
func (g *oneInputStreamTask) hasInput() bool {
	return g.gateReady() || len(g.replayIn) > 0
}

// gateReady reports whether a buffer is being read, or a channel not
// blocked by an aligned barrier has a buffer queued.
func (g *oneInputStreamTask) gateReady() bool {
	return g.in.buf != nil || g.gate.Ready(g.barriers.isBlocked)
}

// replaySlice processes up to sim.buffer.records records of restored input
// channel state, before any new input.
func (g *oneInputStreamTask) replaySlice(o *kernel.Out) (cost vt.Time) {
	t := g.t
	perRecord := t.chain.recordCost()
	n := min(len(g.replayIn), t.cfg.RecordsPerBuffer())
	for k, r := range g.replayIn[:n] {
		if k > 0 && t.rp != nil && !t.rp.Available() {
			n = k
			break
		}
		cost += perRecord + t.chain.processRecord(o, r.Key, r.Timestamp, r.Value, r.Payload)
	}
	g.replayIn = g.replayIn[n:]
	return cost
}

// gateSlice processes the buffer being read, or the next buffer of the
// InputGate, until it ends or the output has no room for another record
// (the mailbox checks RecordWriter.isAvailable between records).
func (g *oneInputStreamTask) gateSlice(o *kernel.Out) (cost vt.Time) {
	t := g.t
	if g.in.buf == nil && !g.gate.HasData() {
		return 0
	}
	if t.rp != nil && !t.rp.Available() {
		t.block(o)
		return 0
	}
	if g.in.buf == nil {
		// the first channel with data that no aligned barrier blocks
		ci, buf, ok := g.gate.Next(g.barriers.isBlocked)
		if !ok {
			return 0
		}
		g.debloat.took(o.Now(), buf)
		g.in = deserializing{buf: buf, ch: ci}
	}
	ci, buf := g.in.ch, g.in.buf
	ch := g.gate.Channel(ci)
	perRecord := t.chain.recordCost()
	for g.in.pos < len(buf.Kinds) {
		i := g.in.pos
		g.in.pos++
		if t.rp != nil && i > 0 && buf.Kinds[i] == exchange.KindRecord && !t.rp.Available() {
			g.in.pos--
			t.block(o)
			return cost // the rest of the buffer waits for room in the output
		}
		switch kind := buf.Kinds[i]; kind {
		case exchange.KindRecord:
			cost += perRecord + t.chain.processRecord(o, buf.Keys[i], buf.Timestamps[i], buf.Values[i], exchange.PayloadAt(buf, i))
		case exchange.KindWatermark:
			if wm, changed := g.valve.InputWatermark(ci, buf.Timestamps[i]); changed {
				cost += g.advanceWatermark(o, wm)
			}
		case exchange.KindStatusIdle, exchange.KindStatusActive:
			wm, wmChanged, idle, statusChanged := g.valve.InputWatermarkStatus(ci, kind == exchange.KindStatusIdle)
			if statusChanged {
				st := "ACTIVE"
				if idle {
					st = "IDLE"
				}
				o.Log(eventlog.WatermarkStatus{Status: st})
				if t.rp != nil {
					k := exchange.KindStatusActive
					if idle {
						k = exchange.KindStatusIdle
					}
					t.rp.Broadcast(k, 0)
				}
			}
			if wmChanged {
				cost += g.advanceWatermark(o, wm)
			}
		case exchange.KindEndOfData:
			ch.DataEnded = true
		case exchange.KindBarrier:
			g.barriers.barrierQueued[ci]--
			if !buf.Unaligned && !buf.Inserted {
				g.barriers.resume[ci] = true // its producer blocked the subpartition after it
			}
			cost += g.barriers.onChannelBarrier(o, ci, buf, !buf.Unaligned)
		case exchange.KindEndOfPartition:
			ch.Ended, ch.DataEnded = true, true
			o.Log(eventlog.ChannelFinished{Channel: int64(ci), Producer: t.d.InputGate.Producers[ci]})
			cost += g.barriers.apply(o, g.barriers.handler.OnEndOfPartition(ci, vt.Millis(o.Now())), ci, true)
		}
	}
	g.in = deserializing{}
	if !buf.IsEvent {
		o.Send(jobgraph.ChannelName(o.Name(), ci), cost, &messages.Envelope_RecycleBuffers{RecycleBuffers: &messages.RecycleBuffers{Count: 1}})
	}
	return cost
}

// advanceWatermark hands a new input watermark to the operator and forwards
// it downstream; it returns the cost of the firings.
func (g *oneInputStreamTask) advanceWatermark(o *kernel.Out, wm int64) vt.Time {
	t := g.t
	if wm < g.lastInputWm {
		o.Invariant("watermark_monotonic", "%s: input watermark went back from %d to %d", o.Name(), g.lastInputWm, wm)
		return 0
	}
	g.lastInputWm = wm
	cost := t.chain.advanceWatermark(o, wm)
	if t.rp != nil {
		t.rp.Broadcast(exchange.KindWatermark, wm)
	}
	return cost
}

// maybeFinish ends the task once every channel's input has ended and all
// of it is processed: with checkpointing (FLIP-147) EndOfData and a wait for
// the final checkpoint, otherwise, once every channel's EndOfPartition is
// in, the sink's end of input and the task's EndOfPartition.
func (g *oneInputStreamTask) maybeFinish(o *kernel.Out) {
	t := g.t
	if t.finishedAll || t.ck.awaitFinal || g.in.buf != nil || g.gate.HasData() || len(g.replayIn) > 0 || !g.gate.AllDataEnded() ||
		(t.rp != nil && t.rp.Blocked()) {
		return
	}
	if t.ck.enabled {
		t.ck.awaitFinal = true
		if t.rp != nil {
			t.rp.EndOfData()
		}
		return
	}
	if !g.gate.AllEnded() {
		return
	}
	if sink := t.chain.sink; sink.exactlyOnce() {
		sink.flush(o, 0)
		if t.d.Checkpointing {
			// checkpoints-after-tasks-finish off: no final checkpoint, so
			// the last transaction is pre-committed and never committed
			sink.sendTxn(o, sink.w.EndInputPreCommit())
		} else {
			// without checkpoints the sink commits at the end of its input
			// (CommitterOperator.endInput)
			sink.sendTxn(o, sink.w.EndInput())
		}
	}
	t.finishTask(o)
}

func (g *oneInputStreamTask) addMetrics(m *eventlog.TaskMetrics) {
	t := g.t
	usage, queued, lengths := g.gate.InPoolUsage(t.cfg.BuffersPerChannel)
	m.Watermark, m.HasWatermark, m.InputWatermark = g.valve.LastOutputWatermark(), true, true
	m.NumBuffersIn, m.NumBytesIn, m.InPoolUsage = g.gate.BuffersIn, g.gate.BytesIn, usage
	m.InputQueueLength, m.InputQueueLengths = queued, lengths
	g.addDebloatMetrics(m)
	t.chain.addMetrics(m)
}

func (g *oneInputStreamTask) appendFinal(fields []eventlog.Value) []eventlog.Value {
	t := g.t
	fields = append(fields, eventlog.I("records_in", t.m.recordsIn))
	if t.chain.op == nil && t.chain.proc == nil && t.rp != nil {
		// ParseOrder and/or Filter in a task of their own
		fields = append(fields, eventlog.I("records_emitted", t.m.recordsOut))
	}
	return fields
}

func (g *oneInputStreamTask) inspect(v *SubtaskView) {
	t := g.t
	if g.valve != nil {
		v.Watermark, v.Idle = g.valve.LastOutputWatermark(), g.valve.IsIdle()
	}
	h := &g.barriers
	for i := 0; g.gate != nil && i < g.gate.NumChannels(); i++ {
		ch := g.gate.Channel(i)
		gc := GateChannel{Index: i, Producer: t.d.InputGate.Producers[i], Ended: ch.Ended, Watermark: math.MinInt64}
		for _, b := range ch.Buffers {
			if !b.IsEvent {
				gc.Queued++
			}
		}
		if h.handler != nil {
			gc.Blocked = h.blocked[i]
			gc.Persisting = t.ck.pending != nil && h.handler.Persisting(i)
		}
		if g.valve != nil {
			if wm, idle, _, ok := g.valve.ChannelStatus(i); ok {
				gc.Watermark, gc.Idle = wm, idle
			}
		}
		v.Inputs = append(v.Inputs, gc)
	}
	if h.handler != nil {
		v.Checkpoint = h.handler.CurrentCheckpoint()
	}
	t.chain.inspect(v)
}
