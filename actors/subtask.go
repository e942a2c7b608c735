package actors

import (
	"math"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/netty"
	"github.com/flinksim/flinksim/sim/process"
	"github.com/flinksim/flinksim/sim/vt"
	"github.com/flinksim/flinksim/sim/watermark"
	"github.com/flinksim/flinksim/sim/window"
)

// Subtask is one parallel instance of a JobVertex: a StreamTask running its
// operator chain on one thread (the mailbox). Its head is either the Kafka
// source reader (SourceOperator with KafkaSourceReader) or an InputGate
// with one InputChannel per producer; its tail writes into a ResultPartition
// or, with the chained sink, to the sink topic.
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
	status string

	// output
	rp        *exchange.ResultPartition
	consumers []string
	hashOut   bool
	rrNext    int
	sends     []exchange.Send
	lastSend  []vt.Time // per subpartition: delivery time of the last message sent, to keep each channel FIFO

	// source head
	isSource     bool
	splits       []*splitState
	mux          *watermark.SplitMultiplexer
	fetching     bool
	fetchID      int64
	queue        []queuedRecord
	queueHead    int
	noMoreSplits bool
	gotSplits    bool
	filter       *filter.Predicate
	needValue    bool  // the aggregate reads a field of the record
	sentWm       int64 // last watermark broadcast downstream
	sentIdle     bool  // last watermark status broadcast downstream

	// gate head
	floatingFree int            // free floating buffers of the InputGate's pool
	floatingWait []floatingWant // channels waiting for floating buffers, FIFO
	buffersIn    int64          // numBuffersIn
	bytesIn      int64          // numBytesIn
	channels     []*gateChannel
	ready        []int // channel indexes with buffers, in arrival order
	valve        *watermark.StatusWatermarkValve
	op           *window.Operator
	proc         *process.Function // job.operator=process
	lastInputWm  int64             // the operator's last input watermark (ms)
	sinkOut      []*messages.KafkaRecord
	hasSink      bool
	procTimer    int64 // processing-time timer scheduled (ms), or math.MinInt64

	// scheduling and metrics
	busyUntil     vt.Time // end of the current slice of work
	wakePending   bool    // a continue timer is scheduled for busyUntil
	blocked       bool
	blockedSince  vt.Time
	finishedAll   bool
	reported      bool
	reportPending bool // report waits for the end of a slice or of the broker requests
	finalLogged   bool
	m             taskMetrics
	ck            subtaskCheckpoint // subtask_checkpoint.go
}

type splitState struct {
	partition int32
	id        string
	offset    int64 // next offset to read
	stop      int64 // -1: unbounded
	finished  bool
	paused    bool // watermark alignment paused fetching it
}

type queuedRecord struct {
	split *splitState
	rec   *messages.KafkaRecord
}

type floatingWant struct{ channel, count int }

type gateChannel struct {
	buffers   []*messages.Buffer
	ended     bool // EndOfPartition
	dataEnded bool // EndOfData (FLIP-147) or EndOfPartition
}

type taskMetrics struct {
	recordsIn, recordsOut, lateDropped, windowsFired, resultsWritten int64
	busyAcc, bpAcc, busyCarry                                        vt.Time
	lastTick                                                         vt.Time
	lastBusy, lastBP, lastIdle                                       int64 // the last tick's ms per second, for the view
}

// NewSubtask returns the subtask deployed by d on task manager tm.
func NewSubtask(cfg *config.Config, d *messages.SubmitTask, tm string) *Subtask {
	s := &Subtask{name: d.ExecutionId, cfg: cfg, d: d, tm: tm, index: int(d.SubtaskIndex), maxP: int(d.MaxParallelism),
		isSource: d.JobVertex == jobgraph.VertexSource, procTimer: math.MinInt64}
	for _, op := range d.Chain {
		if len(op) > 5 && op[:5] == "Sink:" {
			s.hasSink = true
		}
	}
	return s
}

// Receive implements Component.
func (s *Subtask) Receive(o *Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		s.start(o)
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerContinue:
			s.wakePending = false
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
			wm, ok := s.mux.ReportedWatermark()
			if ok {
				o.Send(JobManagerName, rpcLatency(s.cfg), &messages.Envelope_ReportedWatermarkEvent{
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
		s.noMoreSplits = true
		s.mux.NoMoreSplits()
	case *messages.Envelope_WatermarkAlignmentEvent:
		s.alignWatermarks(o, b.WatermarkAlignmentEvent.MaxWatermark)
	case *messages.Envelope_FetchResponse:
		s.fetched(o, b.FetchResponse)
	case *messages.Envelope_PartitionRequest:
		m := b.PartitionRequest
		s.rp.OnPartitionRequest(int(m.SubpartitionIndex), m.ReceiverId, int(m.Credit))
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
		s.floatingWait = append(s.floatingWait, floatingWant{int(m.ChannelIndex), int(m.Count)})
		s.grantFloating(o)
	case *messages.Envelope_ReturnFloatingBuffers:
		s.floatingFree += int(b.ReturnFloatingBuffers.Count)
		s.grantFloating(o)
	case *messages.Envelope_ChannelBuffer:
		m := b.ChannelBuffer
		if !m.Buffer.IsEvent {
			s.buffersIn++
			s.bytesIn += int64(m.Buffer.SizeBytes)
		}
		ch := s.channels[m.ChannelIndex]
		if m.Buffer.IsEvent && m.Buffer.Kinds[0] == exchange.KindBarrier {
			if m.Buffer.Unaligned {
				// a priority event: processed at once, overtaking the
				// buffers queued in its channel
				s.spend(o, s.onChannelBarrier(o, int(m.ChannelIndex), m.Buffer))
				break
			}
			s.ck.barrierQueued[m.ChannelIndex]++
		} else if m.Buffer.IsEvent && m.Buffer.Kinds[0] == exchange.KindEndOfPartition {
			s.endOfPartitionArrives(o, int(m.ChannelIndex))
		} else if !m.Buffer.IsEvent {
			s.onDataArrived(int(m.ChannelIndex), m.Buffer)
		}
		if len(ch.buffers) == 0 {
			s.ready = append(s.ready, int(m.ChannelIndex))
		}
		ch.buffers = append(ch.buffers, m.Buffer)
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

func (s *Subtask) start(o *Out) {
	d := s.d
	if rp := d.ResultPartition; rp != nil {
		s.consumers = rp.Consumers
		s.hashOut = rp.Partitioner == jobgraph.PartitionHash
		s.rp = exchange.NewResultPartition(len(rp.Consumers),
			exchange.PoolSize(len(rp.Consumers), s.cfg.BuffersPerChannel, s.cfg.FloatingBuffersPerGate),
			s.cfg.BufferRecords, s.cfg.RecordBytes)
		if s.cfg.BufferTimeout > 0 {
			o.Timer(vt.FromDuration(s.cfg.BufferTimeout), timerFlush, 0)
		}
	}
	if s.isSource {
		mux, err := watermark.NewSplitMultiplexer(watermark.SplitMultiplexerConfig{
			OutOfOrdernessMs: s.cfg.OutOfOrderness.Milliseconds(), IdleTimeoutMs: s.cfg.Idleness.Milliseconds()})
		if err != nil {
			o.Invariant("watermark_config", "%v", err)
			return
		}
		s.mux = mux
		s.needValue = s.cfg.Operator == "window" && s.cfg.Aggregate != "count"
		s.sentWm = math.MinInt64
		if s.cfg.Filter != "" {
			s.filter, _ = filter.Parse(s.cfg.Filter) // validated with the settings
		}
		o.Send(JobManagerName, rpcLatency(s.cfg), &messages.Envelope_ReaderRegistration{ReaderRegistration: &messages.ReaderRegistration{
			SubtaskIndex: int32(s.index), Location: s.tm}})
		if s.cfg.TimeCharacteristic != "processing-time" && s.cfg.AutoWatermarkInterval > 0 {
			o.Timer(vt.FromDuration(s.cfg.AutoWatermarkInterval), timerWatermark, 0)
		}
		if s.aligned() {
			o.Timer(s.alignmentInterval(), timerAlignment, 0)
		}
	} else {
		s.channels = make([]*gateChannel, len(d.InputGate.Producers))
		for i := range s.channels {
			s.channels[i] = &gateChannel{}
		}
		s.valve, _ = watermark.NewStatusWatermarkValve(len(s.channels))
		s.floatingFree = s.cfg.FloatingBuffersPerGate
		s.lastInputWm = math.MinInt64
		if d.JobVertex == jobgraph.VertexKeyed && s.cfg.Operator == "process" {
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
	s.m.lastTick = o.Now()
	o.Timer(1_000_000, timerMetrics, 0)
	s.setState(o, "INITIALIZING", "")
	s.initCheckpointing(o)
	s.setState(o, "RUNNING", "")
}

// WindowConfig maps the settings to the window operator's configuration.
func WindowConfig(c *config.Config) window.Config {
	wc := window.Config{Size: c.WindowSize.Milliseconds(), Slide: c.WindowSlide.Milliseconds(), Gap: c.WindowGap.Milliseconds(),
		Offset: c.WindowOffset.Milliseconds(), AllowedLateness: c.AllowedLateness.Milliseconds(),
		SideOutputLateData: c.SideOutputLateData}
	switch c.WindowType {
	case "sliding":
		wc.Assigner = window.Sliding
	case "session":
		wc.Assigner = window.Session
	default:
		wc.Assigner = window.Tumbling
	}
	if c.TimeCharacteristic == "processing-time" {
		wc.TimeCharacteristic = window.ProcessingTime
	} else {
		wc.TimeCharacteristic = window.EventTime
	}
	switch c.Aggregate {
	case "sum":
		wc.Aggregate = window.Sum
	case "min":
		wc.Aggregate = window.Min
	case "max":
		wc.Aggregate = window.Max
	case "avg":
		wc.Aggregate = window.Avg
	default:
		wc.Aggregate = window.Count
	}
	return wc
}

func (s *Subtask) setState(o *Out, state, reason string) {
	if s.status == state {
		return
	}
	s.status = state
	o.Send(s.tm, 0, &messages.Envelope_TaskExecutionState{TaskExecutionState: &messages.TaskExecutionState{
		ExecutionId: o.Name(), State: state, Reason: reason}})
}

// procTimeMs is the processing-time clock in ms (virtual time after the
// generator's epoch).
func (s *Subtask) procTimeMs(o *Out) int64 { return GeneratorEpochMillis + vt.Millis(o.Now()) }

// ---- source reader -------------------------------------------------------

func (s *Subtask) addSplits(o *Out, m *messages.AddSplits) {
	s.gotSplits = true
	for _, sp := range m.Splits {
		st := &splitState{partition: sp.Partition, id: sp.Topic + "-" + strconv.Itoa(int(sp.Partition)),
			offset: sp.StartingOffset, stop: sp.StoppingOffset}
		s.splits = append(s.splits, st)
		s.mux.AddSplit(st.id)
		if st.stop >= 0 && st.offset >= st.stop {
			s.finishSplit(o, st)
		}
	}
	s.fetch(o)
}

// aligned reports whether the source takes part in watermark alignment.
func (s *Subtask) aligned() bool {
	return s.cfg.AlignmentGroup != "" && s.cfg.TimeCharacteristic != "processing-time"
}

func (s *Subtask) alignmentInterval() vt.Time {
	return vt.FromDuration(s.cfg.AlignmentUpdateInterval)
}

// alignWatermarks applies the coordinator's max allowed watermark
// (SourceOperator.handleOperatorEvent(WatermarkAlignmentEvent)): splits
// whose watermark is ahead of it are paused, paused ones that fell back
// behind it resume; a reader with a single split waits as a whole.
func (s *Subtask) alignWatermarks(o *Out, maxAllowed int64) {
	pause, resume := s.mux.OnWatermarkAlignment(maxAllowed)
	for _, id := range pause {
		if st := s.split(id); st != nil {
			st.paused = true
			wm, _, _ := s.mux.SplitWatermark(id)
			o.Log(eventlog.KindSplitPaused, messages.Str("split", id), messages.Int("split_watermark", wm),
				messages.Int("max_allowed_watermark", maxAllowed))
		}
	}
	for _, id := range resume {
		if st := s.split(id); st != nil && st.paused {
			st.paused = false
			wm, _, _ := s.mux.SplitWatermark(id)
			o.Log(eventlog.KindSplitResumed, messages.Str("split", id), messages.Int("split_watermark", wm),
				messages.Int("max_allowed_watermark", maxAllowed))
		}
	}
	s.fetch(o)
}

func (s *Subtask) split(id string) *splitState {
	for _, st := range s.splits {
		if st.id == id {
			return st
		}
	}
	return nil
}

func (s *Subtask) finishSplit(o *Out, st *splitState) {
	if st.finished {
		return
	}
	st.finished = true
	s.mux.RemoveSplit(st.id)
	o.Log(eventlog.KindSplitFinished, messages.Int("partition", int64(st.partition)), messages.Int("offset", st.offset))
}

// fetch sends one Fetch for the active splits when none is outstanding and
// fewer than max.poll.records records wait.
func (s *Subtask) fetch(o *Out) {
	if s.fetching || s.ck.stopping || len(s.queue)-s.queueHead >= s.cfg.MaxPollRecords {
		return
	}
	req := &messages.Fetch{Topic: s.cfg.SourceTopic, MaxRecords: int32(s.cfg.MaxPollRecords)}
	for _, st := range s.splits {
		if !st.finished && !st.paused {
			req.Partitions = append(req.Partitions, &messages.FetchPartition{Partition: st.partition, Offset: st.fetchOffset(s)})
		}
	}
	if len(req.Partitions) == 0 {
		return
	}
	s.fetchID++
	req.RequestId = s.fetchID
	s.fetching = true
	o.Send(KafkaName, rpcLatency(s.cfg), &messages.Envelope_Fetch{Fetch: req})
}

// fetchOffset is the next offset to fetch: after what is read and queued.
func (st *splitState) fetchOffset(s *Subtask) int64 {
	off := st.offset
	for i := len(s.queue) - 1; i >= s.queueHead; i-- {
		if s.queue[i].split == st {
			return s.queue[i].rec.Offset + 1
		}
	}
	return off
}

func (s *Subtask) fetched(o *Out, m *messages.FetchResponse) {
	s.fetching = false
	if s.queueHead > 0 && s.queueHead == len(s.queue) {
		s.queue, s.queueHead = s.queue[:0], 0
	}
	for _, pr := range m.Partitions {
		var st *splitState
		for _, x := range s.splits {
			if x.partition == pr.Partition {
				st = x
			}
		}
		if st == nil || st.finished {
			continue
		}
		for _, r := range pr.Records {
			if st.stop >= 0 && r.Offset >= st.stop {
				break
			}
			s.queue = append(s.queue, queuedRecord{split: st, rec: r})
		}
	}
}

// sourceSlice processes up to sim.buffer.records queued records.
func (s *Subtask) sourceSlice(o *Out) (cost vt.Time) {
	perRecord := vt.FromDuration(s.cfg.CostParse)
	if s.filter != nil {
		perRecord += vt.FromDuration(s.cfg.CostFilter)
	}
	eventTime := s.cfg.TimeCharacteristic != "processing-time"
	if s.aligned() && s.mux.WaitingForAlignment() {
		return 0 // a single-split reader ahead of the group waits
	}
	if s.ck.stopping || s.ck.awaitFinal {
		return 0 // stop-with-savepoint: the source reads no more
	}
	for n := 0; n < s.cfg.BufferRecords && s.queueHead < len(s.queue); n++ {
		q := s.queue[s.queueHead]
		r := q.rec
		sub := s.target(r.Key)
		if !s.rp.CanWrite(sub) {
			s.block(o)
			break
		}
		s.queueHead++
		cost += perRecord
		s.m.recordsIn++
		q.split.offset = r.Offset + 1
		nowMs := vt.Millis(o.Now() + cost)
		if eventTime {
			s.mux.OnEvent(q.split.id, r.Timestamp, nowMs)
		}
		if s.filter == nil || s.filter.Match(r.Key, r.Value) {
			value := 1.0 // count needs no field
			if s.needValue {
				value, _ = events.NumericField(r.Value, s.cfg.AggregateField)
			}
			s.rp.AddRecord(sub, r.Key, r.Timestamp, value)
			s.m.recordsOut++
		}
		if q.split.stop >= 0 && q.split.offset >= q.split.stop {
			s.finishSplit(o, q.split)
		}
	}
	if s.queueHead == len(s.queue) {
		s.queue, s.queueHead = s.queue[:0], 0
	}
	return cost
}

// target is the subpartition of a record: its key group's operator for a
// keyBy (KeyGroupStreamPartitioner), otherwise round robin.
func (s *Subtask) target(key string) int {
	if s.hashOut {
		return keygroup.OperatorIndexForKeyGroup(s.maxP, len(s.consumers), int(keyGroupOf(key, s.maxP)))
	}
	if len(s.consumers) == 1 {
		return 0
	}
	s.rrNext = (s.rrNext + 1) % len(s.consumers)
	return s.rrNext
}

func (s *Subtask) block(o *Out) {
	if !s.blocked {
		s.blocked = true
		s.blockedSince = o.Now()
	}
}

func (s *Subtask) unblock(o *Out) {
	if s.blocked {
		s.blocked = false
		s.m.bpAcc += o.Now() - s.blockedSince
	}
}

// periodicWatermark runs the reader's watermark generators
// (pipeline.auto-watermark-interval) and broadcasts a changed watermark or
// watermark status downstream.
func (s *Subtask) periodicWatermark(o *Out) {
	if s.mux == nil || s.finishedAll || s.ck.awaitFinal || s.ck.stopping {
		return // stop-with-savepoint (no drain): no watermark after the savepoint
	}
	wm, idle, changed := s.mux.OnPeriodicEmit(vt.Millis(o.Now()))
	if !changed {
		return
	}
	s.broadcastStatus(o, idle)
	if !idle && wm > s.sentWm {
		s.sentWm = wm
		s.rp.Broadcast(exchange.KindWatermark, wm)
	}
}

// broadcastStatus sends a WatermarkStatus change downstream.
func (s *Subtask) broadcastStatus(o *Out, idle bool) {
	if idle == s.sentIdle {
		return
	}
	s.sentIdle = idle
	kind, name := exchange.KindStatusActive, "ACTIVE"
	if idle {
		kind, name = exchange.KindStatusIdle, "IDLE"
	}
	s.rp.Broadcast(kind, 0)
	o.Log(eventlog.KindWatermarkStatus, messages.Str("status", name))
}

// ---- gate head -----------------------------------------------------------

// grantFloating hands free floating buffers of the gate's pool to waiting
// channels in the order they asked (LocalBufferPool with BufferListeners).
func (s *Subtask) grantFloating(o *Out) {
	for len(s.floatingWait) > 0 && s.floatingFree > 0 {
		w := &s.floatingWait[0]
		n := min(w.count, s.floatingFree)
		s.floatingFree -= n
		w.count -= n
		o.Send(jobgraph.ChannelName(o.Name(), w.channel), 0, &messages.Envelope_FloatingBuffers{FloatingBuffers: &messages.FloatingBuffers{Count: int32(n)}})
		if w.count == 0 {
			s.floatingWait = s.floatingWait[1:]
		}
	}
}

// inPoolUsage is the share of the gate's buffers (exclusive and floating)
// holding data not yet processed (Flink's inPoolUsage).
func (s *Subtask) inPoolUsage() (usage float64, queued int64, lengths []int64) {
	lengths = make([]int64, len(s.channels))
	for i, ch := range s.channels {
		for _, b := range ch.buffers {
			if !b.IsEvent {
				lengths[i]++
			}
		}
		queued += lengths[i]
	}
	total := len(s.channels)*s.cfg.BuffersPerChannel + s.cfg.FloatingBuffersPerGate
	if total > 0 {
		usage = float64(queued) / float64(total)
	}
	return usage, queued, lengths
}

// gateSlice processes the next buffer of the InputGate.
func (s *Subtask) gateSlice(o *Out) (cost vt.Time) {
	if len(s.ready) == 0 {
		return 0
	}
	if s.rp != nil && s.rp.BuffersInUse() >= s.rp.PoolCapacity() {
		s.block(o)
		return 0
	}
	// the first channel with data that no aligned barrier blocks
	pick := -1
	for k, c := range s.ready {
		if !s.ck.blocked[c] {
			pick = k
			break
		}
	}
	if pick < 0 {
		return 0
	}
	ci := s.ready[pick]
	ch := s.channels[ci]
	buf := ch.buffers[0]
	ch.buffers[0] = nil
	ch.buffers = ch.buffers[1:]
	s.ready = append(s.ready[:pick], s.ready[pick+1:]...)
	if len(ch.buffers) > 0 {
		s.ready = append(s.ready, ci)
	}
	perRecord := vt.FromDuration(s.cfg.CostWindow)
	if s.cfg.StateBackend == "rocksdb" {
		perRecord += vt.FromDuration(s.cfg.CostRocksDB) // one keyed-state access per record
	}
	if s.op == nil && s.proc == nil {
		perRecord = vt.FromDuration(s.cfg.CostSink)
	}
	for i, kind := range buf.Kinds {
		switch kind {
		case exchange.KindRecord:
			cost += perRecord + s.processRecord(o, buf.Keys[i], buf.Timestamps[i], buf.Values[i])
		case exchange.KindWatermark:
			if wm, changed := s.valve.InputWatermark(ci, buf.Timestamps[i]); changed {
				cost += s.advanceWatermark(o, wm)
			}
		case exchange.KindStatusIdle, exchange.KindStatusActive:
			wm, wmChanged, idle, statusChanged := s.valve.InputWatermarkStatus(ci, kind == exchange.KindStatusIdle)
			if statusChanged {
				st := "ACTIVE"
				if idle {
					st = "IDLE"
				}
				o.Log(eventlog.KindWatermarkStatus, messages.Str("status", st))
				if s.rp != nil {
					k := exchange.KindStatusActive
					if idle {
						k = exchange.KindStatusIdle
					}
					s.rp.Broadcast(k, 0)
				}
			}
			if wmChanged {
				cost += s.advanceWatermark(o, wm)
			}
		case exchange.KindEndOfData:
			ch.dataEnded = true
		case exchange.KindBarrier:
			s.ck.barrierQueued[ci]--
			if !buf.Unaligned && !buf.Inserted {
				s.ck.resume[ci] = true // its producer blocked the subpartition after it
			}
			cost += s.onChannelBarrier(o, ci, buf)
		case exchange.KindEndOfPartition:
			ch.ended, ch.dataEnded = true, true
			o.Log(eventlog.KindChannelFinished, messages.Int("channel", int64(ci)), messages.Str("producer", s.d.InputGate.Producers[ci]))
			cost += s.applyBarrierAction(o, s.ck.handler.OnEndOfPartition(ci, vt.Millis(o.Now())), ci, true)
		}
	}
	if !buf.IsEvent {
		o.Send(jobgraph.ChannelName(o.Name(), ci), cost, &messages.Envelope_RecycleBuffers{RecycleBuffers: &messages.RecycleBuffers{Count: 1}})
	}
	return cost
}

// processRecord hands one record to the operator (or the unchained sink)
// and returns the cost of what it emitted.
func (s *Subtask) processRecord(o *Out, key string, ts int64, value float64) vt.Time {
	s.m.recordsIn++
	switch {
	case s.op != nil:
		s.touch(key)
		now := s.procTimeMs(o)
		var cost vt.Time
		if t, ok := s.op.NextProcessingTimeTimer(); ok && t <= now {
			cost += s.emitResults(o, s.op.AdvanceProcessingTime(now))
		}
		return cost + s.emitResults(o, s.op.ProcessElement(key, ts, value, now))
	case s.proc != nil:
		s.touch(key)
		return s.processElement(o, key, ts)
	default:
		s.sinkWrite(o, key, ts, value)
		return 0
	}
}

// replaySlice processes up to sim.buffer.records records of restored input
// channel state, before any new input.
func (s *Subtask) replaySlice(o *Out) (cost vt.Time) {
	perRecord := vt.FromDuration(s.cfg.CostWindow)
	if s.op == nil && s.proc == nil {
		perRecord = vt.FromDuration(s.cfg.CostSink)
	}
	n := min(len(s.ck.replayIn), s.cfg.BufferRecords)
	for _, r := range s.ck.replayIn[:n] {
		cost += perRecord + s.processRecord(o, r.Key, r.Timestamp, r.Value)
	}
	s.ck.replayIn = s.ck.replayIn[n:]
	return cost
}

// processElement runs the keyed process function on one record and sends
// the running count to the sink; it returns the sink's cost.
func (s *Subtask) processElement(o *Out, key string, ts int64) vt.Time {
	out := s.proc.ProcessElement(key, ts, s.procTimeMs(o))
	v := make([]byte, 0, 64)
	v = append(v, `{"key":`...)
	v = appendJSONString(v, key)
	v = append(v, `,"value":`...)
	v = strconv.AppendInt(v, out.Count, 10)
	v = append(v, `,"timestamp":`...)
	v = strconv.AppendInt(v, ts, 10)
	v = append(v, '}')
	rec := &messages.KafkaRecord{Key: key, Timestamp: ts, Value: v}
	if s.hasSink {
		s.sinkOut = append(s.sinkOut, rec)
		s.m.resultsWritten++
		return vt.FromDuration(s.cfg.CostSink)
	}
	s.rp.AddRecord(s.target(key), key, ts, float64(out.Count))
	s.m.recordsOut++
	return 0
}

// advanceWatermark hands a new input watermark to the operator and forwards
// it downstream; it returns the cost of the firings.
func (s *Subtask) advanceWatermark(o *Out, wm int64) vt.Time {
	if wm < s.lastInputWm {
		o.Invariant("watermark_monotonic", "%s: input watermark went back from %d to %d", o.Name(), s.lastInputWm, wm)
		return 0
	}
	s.lastInputWm = wm
	var cost vt.Time
	if s.op != nil {
		cost = s.emitResults(o, s.op.AdvanceWatermark(wm))
	}
	if s.rp != nil {
		s.rp.Broadcast(exchange.KindWatermark, wm)
	}
	return cost
}

// emitResults sends window firings to the sink (chained) or downstream, logs
// them, counts late records, and returns the sink's cost.
func (s *Subtask) emitResults(o *Out, out window.Output) vt.Time {
	var cost vt.Time
	for _, r := range out.Results {
		s.m.windowsFired++
		o.Log(eventlog.KindWindowFired, messages.Str("key", r.Key), messages.Int("window_start", r.Window.Start),
			messages.Int("window_end", r.Window.End), messages.Float("value", r.Value), messages.Int("firing", int64(r.Firing)),
			messages.Int("watermark", s.op.CurrentWatermark()))
		if s.hasSink {
			cost += vt.FromDuration(s.cfg.CostSink)
			s.sinkOut = append(s.sinkOut, resultRecord(r, s.index))
			s.m.resultsWritten++
		} else if s.rp != nil {
			s.rp.AddRecord(s.target(r.Key), r.Key, r.Window.MaxTimestamp(), r.Value)
			s.m.recordsOut++
		}
	}
	for _, l := range out.Late {
		o.Log(eventlog.KindLateSideOutput, messages.Str("key", l.Key), messages.Int("timestamp", l.Timestamp))
	}
	if d := s.op.NumLateRecordsDropped(); d != s.m.lateDropped {
		s.m.lateDropped = d
	}
	if t, ok := s.op.NextProcessingTimeTimer(); ok && t != s.procTimer {
		s.procTimer = t
		delay := vt.FromMillis(t-GeneratorEpochMillis) - o.Now()
		o.Timer(max(0, delay), timerProcessingTime, t)
	}
	return cost
}

// resultRecord renders one firing as the sink's JSON record.
func resultRecord(r window.Result, subtask int) *messages.KafkaRecord {
	v := make([]byte, 0, 96)
	v = append(v, `{"key":`...)
	v = appendJSONString(v, r.Key)
	v = append(v, `,"window_start":`...)
	v = strconv.AppendInt(v, r.Window.Start, 10)
	v = append(v, `,"window_end":`...)
	v = strconv.AppendInt(v, r.Window.End, 10)
	v = append(v, `,"value":`...)
	v = strconv.AppendFloat(v, r.Value, 'f', -1, 64)
	v = append(v, `,"firing":`...)
	v = strconv.AppendInt(v, int64(r.Firing), 10)
	v = append(v, '}')
	return &messages.KafkaRecord{Key: r.Key, Timestamp: r.Window.MaxTimestamp(), Value: v}
}

// sinkWrite is an unchained sink subtask writing one record it received.
func (s *Subtask) sinkWrite(o *Out, key string, ts int64, value float64) {
	v := make([]byte, 0, 48)
	v = append(v, `{"key":`...)
	v = appendJSONString(v, key)
	v = append(v, `,"timestamp":`...)
	v = strconv.AppendInt(v, ts, 10)
	v = append(v, `,"value":`...)
	v = strconv.AppendFloat(v, value, 'f', -1, 64)
	v = append(v, '}')
	s.sinkOut = append(s.sinkOut, &messages.KafkaRecord{Key: key, Timestamp: ts, Value: v})
	s.m.resultsWritten++
}

// ---- the mailbox loop ----------------------------------------------------

// work runs the next slice when the task is not busy, then sends what the
// slice produced once it is done.
func (s *Subtask) work(o *Out) {
	if s.status != "RUNNING" {
		return
	}
	if o.Now() < s.busyUntil {
		// still busy with the last slice: come back when it ends
		if !s.wakePending {
			s.wakePending = true
			o.Timer(s.busyUntil-o.Now(), timerContinue, 0)
		}
		return
	}
	var cost vt.Time
	if s.isSource {
		if s.rp.BuffersInUse() < s.rp.PoolCapacity() || s.queueHead == len(s.queue) {
			s.unblock(o)
		}
		cost = s.sourceSlice(o)
		s.fetch(o)
		s.maybeFinishSource(o)
	} else {
		if s.rp == nil || s.rp.BuffersInUse() < s.rp.PoolCapacity() {
			s.unblock(o)
		}
		// a buffer of only watermarks that change nothing costs no time:
		// take the next one at once
		if len(s.ck.replayIn) > 0 && !s.blocked {
			cost = s.replaySlice(o)
		}
		for cost == 0 && s.gateReady() && !s.blocked {
			cost = s.gateSlice(o)
		}
		s.maybeFinishGate(o)
	}
	if s.rp != nil && s.cfg.BufferTimeout == 0 {
		// execution.buffer-timeout 0: flush after every record (here,
		// after every slice of records)
		s.rp.FlushAll()
	}
	s.flushSink(o, cost)
	if cost > 0 {
		s.m.busyAcc += cost
		s.busyUntil = o.Now() + cost
		if s.hasInput() {
			// more input waits: take it when this slice ends (otherwise
			// the next arrival schedules the wake-up)
			s.wakePending = true
			o.Timer(cost, timerContinue, 0)
		}
		s.flushSends(o, cost)
	}
}

// hasInput reports whether input waits to be processed.
func (s *Subtask) hasInput() bool {
	if s.isSource {
		return s.queueHead < len(s.queue) || (s.noMoreSplits && !s.finishedAll)
	}
	return s.gateReady() || len(s.ck.replayIn) > 0
}

// gateReady reports whether a channel not blocked by an aligned barrier has
// a buffer queued.
func (s *Subtask) gateReady() bool {
	for _, c := range s.ready {
		if !s.ck.blocked[c] {
			return true
		}
	}
	return false
}

// flushSends sends every buffer the partition can send now, delay µs from
// now (the end of the slice that produced them).
func (s *Subtask) flushSends(o *Out, delay vt.Time) {
	if s.rp == nil {
		return
	}
	s.sends = s.rp.Poll(s.sends[:0])
	if s.lastSend == nil {
		s.lastSend = make([]vt.Time, s.rp.NumSubpartitions())
	}
	for _, x := range s.sends {
		// a channel is a FIFO connection: nothing overtakes what was sent
		// on it before
		at := max(o.Now()+delay+s.channelLatency(x.Subpartition), s.lastSend[x.Subpartition])
		s.lastSend[x.Subpartition] = at
		if s.cfg.LogNettyFrames && s.d.ResultPartition.ConsumerLocations[x.Subpartition] != s.tm {
			if x.Response != nil {
				dt := netty.DataTypeDataBuffer
				if x.Response.Buffer.IsEvent {
					dt = netty.DataTypeEventBuffer
				}
				logFrame(o, x.Receiver, netty.BufferResponse{ReceiverID: channelID(x.Receiver), SubpartitionID: int32(x.Subpartition),
					SequenceNumber: x.Response.SequenceNumber, Backlog: x.Response.Backlog, DataType: dt,
					Buffer: make([]byte, x.Response.Buffer.SizeBytes)})
			} else {
				logFrame(o, x.Receiver, netty.BacklogAnnouncement{Backlog: x.Announcement.Backlog, ReceiverID: channelID(x.Receiver)})
			}
		}
		if x.Response != nil {
			o.SendAt(x.Receiver, at, &messages.Envelope_BufferResponse{BufferResponse: x.Response})
		} else {
			o.SendAt(x.Receiver, at, &messages.Envelope_BacklogAnnouncement{BacklogAnnouncement: x.Announcement})
		}
	}
	s.outputBarrierSent(o)
	if s.finishedAll && !s.reported {
		s.report(o)
	}
}

// channelLatency is the latency to the consumer of subpartition i: local
// when it runs on this task manager, the network latency otherwise.
func (s *Subtask) channelLatency(i int) vt.Time {
	if s.d.ResultPartition.ConsumerLocations[i] == s.tm {
		return vt.FromDuration(s.cfg.LocalLatency)
	}
	return vt.FromDuration(s.cfg.NetworkLatency)
}

func (s *Subtask) maybeFinishSource(o *Out) {
	if s.finishedAll || !s.noMoreSplits || !s.gotSplits || s.queueHead < len(s.queue) {
		return
	}
	for _, st := range s.splits {
		if !st.finished {
			return
		}
	}
	if s.ck.awaitFinal {
		return
	}
	// a finished source emits the final watermark Long.MAX_VALUE
	if s.cfg.TimeCharacteristic != "processing-time" {
		if wm, err := s.mux.EndOfInput(); err == nil {
			s.broadcastStatus(o, false)
			s.sentWm = wm
			s.rp.Broadcast(exchange.KindWatermark, wm)
		}
	}
	if s.ck.enabled {
		// FLIP-147: EndOfData, then wait for a checkpoint taken after it
		// to complete before the partition ends
		s.ck.awaitFinal = true
		s.rp.Broadcast(exchange.KindEndOfData, 0)
		s.rp.FlushAll()
		return
	}
	s.finishedAll = true
	s.rp.EndOfPartition()
}

func (s *Subtask) maybeFinishGate(o *Out) {
	if s.finishedAll || s.ck.awaitFinal || len(s.ready) > 0 || len(s.ck.replayIn) > 0 {
		return
	}
	for _, ch := range s.channels {
		if !ch.dataEnded {
			return
		}
	}
	if s.ck.enabled {
		s.ck.awaitFinal = true
		if s.rp != nil {
			s.rp.Broadcast(exchange.KindEndOfData, 0)
			s.rp.FlushAll()
		}
		return
	}
	for _, ch := range s.channels {
		if !ch.ended {
			return
		}
	}
	if s.exactlyOnce() {
		// without checkpoints the sink commits at the end of its input
		// (CommitterOperator.endInput)
		s.flushSink(o, 0)
		s.txnRequest(o, messages.TxnRequest_PRE_COMMIT, s.ck.txn)
		s.txnRequest(o, messages.TxnRequest_COMMIT, s.ck.txn)
	}
	s.finishTask(o)
}

// report marks the task FINISHED once all its output is sent.
//
// A task finishes once its EndOfPartition is queued (Flink's
// ResultPartition.finish; consumers may still be reading), but not while it
// is busy with a slice or its last requests to the broker are on their way,
// so the job cannot reach FINISHED before its output is written.
func (s *Subtask) report(o *Out) {
	if s.reported {
		return
	}
	if at := max(s.busyUntil, s.ck.lastKafka); o.Now() < at {
		if !s.reportPending {
			s.reportPending = true
			o.Timer(at-o.Now(), timerReport, 0)
		}
		return
	}
	s.reported = true
	s.metrics(o)
	s.logFinal(o)
	s.setState(o, "FINISHED", "")
}

func (s *Subtask) logFinal(o *Out) {
	if s.finalLogged {
		return
	}
	s.finalLogged = true
	fields := []*messages.Field{messages.Str("task", o.Name())}
	if s.isSource {
		fields = append(fields, messages.Int("records_read", s.m.recordsIn), messages.Int("records_emitted", s.m.recordsOut))
	} else {
		fields = append(fields, messages.Int("records_in", s.m.recordsIn))
	}
	if s.op != nil {
		// windows still open when the task ends: for processing-time
		// windows on a bounded input Flink quiesces the processing-time
		// service at end of input (FLINK-14231), so they never fire
		var open, held int64
		for _, ks := range s.op.Snapshot() {
			for _, w := range ks.Windows {
				if w.Fired == 0 {
					open++
					held += w.Acc.Count
				}
			}
		}
		fields = append(fields, messages.Int("windows_fired", s.m.windowsFired),
			messages.Int("numLateRecordsDropped", s.op.NumLateRecordsDropped()),
			messages.Int("unfired_windows", open), messages.Int("records_in_unfired_windows", held))
	}
	if s.proc != nil {
		fields = append(fields, messages.Int("keys", int64(s.proc.NumKeys())),
			messages.Int("expired_state_reads", s.proc.ExpiredStateCount()))
	}
	if s.hasSink || (!s.isSource && s.op == nil) {
		fields = append(fields, messages.Int("results_sent", s.m.resultsWritten))
	}
	o.Log(eventlog.KindFinal, fields...)
}

// metrics logs the task's metrics of the last virtual second with Flink's
// metric names (busyTimeMsPerSecond, backPressuredTimeMsPerSecond,
// idleTimeMsPerSecond add up to ~1000).
func (s *Subtask) metrics(o *Out) {
	now := o.Now()
	span := now - s.m.lastTick
	if span <= 0 {
		return
	}
	busy := s.m.busyAcc + s.m.busyCarry
	s.m.busyCarry = 0
	if s.busyUntil > now {
		over := s.busyUntil - now
		busy -= over
		s.m.busyCarry = over
	}
	bp := s.m.bpAcc
	if s.blocked {
		bp += now - s.blockedSince
		s.blockedSince = now
	}
	busy = min(max(busy, 0), span)
	bp = min(bp, span-busy)
	perSec := func(v vt.Time) int64 { return v * 1000 / span }
	s.m.lastBusy, s.m.lastBP, s.m.lastIdle = perSec(busy), perSec(bp), perSec(span-busy-bp)
	fields := []*messages.Field{
		messages.Int("busyTimeMsPerSecond", perSec(busy)),
		messages.Int("backPressuredTimeMsPerSecond", perSec(bp)),
		messages.Int("idleTimeMsPerSecond", perSec(span-busy-bp)),
		messages.Int("numRecordsIn", s.m.recordsIn), messages.Int("numRecordsOut", s.m.recordsOut),
	}
	if s.rp != nil {
		// outputQueueLengths: finished data buffers waiting in each
		// subpartition (ResultPartition.Backlog), in subpartition order.
		backlogs := s.rp.Backlogs()
		out := make([]int64, len(backlogs))
		for i, b := range backlogs {
			out[i] = int64(b)
		}
		fields = append(fields, messages.Int("numBuffersOut", s.rp.BuffersOut), messages.Int("numBytesOut", s.rp.BytesOut),
			messages.Float("outPoolUsage", float64(s.rp.BuffersInUse())/float64(s.rp.PoolCapacity())),
			messages.Raw("outputQueueLengths", jsonInts(out)))
	}
	if s.isSource {
		fields = append(fields, messages.Int("currentOutputWatermark", s.sentWm),
			messages.Int("assignedSplits", int64(len(s.splits))))
	} else {
		usage, queued, lengths := s.inPoolUsage()
		fields = append(fields, messages.Int("currentInputWatermark", s.valve.LastOutputWatermark()),
			messages.Int("numBuffersIn", s.buffersIn), messages.Int("numBytesIn", s.bytesIn),
			messages.Float("inPoolUsage", usage), messages.Int("inputQueueLength", queued),
			messages.Raw("inputQueueLengths", jsonInts(lengths)))
		if s.proc != nil {
			fields = append(fields, messages.Int("keys", int64(s.proc.NumKeys())),
				messages.Int("expired_state_reads", s.proc.ExpiredStateCount()))
		}
		if s.op != nil {
			fields = append(fields, messages.Int("keys", int64(s.op.NumKeys())), messages.Int("windows", int64(s.op.NumWindows())),
				messages.Int("numLateRecordsDropped", s.op.NumLateRecordsDropped()))
		}
	}
	o.Log(eventlog.KindTaskMetrics, fields...)
	s.m.busyAcc, s.m.bpAcc = 0, 0
	s.m.lastTick = now
}
