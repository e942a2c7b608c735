package task

import (
	"math"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// StreamTask is one parallel instance of a JobVertex: Flink's StreamTask
// running its operator chain on one thread (the mailbox). It holds what
// every task shares: the execution state, the mailbox, the metrics, the
// output partition (record_writer.go), the operator chain after the head
// (operator_chain.go, with the KafkaSink in kafka_sink.go) and the task's
// part in checkpoints (subtask_checkpoint_coordinator.go). Its head is one
// of two roles, as Flink's StreamTask subclasses split them:
//
//   - sourceStreamTask (SourceStreamTask with a SourceOperator and its
//     KafkaSourceReader), for the source vertex;
//   - oneInputStreamTask (OneInputStreamTask with a StreamTaskNetworkInput):
//     an InputGate with one InputChannel per producer, its checkpoint
//     barriers handled by a singleCheckpointBarrierHandler.
//
// Work happens in slices: the task takes a batch of input (fetched records,
// or one network buffer), processes it record by record at the configured
// per-record costs, and is busy for the sum of those costs in virtual time.
// A task that finds no free output buffer stops (backpressure) until a
// credit lets a buffer go; in the middle of a record it may block writing,
// and then only the network stack runs (heldMail).
type StreamTask struct {
	name   string // the execution's actor name
	cfg    *config.Config
	d      *messages.SubmitTask
	tm     string
	index  int
	maxP   int
	status status.Execution
	// deferred holds what reached the task before it was RUNNING: a
	// mailbox that only starts taking letters once the task is restored
	deferred []*messages.Envelope
	running  bool
	// heldMail holds, in order, what reached the task's thread while it was
	// blocked writing into its output (onTaskThread)
	heldMail []*messages.Envelope

	// the head: exactly one of source and input is set, and head is it
	source *sourceStreamTask
	input  *oneInputStreamTask
	head   streamTaskHead
	chain  operatorChain                // the operators after the head
	ck     subtaskCheckpointCoordinator // snapshots, acknowledgements, the final checkpoint

	// output (record_writer.go)
	rp        *exchange.ResultPartition
	consumers []string
	hashOut   bool
	rrNext    int // RebalancePartitioner's last channel
	sends     []exchange.Send
	lastSend  []vt.Time // per subpartition: delivery time of the last message sent, to keep each channel FIFO
	lastKafka vt.Time   // delivery time of the last message to the broker, to keep them in order

	// scheduling and metrics
	mb            Mailbox
	finishedAll   bool
	reported      bool
	reportPending bool // report waits for the end of a slice or of the broker requests
	finalLogged   bool
	m             taskMetrics
}

// streamTaskHead is what the StreamTask asks of its head, the role its
// vertex gives it (Flink's StreamTask.init and processInput, overridden by
// SourceStreamTask and OneInputStreamTask).
type streamTaskHead interface {
	// init builds the head when the task starts (the reader, or the gate
	// and its keyed operator); false: a broken invariant ended the run.
	init(o *kernel.Out) bool
	// processInput runs one slice of input and returns its cost (µs).
	processInput(o *kernel.Out) vt.Time
	// hasInput reports whether input waits to be processed.
	hasInput() bool
	// addMetrics fills the head's part of task_metrics.
	addMetrics(m *eventlog.TaskMetrics)
	// appendFinal appends the head's counters of final_counters.
	appendFinal(fields []eventlog.Value) []eventlog.Value
	// inspect fills the head's part of the view.
	inspect(v *SubtaskView)
}

type taskMetrics struct {
	recordsIn, recordsOut, lateDropped, windowsFired, resultsWritten int64
}

// NewSubtask returns the subtask deployed by d on task manager tm: a
// StreamTask with the head its JobVertex calls for.
func NewSubtask(cfg *config.Config, d *messages.SubmitTask, tm string) *StreamTask {
	t := &StreamTask{name: d.ExecutionId, cfg: cfg, d: d, tm: tm, index: int(d.SubtaskIndex), maxP: int(d.MaxParallelism)}
	t.chain = operatorChain{t: t, procTimer: math.MinInt64}
	t.ck = subtaskCheckpointCoordinator{t: t}
	if d.JobVertex == jobgraph.VertexSource {
		t.source = &sourceStreamTask{t: t}
		t.head = t.source
	} else {
		t.input = &oneInputStreamTask{t: t}
		t.input.barriers.in = t.input
		t.head = t.input
	}
	for _, op := range d.Chain {
		switch {
		case jobgraph.IsSinkOperator(op):
			t.chain.sink = &kafkaSinkWriter{t: t,
				w: kafka.NewWriter(cfg.TransactionalIDPrefix, t.index, cfg.DeliveryGuarantee == config.DeliveryExactlyOnce)}
		case op == jobgraph.OperatorParseOrder:
			t.chain.parse = true
			t.chain.needValue = cfg.Operator == config.OperatorWindow && cfg.Aggregate != config.AggregateCount
		case jobgraph.IsFilterOperator(op):
			t.chain.filter, _ = filter.Parse(cfg.Filter) // validated with the settings
		}
	}
	return t
}

// Step implements kernel.Component.
func (t *StreamTask) Step(o *kernel.Out, env *messages.Envelope) {
	if !t.running {
		t.notRunning(o, env)
		return
	}
	if (len(t.heldMail) > 0 || (t.rp != nil && t.rp.Blocked())) && onTaskThread(env) {
		// the task's thread is blocked writing into its output: mail waits
		t.heldMail = append(t.heldMail, env)
		t.flushSends(o, 0)
		return
	}
	t.step(o, env)
	t.runHeldMail(o)
	t.checkNetworkBounds(o)
}

// checkNetworkBounds ends the run when a network queue of the task is past
// Flink's bounds (invariant network_buffer_bounds): its output pool
// (ResultPartition.CheckBounds), or its InputGate (InputGate.CheckBounds).
func (t *StreamTask) checkNetworkBounds(o *kernel.Out) {
	if t.rp != nil {
		if what := t.rp.CheckBounds(); what != "" {
			o.Invariant("network_buffer_bounds", "%s: %s", o.Name(), what)
		}
	}
	if t.input != nil && t.input.gate != nil {
		if what := t.input.gate.CheckBounds(t.cfg.BuffersPerChannel, t.cfg.FloatingBuffersPerGate); what != "" {
			o.Invariant("network_buffer_bounds", "%s: %s", o.Name(), what)
		}
	}
}

// onTaskThread reports whether env is handled on the task's own thread (the
// mailbox: checkpoint triggers and notifications, operator events, input,
// the operators' timers) rather than by the network stack, the output
// flusher, the metrics or a cancellation, which go on while the thread is
// blocked in requestBufferBuilderBlocking.
func onTaskThread(env *messages.Envelope) bool {
	switch b := env.Body.(type) {
	case *messages.Envelope_TriggerCheckpoint, *messages.Envelope_NotifyCheckpointComplete,
		*messages.Envelope_NotifyCheckpointAborted, *messages.Envelope_AddSplits, *messages.Envelope_NoMoreSplits,
		*messages.Envelope_WatermarkAlignmentEvent, *messages.Envelope_ChannelBuffer:
		return true
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerFlush, timerMetrics, timerContinue:
			return false
		}
		return true
	}
	return false
}

// runHeldMail hands over the mail that waited while the task's thread was
// blocked in its output, in order, as long as it is not blocked again.
func (t *StreamTask) runHeldMail(o *kernel.Out) {
	for len(t.heldMail) > 0 && (t.rp == nil || !t.rp.Blocked()) && t.running {
		env := t.heldMail[0]
		t.heldMail[0] = nil
		t.heldMail = t.heldMail[1:]
		t.step(o, env)
	}
	if len(t.heldMail) == 0 {
		t.heldMail = nil
	}
}

// step handles one envelope of a running task.
func (t *StreamTask) step(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Timer:
		t.onTimer(o, b.Timer)
	case *messages.Envelope_TriggerCheckpoint:
		t.ck.triggerCheckpoint(o, b.TriggerCheckpoint)
	case *messages.Envelope_NotifyCheckpointComplete:
		t.ck.checkpointComplete(o, b.NotifyCheckpointComplete.CheckpointId)
	case *messages.Envelope_NotifyCheckpointAborted:
		t.ck.checkpointAborted(o, b.NotifyCheckpointAborted.CheckpointId)
	case *messages.Envelope_AddSplits:
		t.source.addSplits(o, b.AddSplits)
	case *messages.Envelope_NoMoreSplits:
		t.source.src.NoMoreSplits()
	case *messages.Envelope_WatermarkAlignmentEvent:
		t.source.alignWatermarks(o, b.WatermarkAlignmentEvent.MaxWatermark)
	case *messages.Envelope_FetchResponse:
		t.source.src.OnFetchResponse(b.FetchResponse)
	case *messages.Envelope_PartitionRequest:
		m := b.PartitionRequest
		if m.Local {
			t.rp.OnLocalRequest(int(m.SubpartitionIndex), m.ReceiverId)
		} else {
			t.rp.OnPartitionRequest(int(m.SubpartitionIndex), m.ReceiverId, int(m.Credit))
		}
	case *messages.Envelope_LocalBufferRecycled:
		t.rp.OnLocalRecycle(int(b.LocalBufferRecycled.SubpartitionIndex), int(b.LocalBufferRecycled.Count))
	case *messages.Envelope_ResumeConsumption:
		t.rp.OnResumeConsumption(int(b.ResumeConsumption.SubpartitionIndex))
	case *messages.Envelope_CancelTask:
		t.cancel(o)
		return
	case *messages.Envelope_FailTask:
		t.failExternally(o, b.FailTask.Cause)
		return
	case *messages.Envelope_ConnectionLost:
		return // RPC, or the producer's end of a data connection (the task fails by FailTask)
	case *messages.Envelope_AddCredit:
		m := b.AddCredit
		if !t.rp.OnAddCredit(int(m.SubpartitionIndex), int(m.Credit)) {
			o.Invariant("credit_positive", "%s got AddCredit %d from %s", o.Name(), m.Credit, env.From)
			return
		}
	case *messages.Envelope_RequestFloatingBuffers:
		m := b.RequestFloatingBuffers
		t.input.grantFloating(o, t.input.gate.RequestFloating(int(m.ChannelIndex), int(m.Count)))
	case *messages.Envelope_ReturnFloatingBuffers:
		t.input.grantFloating(o, t.input.gate.ReturnFloating(int(b.ReturnFloatingBuffers.Count)))
	case *messages.Envelope_ChannelBuffer:
		t.input.onChannelBuffer(o, b.ChannelBuffer)
	case *messages.Envelope_EndOfRun:
		if !t.finalLogged {
			t.metrics(o)
		}
		t.logFinal(o)
		return
	}
	t.work(o)
	t.flushSends(o, 0)
	if t.rp != nil && t.mb.Blocked() && t.rp.Available() {
		// What was just sent gave pool buffers back (a remote consumer's
		// credit let a queued buffer go): the task, backpressured in its
		// output, goes on at once, as LocalBufferPool completes the
		// availability future the mailbox waits on when a segment is
		// recycled. Without this it slept until its next mail, often the
		// next buffer-timeout flush.
		t.work(o)
		t.flushSends(o, 0)
	}
}

// onTimer handles one of the task's own timers.
func (t *StreamTask) onTimer(o *kernel.Out, tm *messages.Timer) {
	switch tm.Kind {
	case timerContinue:
		t.mb.Woken()
	case timerWatermark:
		if t.source != nil {
			t.source.periodicWatermark(o)
		}
		if !t.finishedAll {
			o.Timer(vt.FromDuration(t.cfg.AutoWatermarkInterval), timerWatermark, 0)
		}
	case timerFlush:
		if t.rp != nil {
			t.rp.FlushAll()
		}
		if !t.finishedAll || (t.rp != nil && !t.rp.AllEndsSent()) {
			o.Timer(vt.FromDuration(t.cfg.BufferTimeout), timerFlush, 0)
		}
	case timerMetrics:
		t.metrics(o)
		if !t.reported {
			o.Timer(1_000_000, timerMetrics, 0)
		}
	case timerAlignment:
		t.source.reportWatermark(o)
		if !t.finishedAll {
			o.Timer(t.source.alignmentInterval(), timerAlignment, 0)
		}
	case timerCheckpointAlignment:
		if t.input != nil {
			t.input.barriers.onTimer(o)
		}
	case timerReport:
		t.reportPending = false
		t.report(o)
	case timerCheckpointOutput:
		t.ck.outputBarrierTimeout(o, tm.Arg)
	case timerProcessingTime:
		t.chain.onProcessingTime(o)
	}
}

// notRunning handles an envelope before the task is RUNNING: DEPLOYING
// until Start, then INITIALIZING for sim.task.init-time (Task.doRun,
// StreamTask.restore). A cancel or failure ends it there; everything else
// waits for RUNNING, in arrival order.
func (t *StreamTask) notRunning(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		if t.status == 0 {
			t.setState(o, status.Initializing, "")
			o.Timer(vt.FromDuration(t.cfg.TaskInitTime), timerInitialized, 0)
		}
	case *messages.Envelope_Timer:
		if b.Timer.Kind != timerInitialized || t.status != status.Initializing {
			return
		}
		t.running = true
		t.start(o)
		deferred := t.deferred
		t.deferred = nil
		for _, e := range deferred {
			t.Step(o, e)
		}
	case *messages.Envelope_CancelTask:
		t.setState(o, status.Canceled, "")
	case *messages.Envelope_FailTask:
		t.setState(o, status.Failed, b.FailTask.Cause)
	case *messages.Envelope_ConnectionLost:
	case *messages.Envelope_EndOfRun:
		t.logFinal(o)
	default:
		if t.status == 0 || t.status == status.Initializing {
			t.deferred = append(t.deferred, env)
		}
	}
}

// start builds the task once it is initialized: its output partition, its
// head, the mailbox, the metrics timer and its checkpointing (restoring the
// state the SubmitTask carries), and reports RUNNING.
func (t *StreamTask) start(o *kernel.Out) {
	if rp := t.d.ResultPartition; rp != nil {
		t.consumers = rp.Consumers
		t.hashOut = rp.Partitioner == jobgraph.PartitionHash
		t.rp = exchange.NewResultPartition(len(rp.Consumers),
			exchange.PoolSize(len(rp.Consumers), t.cfg.BuffersPerChannel, t.cfg.FloatingBuffersPerGate),
			t.cfg.RecordsPerBuffer(), t.cfg.RecordBytes)
		t.rp.SetMaxBuffersPerChannel(t.cfg.MaxBuffersPerChannel)
		t.rp.SetMaxOverdraftBuffers(t.cfg.MaxOverdraftBuffersPerGate)
		if !t.hashOut {
			// every edge but keyBy's leads to an operator that needs the
			// record itself: ParseOrder or Filter the Kafka record's value,
			// an unchained sink the rendered result
			t.rp.CarryPayloads()
		}
		if rp.Partitioner == jobgraph.PartitionRebalance {
			// RebalancePartitioner.setup starts at a random channel
			// (ThreadLocalRandom); here the subtask's generator, seeded
			// from (sim.seed, its name), draws it
			t.rrNext = o.Rand().IntN(len(rp.Consumers))
		}
		if t.cfg.BufferTimeout > 0 {
			o.Timer(vt.FromDuration(t.cfg.BufferTimeout), timerFlush, 0)
		}
	}
	if !t.head.init(o) {
		return
	}
	t.mb = NewMailbox(o.Now())
	o.Timer(1_000_000, timerMetrics, 0)
	t.ck.init(o)
	t.setState(o, status.Running, "")
}

func (t *StreamTask) setState(o *kernel.Out, state status.Execution, reason string) {
	if t.status == state {
		return
	}
	t.status = state
	o.Send(t.tm, 0, &messages.Envelope_TaskExecutionState{TaskExecutionState: &messages.TaskExecutionState{
		ExecutionId: o.Name(), State: state.Proto(), Reason: reason}})
}

// work runs the next slice when the task is not busy, then sends what the
// slice produced once it is done (StreamTask.processInput in the mailbox
// loop).
func (t *StreamTask) work(o *kernel.Out) {
	if t.status != status.Running {
		return
	}
	if t.mb.Busy(o.Now()) {
		// still busy with the last slice: come back when it ends
		if delay, ok := t.mb.WakeAt(o.Now()); ok {
			o.Timer(delay, timerContinue, 0)
		}
		return
	}
	cost := t.head.processInput(o)
	if t.rp != nil && t.cfg.BufferTimeout == 0 {
		// execution.buffer-timeout 0: flush after every record (here,
		// after every slice of records)
		t.rp.FlushAll()
	}
	t.chain.sink.flush(o, cost)
	if cost > 0 {
		t.mb.Slice(o.Now(), cost)
		if t.head.hasInput() {
			// more input waits: take it when this slice ends (otherwise
			// the next arrival schedules the wake-up)
			t.mb.WakeAfter()
			o.Timer(cost, timerContinue, 0)
		}
		t.flushSends(o, cost)
	}
}

func (t *StreamTask) block(o *kernel.Out) {
	t.mb.Block(o.Now())
}

func (t *StreamTask) unblock(o *kernel.Out) {
	t.mb.Unblock(o.Now())
}

// spend makes the task busy for cost more (work done outside a slice, such
// as a snapshot's synchronous part or a priority barrier).
func (t *StreamTask) spend(o *kernel.Out, cost vt.Time) {
	t.mb.Spend(o.Now(), cost)
}

// report marks the task FINISHED once all its output is sent.
//
// A task finishes once its EndOfPartition is queued (Flink's
// ResultPartition.finish; consumers may still be reading), but not while it
// is busy with a slice or its last requests to the broker are on their way,
// so the job cannot reach FINISHED before its output is written.
func (t *StreamTask) report(o *kernel.Out) {
	if t.reported {
		return
	}
	if at := max(t.mb.BusyUntil(), t.lastKafka); o.Now() < at {
		if !t.reportPending {
			t.reportPending = true
			o.Timer(at-o.Now(), timerReport, 0)
		}
		return
	}
	t.reported = true
	t.metrics(o)
	t.logFinal(o)
	t.setState(o, status.Finished, "")
}

// finishTask ends the task's output after its final checkpoint or
// savepoint: EndOfPartition downstream, FINISHED once it is sent.
func (t *StreamTask) finishTask(o *kernel.Out) {
	if t.finishedAll {
		return
	}
	t.finishedAll = true
	if t.chain.sink.exactlyOnce() && t.ck.enabled || t.chain.sink.exactlyOnce() && t.ck.stopping {
		// KafkaWriter.close aborts the transaction still open (the one
		// begun after the last snapshot)
		t.chain.sink.flush(o, 0)
		t.chain.sink.abort(o)
	}
	if t.rp != nil {
		t.rp.EndOfPartition()
		return
	}
	t.report(o)
}

// cancel is CancelTask for a running task: the operators close, so the
// exactly-once writer aborts the transaction it has open
// (KafkaWriter.close), then the task is CANCELED and its TaskManager stops it.
func (t *StreamTask) cancel(o *kernel.Out) {
	t.chain.sink.close(o)
	t.setState(o, status.Canceled, "")
}

// failExternally is Task.failExternally: a running task fails with cause
// (its input channel's connection broke, or its TaskManager lost the
// JobManager); its operators close, so the exactly-once writer aborts its
// open transaction (KafkaWriter.close), and its TaskManager reports FAILED.
// A task already in a final state stays in it.
func (t *StreamTask) failExternally(o *kernel.Out, cause string) {
	switch t.status {
	case status.Finished, status.Canceled, status.Failed:
		return
	}
	t.chain.sink.close(o)
	t.setState(o, status.Failed, cause)
}
