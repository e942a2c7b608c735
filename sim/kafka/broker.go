package kafka

import (
	"slices"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// GeneratorEpochMillis is the event time of virtual time 0 for generated
// records: 2023-11-14T22:13:20Z, so windows print as real dates.
const GeneratorEpochMillis = 1_700_000_000_000

// fetchMaxWait is Kafka's fetch.max.wait.ms default (500 ms): how long the
// broker parks a fetch that finds no data.
const fetchMaxWait = 500_000 // µs

// generatorTick is how often the built-in generator appends records (µs).
const generatorTick = 10_000

type parkedFetch struct {
	id   int64
	from string
	req  *messages.Fetch
}

// Broker is the Kafka broker: the source topic (filled by the built-in generator or
// from an events file), the sink topic with its transaction coordinator (the
// exactly-once KafkaSink's transactions, TxnLog), fetches with
// fetch.max.wait.ms long polling, and ListOffsets for the source enumerator.
// Produce and TxnRequest envelopes are handled in arrival order; the broker
// never answers them.
type Broker struct {
	cfg        *config.Config
	committed  map[int32]int64   // the consumer group's committed offset per source partition
	owner      map[string]string // transactional id -> the producer (subtask) that began its latest transaction
	txnTimers  int64             // transaction timeout timers set so far
	txnBegun   map[string]int64  // transactional id -> timer of its latest transaction
	txnTimerID map[int64]string  // timer -> transactional id
	source     *Topic
	sink       *TxnLog
	events     []events.Record // nil: use the generator
	pending    []int           // event-time pace: indexes into events, in append order
	appendAt   []vt.Time       // their append times
	next       int
	parked     []parkedFetch
	position   map[int32]int64 // last fetch offset per source partition (consumer position)
	parkSeq    int64
	genAcc     float64
	genSeq     int64
	produced   int64   // sink records accepted (plain or transactional)
	rejected   int64   // sink records refused (produce_rejected)
	txnErrs    int64   // transaction requests refused (txn_errors)
	paused     []bool  // per source partition: its producer is stalled (pause-partition)
	held       [][]int // per source partition: paced events due while it was paused
	maxTs      int64   // the newest event time in the source topic (ms)
	haveTs     bool
}

// NewBroker returns the broker. With evs non-nil the source topic holds those
// records (all at start, or paced by event time); otherwise the generator
// appends sim.source.rate records per virtual second.
func NewBroker(cfg *config.Config, evs []events.Record) *Broker {
	return &Broker{cfg: cfg, events: evs, source: NewTopic(cfg.SourceTopic, cfg.SourcePartitions),
		sink: NewTxnLog(NewTopic(cfg.SinkTopic, 1)), position: map[int32]int64{}, committed: map[int32]int64{}, owner: map[string]string{},
		txnBegun: map[string]int64{}, txnTimerID: map[int64]string{},
		paused: make([]bool, cfg.SourcePartitions), held: make([][]int, cfg.SourcePartitions)}
}

// SinkTopic is the sink topic with every record appended, whatever its
// transaction's state (a read_uncommitted consumer's view).
func (k *Broker) SinkTopic() *Topic { return k.sink.Topic() }

// SinkLog is the sink topic with its transactions, for what a consumer of a
// given isolation level sees after the run.
func (k *Broker) SinkLog() *TxnLog { return k.sink }

// SourceTopic is the source topic.
func (k *Broker) SourceTopic() *Topic { return k.source }

// Receive implements Component.
func (k *Broker) Step(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		k.start(o)
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerGenerate:
			k.generate(o)
			o.Timer(generatorTick, timerGenerate, 0)
		case timerAppend:
			k.appendDue(o)
		case timerTxnTimeout:
			k.txnTimeout(o, b.Timer.Arg)
		case timerFetchWait:
			k.expireParked(o, b.Timer.Arg)
		case timerMetrics:
			k.metrics(o)
			o.Timer(1_000_000, timerMetrics, 0)
		}
	case *messages.Envelope_ListOffsets:
		m := b.ListOffsets
		res := &messages.ListOffsetsResult{Topic: m.Topic, RequestId: m.RequestId}
		if m.Topic == k.cfg.SinkTopic && m.Topic != k.cfg.SourceTopic {
			// the sink topic's end: where a new consumer at latest starts
			res.Offsets = []*messages.PartitionOffset{{Partition: 0, Offset: k.sink.Topic().EndOffset(0)}}
			o.Send(env.From, vt.FromDuration(k.cfg.RPCLatency()), &messages.Envelope_ListOffsetsResult{ListOffsetsResult: res})
			return
		}
		final := k.finalEndOffsets()
		for p := range k.source.Partitions {
			off := k.source.Partitions[p].LogStartOffset
			switch m.Spec {
			case "latest":
				off = k.source.EndOffset(p)
			case "final":
				off = final[p]
			}
			res.Offsets = append(res.Offsets, &messages.PartitionOffset{Partition: int32(p), Offset: off})
		}
		o.Send(env.From, vt.FromDuration(k.cfg.RPCLatency()), &messages.Envelope_ListOffsetsResult{ListOffsetsResult: res})
	case *messages.Envelope_Action:
		k.action(o, b.Action.Text)
	case *messages.Envelope_Fetch:
		k.fetch(o, env.From, b.Fetch, false)
	case *messages.Envelope_Produce:
		k.produce(o, env.From, b.Produce)
	case *messages.Envelope_TxnRequest:
		k.txnRequest(o, env.From, b.TxnRequest)
	case *messages.Envelope_CommitOffsets:
		// a source reader commits a completed checkpoint's offsets to the
		// consumer group: for monitoring only, the job never reads them
		// back (KafkaSourceReader.notifyCheckpointComplete)
		m := b.CommitOffsets
		offs := "["
		for i, po := range m.Offsets {
			k.committed[po.Partition] = po.Offset
			if i > 0 {
				offs += ","
			}
			offs += `{"partition":` + eventlog.Itoa(int64(po.Partition)) + `,"offset":` + eventlog.Itoa(po.Offset) + `}`
		}
		o.Log(eventlog.KindOffsetsCommitted, messages.Str("group", m.Group), messages.Str("reader", env.From),
			messages.Int("checkpoint_id", m.CheckpointId), messages.Raw("offsets", offs+"]"))
	case *messages.Envelope_EndOfRun:
		k.metrics(o)
		fields := []*messages.Field{messages.Int("source_records", k.source.Total()), messages.Int("results_written", k.produced),
			messages.Int("produce_rejected", k.rejected), messages.Int("txn_errors", k.txnErrs)}
		o.Log(eventlog.KindFinal, append(fields, k.sinkFields()...)...)
	}
}

func (k *Broker) start(o *kernel.Out) {
	o.Log(eventlog.KindTopicCreated, messages.Str("topic", k.source.Name), messages.Int("partitions", int64(len(k.source.Partitions))))
	o.Log(eventlog.KindTopicCreated, messages.Str("topic", k.sink.Topic().Name), messages.Int("partitions", 1))
	o.Timer(1_000_000, timerMetrics, 0)
	if k.events == nil {
		o.Log(eventlog.KindGeneratorStarted, messages.Float("rate_per_second", k.cfg.SourceRate), messages.Int("keys", int64(k.cfg.SourceKeys)),
			messages.Str("disorder", config.FormatDuration(k.cfg.SourceDisorder)), messages.Float("late_fraction", k.cfg.SourceLateFraction))
		o.Timer(0, timerGenerate, 0)
		return
	}
	if k.cfg.EventsPace != "event-time" {
		for i := range k.events {
			k.appendEvent(i)
		}
		o.Log(eventlog.KindBackfill, messages.Str("topic", k.source.Name), messages.Int("records", int64(len(k.events))),
			messages.Raw("end_offsets", k.endOffsetsJSON()))
		return
	}
	// event-time pace: each record at its event-time offset from the first
	first := k.events[0].Timestamp
	k.pending = make([]int, len(k.events))
	for i := range k.pending {
		k.pending[i] = i
	}
	at := func(i int) vt.Time { return vt.FromMillis(max(0, k.events[i].Timestamp-first)) }
	slices.SortStableFunc(k.pending, func(a, b int) int {
		ta, tb := at(a), at(b)
		if ta < tb {
			return -1
		}
		if ta > tb {
			return 1
		}
		return 0
	})
	k.appendAt = make([]vt.Time, len(k.pending))
	for i, idx := range k.pending {
		k.appendAt[i] = at(idx)
	}
	k.appendDue(o)
}

// finalEndOffsets are the end offsets the source topic will have once every
// record of the events file is appended (the same as the current ones when
// nothing is paced).
func (k *Broker) finalEndOffsets() []int64 {
	out := make([]int64, len(k.source.Partitions))
	for p := range out {
		out[p] = k.source.EndOffset(p)
	}
	for _, idx := range k.pending[k.next:] {
		out[k.partitionOf(k.events[idx])]++
	}
	return out
}

func (k *Broker) partitionOf(e events.Record) int32 {
	if e.Partition >= 0 {
		return e.Partition
	}
	return int32(DefaultPartition([]byte(e.Key), len(k.source.Partitions)))
}

func (k *Broker) appendEvent(i int) {
	e := k.events[i]
	p := k.partitionOf(e)
	k.appendSource(&messages.KafkaRecord{Partition: p, Timestamp: e.Timestamp, Key: e.Key, Value: e.Value})
}

func (k *Broker) appendDue(o *kernel.Out) {
	for k.next < len(k.pending) && k.appendAt[k.next] <= o.Now() {
		i := k.pending[k.next]
		if p := k.partitionOf(k.events[i]); k.paused[p] {
			k.held[p] = append(k.held[p], i) // its producer is stalled: it waits
		} else {
			k.appendEvent(i)
		}
		k.next++
	}
	if k.next < len(k.pending) {
		o.SendAt(o.Name(), k.appendAt[k.next], &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerAppend}})
	}
	k.serveParked(o)
}

// generate appends the records the generator owes for one tick: keys
// uniform over sim.source.keys, event time up to sim.source.disorder behind
// the virtual clock, a sim.source.late-fraction of records far enough behind
// to be late.
func (k *Broker) generate(o *kernel.Out) {
	k.genAcc += k.cfg.SourceRate * generatorTick / 1e6
	n := int(k.genAcc)
	k.genAcc -= float64(n)
	rng := o.Rand()
	nowMs := GeneratorEpochMillis + vt.Millis(o.Now())
	disorder := k.cfg.SourceDisorder.Milliseconds()
	late := k.cfg.OutOfOrderness.Milliseconds() + k.cfg.WindowSize.Milliseconds() + k.cfg.AllowedLateness.Milliseconds()
	for i := 0; i < n; i++ {
		key := "user-" + strconv.Itoa(rng.IntN(max(1, k.cfg.SourceKeys)))
		ts := nowMs
		if disorder > 0 {
			ts -= rng.Int64N(disorder + 1)
		}
		if k.cfg.SourceLateFraction > 0 && rng.Float64() < k.cfg.SourceLateFraction {
			ts = nowMs - disorder - late
		}
		amount := float64(rng.IntN(50000)+100) / 100
		val := make([]byte, 0, 64)
		val = append(val, `{"order_id":"o-`...)
		val = strconv.AppendInt(val, k.genSeq, 10)
		val = append(val, `","amount":`...)
		val = strconv.AppendFloat(val, amount, 'f', -1, 64)
		val = append(val, '}')
		k.genSeq++
		p := int32(DefaultPartition([]byte(key), len(k.source.Partitions)))
		if k.paused[p] {
			continue // a stalled producer: the record is never produced
		}
		k.appendSource(&messages.KafkaRecord{Partition: p, Timestamp: ts, Key: key, Value: val})
	}
	if n > 0 {
		k.serveParked(o)
	}
}

// fetch answers a Fetch with up to max_records records over the requested
// partitions, in request order; with nothing to return it parks the fetch
// until data arrives or fetch.max.wait.ms passes.
func (k *Broker) fetch(o *kernel.Out, from string, req *messages.Fetch, parkedAlready bool) bool {
	res := &messages.FetchResponse{RequestId: req.RequestId}
	// every partition gets a fair share of max_records first (as
	// max.partition.fetch.bytes bounds each partition of a fetch), then
	// what is left goes to partitions in request order
	left := int(req.MaxRecords)
	share := (left + len(req.Partitions) - 1) / max(1, len(req.Partitions))
	total := 0
	got := make([][]*messages.KafkaRecord, len(req.Partitions))
	for pass := 0; pass < 2 && left > 0; pass++ {
		for i, fp := range req.Partitions {
			want := min(share, left)
			if pass == 1 {
				want = left
			}
			recs := k.source.Read(int(fp.Partition), fp.Offset+int64(len(got[i])), want)
			got[i] = append(got[i], recs...)
			left -= len(recs)
			total += len(recs)
		}
	}
	for i, fp := range req.Partitions {
		pos := fp.Offset
		if n := len(got[i]); n > 0 {
			pos = got[i][n-1].Offset + 1
		}
		k.position[fp.Partition] = pos
		res.Partitions = append(res.Partitions, &messages.PartitionRecords{Partition: fp.Partition, Records: got[i],
			HighWatermark: k.source.EndOffset(int(fp.Partition))})
	}
	if total == 0 && !parkedAlready {
		k.parkSeq++
		k.parked = append(k.parked, parkedFetch{id: k.parkSeq, from: from, req: req})
		o.Timer(fetchMaxWait, timerFetchWait, k.parkSeq)
		return false
	}
	if total == 0 {
		return false
	}
	o.Send(from, vt.FromDuration(k.cfg.RPCLatency()), &messages.Envelope_FetchResponse{FetchResponse: res})
	return true
}

func (k *Broker) serveParked(o *kernel.Out) {
	kept := k.parked[:0]
	for _, p := range k.parked {
		if !k.fetch(o, p.from, p.req, true) {
			kept = append(kept, p)
		}
	}
	k.parked = kept
}

// expireParked answers the parked fetch id, which waited
// fetch.max.wait.ms, with an empty response (if data came meanwhile it was
// answered already).
func (k *Broker) expireParked(o *kernel.Out, id int64) {
	for i, p := range k.parked {
		if p.id == id {
			o.Send(p.from, vt.FromDuration(k.cfg.RPCLatency()), &messages.Envelope_FetchResponse{FetchResponse: &messages.FetchResponse{RequestId: p.req.RequestId}})
			k.parked = slices.Delete(k.parked, i, i+1)
			return
		}
	}
}

func (k *Broker) endOffsetsJSON() string {
	offs := make([]int64, len(k.source.Partitions))
	for p := range offs {
		offs[p] = k.source.EndOffset(p)
	}
	return eventlog.JSONInts(offs)
}

// metrics logs, per source partition, the end offset, the consumer's read
// position and the lag (end offset - read offset).
func (k *Broker) metrics(o *kernel.Out) {
	s := "["
	for p := range k.source.Partitions {
		end := k.source.EndOffset(p)
		pos := k.position[int32(p)]
		if p > 0 {
			s += ","
		}
		s += `{"partition":` + strconv.Itoa(p) + `,"end_offset":` + eventlog.Itoa(end) + `,"read_offset":` + eventlog.Itoa(pos) + `,"lag":` + eventlog.Itoa(end-pos)
		if c, ok := k.committed[int32(p)]; ok {
			s += `,"committed_offset":` + eventlog.Itoa(c)
		}
		s += `}`
	}
	fields := []*messages.Field{messages.Str("topic", k.source.Name), messages.Raw("partitions", s+"]"),
		messages.Int("sink_records", k.sink.Topic().Total())}
	o.Log(eventlog.KindKafkaMetrics, append(fields, k.sinkFields()...)...)
}

// sinkFields are the sink topic's record counts by transaction state
// (TxnLog.Counts) and the last stable offset of its partition 0.
func (k *Broker) sinkFields() []*messages.Field {
	open, pre, committed, aborted, plain := k.sink.Counts()
	return []*messages.Field{messages.Int("sink_open", int64(open)), messages.Int("sink_pre_committed", int64(pre)),
		messages.Int("sink_committed", int64(committed)), messages.Int("sink_aborted", int64(aborted)),
		messages.Int("sink_plain", int64(plain)), messages.Int("last_stable_offset", k.sink.LastStableOffset(0))}
}
