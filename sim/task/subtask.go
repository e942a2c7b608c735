package task

import (
	"math"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/process"
	"github.com/flinksim/flinksim/sim/source"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
	"github.com/flinksim/flinksim/sim/watermark"
	"github.com/flinksim/flinksim/sim/window"
)

// Subtask is one parallel instance of a JobVertex: a StreamTask running its
// operator chain on one thread (the mailbox). Its head is either the Kafka
// source reader (SourceOperator with KafkaSourceReader) or an InputGate
// with one InputChannel per producer; then come whichever of ParseOrder,
// Filter, the keyed operator and the sink its chain holds (SubmitTask's
// chain), and its tail writes into a ResultPartition or, with the sink, to
// the sink topic.
//
// Work happens in slices: the task takes a batch of input (fetched records,
// or one network buffer), processes it record by record at the configured
// per-record costs, and is busy for the sum of those costs in virtual time.
// A source that finds no free output buffer stops (backpressure) until a
// credit lets a buffer go.
type Subtask struct {
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

	// output
	rp        *exchange.ResultPartition
	consumers []string
	hashOut   bool
	rrNext    int // RebalancePartitioner's last channel
	sends     []exchange.Send
	lastSend  []vt.Time // per subpartition: delivery time of the last message sent, to keep each channel FIFO

	// source head
	isSource   bool
	src        *source.Reader
	parse      bool              // the chain holds ParseOrder
	filter     *filter.Predicate // the chain holds job.filter's Filter
	needValue  bool              // ParseOrder reads the aggregate's field of the record
	sentWm     int64             // last watermark broadcast downstream
	sentIdle   bool              // last watermark status broadcast downstream
	endOfInput bool              // the reader's input ended: the final watermark was emitted

	// gate head
	gate        *exchange.InputGate
	in          deserializing // the buffer being read
	valve       *watermark.StatusWatermarkValve
	op          *window.Operator
	proc        *process.Function // job.operator=process
	lastInputWm int64             // the operator's last input watermark (ms)
	sinkOut     []*messages.KafkaRecord
	hasSink     bool
	procTimer   int64 // processing-time timer scheduled (ms), or math.MinInt64

	// scheduling and metrics
	mb            Mailbox
	finishedAll   bool
	reported      bool
	reportPending bool // report waits for the end of a slice or of the broker requests
	finalLogged   bool
	m             taskMetrics
	ck            subtaskCheckpoint // checkpoint.go
	w             *kafka.Writer     // the KafkaSink's writer, when the chain ends in the sink
}

type taskMetrics struct {
	recordsIn, recordsOut, lateDropped, windowsFired, resultsWritten int64
}

// NewSubtask returns the subtask deployed by d on task manager tm.
func NewSubtask(cfg *config.Config, d *messages.SubmitTask, tm string) *Subtask {
	s := &Subtask{name: d.ExecutionId, cfg: cfg, d: d, tm: tm, index: int(d.SubtaskIndex), maxP: int(d.MaxParallelism),
		isSource: d.JobVertex == jobgraph.VertexSource, procTimer: math.MinInt64}
	for _, op := range d.Chain {
		switch {
		case jobgraph.IsSinkOperator(op):
			s.hasSink = true
			s.w = kafka.NewWriter(cfg.TransactionalIDPrefix, s.index, cfg.DeliveryGuarantee == config.DeliveryExactlyOnce)
		case op == jobgraph.OperatorParseOrder:
			s.parse = true
			s.needValue = cfg.Operator == config.OperatorWindow && cfg.Aggregate != config.AggregateCount
		case jobgraph.IsFilterOperator(op):
			s.filter, _ = filter.Parse(cfg.Filter) // validated with the settings
		}
	}
	return s
}

// Receive implements Component.
func (s *Subtask) Step(o *kernel.Out, env *messages.Envelope) {
	if !s.running {
		s.notRunning(o, env)
		return
	}
	if (len(s.heldMail) > 0 || (s.rp != nil && s.rp.Blocked())) && onTaskThread(env) {
		// the task's thread is blocked writing into its output: mail waits
		s.heldMail = append(s.heldMail, env)
		s.flushSends(o, 0)
		return
	}
	s.step(o, env)
	s.runHeldMail(o)
	s.checkNetworkBounds(o)
}

// checkNetworkBounds ends the run when a network queue of the task is past
// Flink's bounds (invariant network_buffer_bounds): its output pool
// (ResultPartition.CheckBounds), or its InputGate (InputGate.CheckBounds).
func (s *Subtask) checkNetworkBounds(o *kernel.Out) {
	if s.rp != nil {
		if what := s.rp.CheckBounds(); what != "" {
			o.Invariant("network_buffer_bounds", "%s: %s", o.Name(), what)
		}
	}
	if s.gate != nil {
		if what := s.gate.CheckBounds(s.cfg.BuffersPerChannel, s.cfg.FloatingBuffersPerGate); what != "" {
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
func (s *Subtask) runHeldMail(o *kernel.Out) {
	for len(s.heldMail) > 0 && (s.rp == nil || !s.rp.Blocked()) && s.running {
		env := s.heldMail[0]
		s.heldMail[0] = nil
		s.heldMail = s.heldMail[1:]
		s.step(o, env)
	}
	if len(s.heldMail) == 0 {
		s.heldMail = nil
	}
}

// step handles one envelope of a running task.
func (s *Subtask) step(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerContinue:
			s.mb.Woken()
		case timerWatermark:
			s.periodicWatermark(o)
			if !s.finishedAll {
				o.Timer(vt.FromDuration(s.cfg.AutoWatermarkInterval), timerWatermark, 0)
			}
		case timerFlush:
			if s.rp != nil {
				s.rp.FlushAll()
			}
			if !s.finishedAll || (s.rp != nil && !s.rp.AllEndsSent()) {
				o.Timer(vt.FromDuration(s.cfg.BufferTimeout), timerFlush, 0)
			}
		case timerMetrics:
			s.metrics(o)
			if !s.reported {
				o.Timer(1_000_000, timerMetrics, 0)
			}
		case timerAlignment:
			// SourceOperator reports its watermark to the coordinator
			// every update interval (ReportedWatermarkEvent)
			wm, ok := s.src.ReportedWatermark()
			if ok {
				o.Send(jobgraph.JobManagerName, vt.FromDuration(s.cfg.RPCLatency()), &messages.Envelope_ReportedWatermarkEvent{
					ReportedWatermarkEvent: &messages.ReportedWatermarkEvent{SubtaskIndex: int32(s.index), Watermark: wm}})
			}
			if !s.finishedAll {
				o.Timer(s.alignmentInterval(), timerAlignment, 0)
			}
		case timerCheckpointAlignment:
			s.checkpointTimer(o)
		case timerReport:
			s.reportPending = false
			s.report(o)
		case timerCheckpointOutput:
			s.outputBarrierTimeout(o, b.Timer.Arg)
		case timerProcessingTime:
			s.procTimer = math.MinInt64
			if s.op != nil {
				s.emitResults(o, s.op.AdvanceProcessingTime(s.procTimeMs(o)))
			}
		}
	case *messages.Envelope_TriggerCheckpoint:
		s.triggerCheckpoint(o, b.TriggerCheckpoint)
	case *messages.Envelope_NotifyCheckpointComplete:
		s.checkpointComplete(o, b.NotifyCheckpointComplete.CheckpointId)
	case *messages.Envelope_NotifyCheckpointAborted:
		s.checkpointAborted(o, b.NotifyCheckpointAborted.CheckpointId)
	case *messages.Envelope_AddSplits:
		s.addSplits(o, b.AddSplits)
	case *messages.Envelope_NoMoreSplits:
		s.src.NoMoreSplits()
	case *messages.Envelope_WatermarkAlignmentEvent:
		s.alignWatermarks(o, b.WatermarkAlignmentEvent.MaxWatermark)
	case *messages.Envelope_FetchResponse:
		s.src.OnFetchResponse(b.FetchResponse)
	case *messages.Envelope_PartitionRequest:
		m := b.PartitionRequest
		if m.Local {
			s.rp.OnLocalRequest(int(m.SubpartitionIndex), m.ReceiverId)
		} else {
			s.rp.OnPartitionRequest(int(m.SubpartitionIndex), m.ReceiverId, int(m.Credit))
		}
	case *messages.Envelope_LocalBufferRecycled:
		s.rp.OnLocalRecycle(int(b.LocalBufferRecycled.SubpartitionIndex), int(b.LocalBufferRecycled.Count))
	case *messages.Envelope_ResumeConsumption:
		s.rp.OnResumeConsumption(int(b.ResumeConsumption.SubpartitionIndex))
	case *messages.Envelope_CancelTask:
		s.cancel(o)
		return
	case *messages.Envelope_FailTask:
		s.failExternally(o, b.FailTask.Cause)
		return
	case *messages.Envelope_ConnectionLost:
		return // RPC, or the producer's end of a data connection (network.go)
	case *messages.Envelope_AddCredit:
		m := b.AddCredit
		if !s.rp.OnAddCredit(int(m.SubpartitionIndex), int(m.Credit)) {
			o.Invariant("credit_positive", "%s got AddCredit %d from %s", o.Name(), m.Credit, env.From)
			return
		}
	case *messages.Envelope_RequestFloatingBuffers:
		m := b.RequestFloatingBuffers
		s.grantFloating(o, s.gate.RequestFloating(int(m.ChannelIndex), int(m.Count)))
	case *messages.Envelope_ReturnFloatingBuffers:
		s.grantFloating(o, s.gate.ReturnFloating(int(b.ReturnFloatingBuffers.Count)))
	case *messages.Envelope_ChannelBuffer:
		m := b.ChannelBuffer
		s.gate.Count(m.Buffer)
		if m.Buffer.IsEvent && m.Buffer.Kinds[0] == exchange.KindBarrier {
			if m.Buffer.Unaligned {
				// a priority event: processed at once, overtaking the
				// buffers queued in its channel
				s.spend(o, s.onChannelBarrier(o, int(m.ChannelIndex), m.Buffer, false))
				break
			}
			s.ck.barrierQueued[m.ChannelIndex]++
		} else if m.Buffer.IsEvent && m.Buffer.Kinds[0] == exchange.KindEndOfPartition {
			s.endOfPartitionArrives(o, int(m.ChannelIndex))
		} else if !m.Buffer.IsEvent {
			s.onDataArrived(int(m.ChannelIndex), m.Buffer)
		}
		s.gate.Enqueue(int(m.ChannelIndex), m.Buffer)
		if m.Buffer.IsEvent && m.Buffer.Kinds[0] == exchange.KindBarrier {
			s.announceBarrier(o, int(m.ChannelIndex), m.Buffer)
		}
	case *messages.Envelope_EndOfRun:
		if !s.finalLogged {
			s.metrics(o)
		}
		s.logFinal(o)
		return
	}
	s.work(o)
	s.flushSends(o, 0)
}

// notRunning handles an envelope before the task is RUNNING: DEPLOYING
// until Start, then INITIALIZING for sim.task.init-time (Task.doRun,
// StreamTask.restore). A cancel or failure ends it there; everything else
// waits for RUNNING, in arrival order.
func (s *Subtask) notRunning(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		if s.status == 0 {
			s.setState(o, status.Initializing, "")
			o.Timer(vt.FromDuration(s.cfg.TaskInitTime), timerInitialized, 0)
		}
	case *messages.Envelope_Timer:
		if b.Timer.Kind != timerInitialized || s.status != status.Initializing {
			return
		}
		s.running = true
		s.start(o)
		deferred := s.deferred
		s.deferred = nil
		for _, e := range deferred {
			s.Step(o, e)
		}
	case *messages.Envelope_CancelTask:
		s.setState(o, status.Canceled, "")
	case *messages.Envelope_FailTask:
		s.setState(o, status.Failed, b.FailTask.Cause)
	case *messages.Envelope_ConnectionLost:
	case *messages.Envelope_EndOfRun:
		s.logFinal(o)
	default:
		if s.status == 0 || s.status == status.Initializing {
			s.deferred = append(s.deferred, env)
		}
	}
}

func (s *Subtask) start(o *kernel.Out) {
	d := s.d
	if rp := d.ResultPartition; rp != nil {
		s.consumers = rp.Consumers
		s.hashOut = rp.Partitioner == jobgraph.PartitionHash
		s.rp = exchange.NewResultPartition(len(rp.Consumers),
			exchange.PoolSize(len(rp.Consumers), s.cfg.BuffersPerChannel, s.cfg.FloatingBuffersPerGate),
			s.cfg.RecordsPerBuffer(), s.cfg.RecordBytes)
		s.rp.SetMaxBuffersPerChannel(s.cfg.MaxBuffersPerChannel)
		s.rp.SetMaxOverdraftBuffers(s.cfg.MaxOverdraftBuffersPerGate)
		if !s.hashOut {
			// every edge but keyBy's leads to an operator that needs the
			// record itself: ParseOrder or Filter the Kafka record's value,
			// an unchained sink the rendered result
			s.rp.CarryPayloads()
		}
		if rp.Partitioner == jobgraph.PartitionRebalance {
			// RebalancePartitioner.setup starts at a random channel
			// (ThreadLocalRandom); here the subtask's generator, seeded
			// from (sim.seed, its name), draws it
			s.rrNext = o.Rand().IntN(len(rp.Consumers))
		}
		if s.cfg.BufferTimeout > 0 {
			o.Timer(vt.FromDuration(s.cfg.BufferTimeout), timerFlush, 0)
		}
	}
	if s.isSource {
		src, err := source.NewReader(source.ReaderConfig{Topic: s.cfg.SourceTopic, MaxPollRecords: s.cfg.MaxPollRecords,
			OutOfOrdernessMs: s.cfg.OutOfOrderness.Milliseconds(), IdleTimeoutMs: s.cfg.Idleness.Milliseconds(),
			EventTime: s.cfg.TimeCharacteristic != config.ProcessingTime})
		if err != nil {
			o.Invariant("watermark_config", "%v", err)
			return
		}
		s.src = src
		s.sentWm = math.MinInt64
		o.Send(jobgraph.JobManagerName, vt.FromDuration(s.cfg.RPCLatency()), &messages.Envelope_ReaderRegistration{ReaderRegistration: &messages.ReaderRegistration{
			SubtaskIndex: int32(s.index), Location: s.tm}})
		if s.cfg.TimeCharacteristic != config.ProcessingTime && s.cfg.AutoWatermarkInterval > 0 {
			o.Timer(vt.FromDuration(s.cfg.AutoWatermarkInterval), timerWatermark, 0)
		}
		if s.aligned() {
			o.Timer(s.alignmentInterval(), timerAlignment, 0)
		}
	} else {
		local := make([]bool, len(d.InputGate.Producers))
		for i, at := range d.InputGate.ProducerLocations {
			local[i] = at == s.tm
		}
		s.gate = exchange.NewInputGate(len(d.InputGate.Producers), s.cfg.FloatingBuffersPerGate, local)
		s.valve, _ = watermark.NewStatusWatermarkValve(s.gate.NumChannels())
		s.lastInputWm = math.MinInt64
		if d.JobVertex == jobgraph.VertexKeyed && s.cfg.Operator == config.OperatorProcess {
			fn, err := process.New(process.Config{TTLMs: s.cfg.StateTTL.Milliseconds()})
			if err != nil {
				o.Invariant("process_config", "%v", err)
				return
			}
			s.proc = fn
		} else if d.JobVertex == jobgraph.VertexKeyed {
			op, err := window.NewOperator(WindowConfig(s.cfg))
			if err != nil {
				o.Invariant("window_config", "%v", err)
				return
			}
			s.op = op
		}
	}
	s.mb = NewMailbox(o.Now())
	o.Timer(1_000_000, timerMetrics, 0)
	s.initCheckpointing(o)
	s.setState(o, status.Running, "")
}

func (s *Subtask) setState(o *kernel.Out, state status.Execution, reason string) {
	if s.status == state {
		return
	}
	s.status = state
	o.Send(s.tm, 0, &messages.Envelope_TaskExecutionState{TaskExecutionState: &messages.TaskExecutionState{
		ExecutionId: o.Name(), State: state.String(), Reason: reason}})
}
