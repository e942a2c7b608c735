package kafka

import (
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/jobgraph"
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
	id       int64
	from     string
	req      *messages.Fetch
	deadline vt.Time // when fetch.max.wait.ms runs out
	timer    bool    // its fetch.max.wait.ms timer is set
	// answered ahead (broker_ahead.go): the response is sent as of the
	// generator's tick at due (sender_seq sent), and at due the consumer
	// positions of the request's partitions become pos
	sent uint64
	due  vt.Time
	pos  []int64
}

// Broker is the Kafka broker: the source topic (filled by the built-in generator or
// from an events file, eventsFile), the sink topic with its transaction coordinator (the
// exactly-once KafkaSink's transactions: txnCoordinator over the TxnLog), fetches with
// fetch.max.wait.ms long polling (ReplicaManager.fetchMessages with its DelayedFetch
// purgatory), ListOffsets for the source enumerator, and the consumer group's committed
// offsets (groupCoordinator, Kafka's GroupCoordinator).
// Produce and TxnRequest envelopes are handled in arrival order; the broker
// never answers them.
type Broker struct {
	cfg      *config.Config
	group    groupCoordinator // the source consumer group's committed offsets
	txn      txnCoordinator   // the sink's produce and transaction requests (broker_txn.go)
	source   Log              // the source topic: gen or file.topic
	gen      *GeneratedTopic  // the generator's topic; nil with an events file
	file     eventsFile       // the events file's records and their pace; no records with the generator
	sink     *TxnLog
	parked   []parkedFetch
	position map[int32]int64 // last fetch offset per source partition (consumer position)
	parkSeq  int64
	edit     *EditedTopic // the generator's topic once a user edited it (send-event, pause-partition)
	ranges   []fetchRange // scratch of fetch
	pos      []int64      // scratch of read: the positions a fetch leaves
	ahead    ahead        // answering parked fetches ahead of the generator's ticks
	arena    recordArena  // where fetch responses' records are carved from
}

// NewBroker returns the broker. With evs non-nil the source topic holds those
// records (all at start, or paced by event time); otherwise the generator
// appends sim.source.rate records per virtual second.
func NewBroker(cfg *config.Config, evs []events.Record) *Broker {
	sink := NewTxnLog(NewTopic(cfg.SinkTopic, 1))
	k := &Broker{cfg: cfg, sink: sink, txn: newTxnCoordinator(cfg, sink), position: map[int32]int64{},
		group: groupCoordinator{committed: map[int32]int64{}}, file: newEventsFile(cfg, evs)}
	if evs == nil {
		k.gen = newGenerator(cfg, 0)
		k.source = k.gen
	} else {
		k.source = k.file.topic
	}
	return k
}

// newGenerator is the source topic of the built-in generator ticking every
// generatorTick from virtual time first on. Its draws are those of the
// broker's own random generator (vt.NewRand(seed, jobgraph.KafkaName)), the
// generator being the only user of it.
func newGenerator(cfg *config.Config, first vt.Time) *GeneratedTopic {
	h := fnv.New64a()
	h.Write([]byte(jobgraph.KafkaName))
	return NewGeneratedTopic(cfg.SourceTopic, GeneratorConfig{
		Partitions: cfg.SourcePartitions, Rate: cfg.SourceRate, Keys: cfg.SourceKeys,
		DisorderMs:   cfg.SourceDisorder.Milliseconds(),
		LateMs:       cfg.OutOfOrderness.Milliseconds() + cfg.WindowSize.Milliseconds() + cfg.AllowedLateness.Milliseconds(),
		LateFraction: cfg.SourceLateFraction, EpochMs: GeneratorEpochMillis,
		FirstTickUs: first, TickUs: generatorTick, Seed: cfg.Seed, Stream: h.Sum64(),
	})
}

// SinkTopic is the sink topic with every record appended, whatever its
// transaction's state (a read_uncommitted consumer's view).
func (k *Broker) SinkTopic() *Topic { return k.sink.Topic() }

// SinkLog is the sink topic with its transactions, for what a consumer of a
// given isolation level sees after the run.
func (k *Broker) SinkLog() *TxnLog { return k.sink }

// SourceTopic is the source topic.
func (k *Broker) SourceTopic() Log { return k.source }

// Step implements kernel.Component.
func (k *Broker) Step(o *kernel.Out, env *messages.Envelope) {
	if _, start := env.Body.(*messages.Envelope_Start); !start && k.gen != nil && !k.ahead.ticking {
		k.reveal(o, env)
	}
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		k.start(o)
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerPlan:
			k.ahead.planning = false
			k.plan(o)
		case timerGenerate:
			k.generate(o)
			o.Timer(generatorTick, timerGenerate, 0)
		case timerAppend:
			k.appendDue(o)
		case timerTxnTimeout:
			k.txn.txnTimeout(o, b.Timer.Arg)
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
			o.Send(env.From, vt.FromDuration(k.cfg.KafkaLatency()), &messages.Envelope_ListOffsetsResult{ListOffsetsResult: res})
			return
		}
		final := k.finalEndOffsets()
		for p := range k.source.NumPartitions() {
			off := k.source.LogStartOffset(p)
			switch m.Spec {
			case "latest":
				off = k.source.EndOffset(p)
			case "final":
				off = final[p]
			}
			res.Offsets = append(res.Offsets, &messages.PartitionOffset{Partition: int32(p), Offset: off})
		}
		o.Send(env.From, vt.FromDuration(k.cfg.KafkaLatency()), &messages.Envelope_ListOffsetsResult{ListOffsetsResult: res})
	case *messages.Envelope_Action:
		k.withdraw(o)
		k.action(o, b.Action)
		k.plan(o)
	case *messages.Envelope_Fetch:
		k.fetch(o, env.From, b.Fetch, false)
	case *messages.Envelope_Produce:
		k.txn.produce(o, env.From, b.Produce)
	case *messages.Envelope_TxnRequest:
		k.txn.txnRequest(o, env.From, b.TxnRequest)
	case *messages.Envelope_CommitOffsets:
		m := b.CommitOffsets
		o.Log(eventlog.OffsetsCommitted{Group: m.Group, Reader: env.From, CheckpointID: m.CheckpointId, Offsets: k.group.commitOffsets(m)})
	case *messages.Envelope_EndOfRun:
		k.metrics(o)
		fields := []eventlog.Value{eventlog.I("source_records", k.source.Total()), eventlog.I("results_written", k.txn.produced),
			eventlog.I("produce_rejected", k.txn.rejected), eventlog.I("txn_errors", k.txn.errs)}
		o.Log(eventlog.FinalCounters{List: append(fields, k.sinkValues()...)})
	}
}

func (k *Broker) start(o *kernel.Out) {
	o.Log(eventlog.TopicCreated{Topic: k.cfg.SourceTopic, Partitions: int64(k.source.NumPartitions())})
	o.Log(eventlog.TopicCreated{Topic: k.sink.Topic().Name, Partitions: 1})
	o.Timer(1_000_000, timerMetrics, 0)
	if k.gen != nil {
		if o.Now() != 0 {
			k.gen = newGenerator(k.cfg, o.Now())
			k.source = k.gen
		}
		o.Log(eventlog.GeneratorStarted{RatePerSecond: k.cfg.SourceRate, Keys: int64(k.cfg.SourceKeys), Disorder: config.FormatDuration(k.cfg.SourceDisorder), LateFraction: k.cfg.SourceLateFraction})
		k.ahead = ahead{crossed: -1, startStep: o.Step()}
		if k.ahead.ticking = k.cfg.KafkaLatency() <= 0; k.ahead.ticking {
			o.Timer(0, timerGenerate, 0)
		}
		return
	}
	switch k.cfg.EventsPace {
	case config.PaceFileOrder:
		k.file.scheduleFileOrder(vt.FromDuration(k.cfg.EventsGap))
	case config.PaceEventTime:
		k.file.scheduleEventTime()
	default:
		for i := range k.file.records {
			k.file.appendEvent(i)
		}
		o.Log(eventlog.Backfill{Topic: k.cfg.SourceTopic, Records: int64(len(k.file.records)), EndOffsets: k.endOffsetsJSON()})
		return
	}
	k.appendDue(o)
}

// finalEndOffsets are the end offsets the source topic will have once every
// record of the events file is appended (the same as the current ones when
// nothing is paced).
func (k *Broker) finalEndOffsets() []int64 {
	out := make([]int64, k.source.NumPartitions())
	for p := range out {
		out[p] = k.source.EndOffset(p)
	}
	f := &k.file
	for _, idx := range f.pending[f.next:] {
		out[f.partitionOf(f.records[idx])]++
	}
	for p, h := range f.held {
		out[p] += int64(len(h)) // paced records of a stalled producer, appended when it resumes
	}
	return out
}

// appendDue appends the events file's records due by now and sets the timer
// of the next one.
func (k *Broker) appendDue(o *kernel.Out) {
	if next, ok := k.file.appendDue(o.Now()); ok {
		o.SendAt(o.Name(), next, &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerAppend}})
	}
	k.serveParked(o)
}

// fetch answers a Fetch with up to max_records records over the requested
// partitions, in request order; with nothing to return it parks the fetch
// until data arrives or fetch.max.wait.ms passes (park).
func (k *Broker) fetch(o *kernel.Out, from string, req *messages.Fetch, parkedAlready bool) bool {
	body := k.read(req)
	k.leave(req)
	if body == nil {
		if !parkedAlready {
			k.park(o, from, req)
		}
		return false
	}
	o.Send(from, vt.FromDuration(k.cfg.KafkaLatency()), body)
	return true
}

// park keeps a fetch that found no data until data arrives or
// fetch.max.wait.ms passes. The fetch.max.wait.ms timer is set only if no
// data is due before it (dataBefore): a timer that would find the fetch
// answered already is never set. With the generator, the fetch is answered
// at once, as of the tick that brings its data (answerAhead).
func (k *Broker) park(o *kernel.Out, from string, req *messages.Fetch) {
	k.parkSeq++
	p := parkedFetch{id: k.parkSeq, from: from, req: req, deadline: o.Now() + fetchMaxWait}
	if k.gen != nil {
		due, ok := k.firstData(req, p.deadline)
		switch {
		case !ok:
			p.timer = true
		case !k.ahead.ticking:
			k.answerAhead(o, &p, due)
		}
	} else {
		p.timer = !k.dataBefore(req, p.deadline)
	}
	if p.timer {
		o.Timer(fetchMaxWait, timerFetchWait, k.parkSeq)
	}
	k.parked = append(k.parked, p)
}

// leave sets the consumer positions of req's partitions to those the last
// read of it left (k.pos).
func (k *Broker) leave(req *messages.Fetch) {
	for i, fp := range req.Partitions {
		k.position[fp.Partition] = k.pos[i]
	}
}

// read is the response to req from what the source topic holds now (nil
// when it has no record for it), and k.pos the consumer position of each
// of req's partitions after it. Every partition gets a fair share of
// max_records first (as max.partition.fetch.bytes bounds each partition of
// a fetch), then what is left goes to partitions in request order; each
// pass reads a range of offsets, counted first and then materialised.
func (k *Broker) read(req *messages.Fetch) *messages.Envelope_FetchResponse {
	left := int(req.MaxRecords)
	share := (left + len(req.Partitions) - 1) / max(1, len(req.Partitions))
	total := 0
	k.ranges = slices.Grow(k.ranges[:0], len(req.Partitions))[:len(req.Partitions)]
	clear(k.ranges)
	for pass := 0; pass < 2 && left > 0; pass++ {
		for i, fp := range req.Partitions {
			want := min(share, left)
			if pass == 1 {
				want = left
			}
			r := &k.ranges[i]
			p := int(fp.Partition)
			off := Clamp(k.source, p, fp.Offset+int64(r.n[0]+r.n[1]))
			n := 0
			if want > 0 {
				n = int(max(0, min(int64(want), k.source.EndOffset(p)-off)))
			}
			r.off[pass], r.n[pass] = off, n
			left -= n
			total += n
		}
	}
	k.pos = k.pos[:0]
	for i, fp := range req.Partitions {
		pos := fp.Offset
		if r := &k.ranges[i]; r.n[1] > 0 {
			pos = r.off[1] + int64(r.n[1])
		} else if r.n[0] > 0 {
			pos = r.off[0] + int64(r.n[0])
		}
		k.pos = append(k.pos, pos)
	}
	if total == 0 {
		return nil
	}
	res, parts, body := k.arena.response(len(req.Partitions))
	res.RequestId = req.RequestId
	recs := k.arena.records(total)
	var vals []byte // the generator's values, formatted as they are read
	if k.gen != nil {
		vals = k.arena.values(total * 48)
	}
	at := 0
	for i, fp := range req.Partitions {
		r := &k.ranges[i]
		pr := &parts[i]
		pr.Partition, pr.HighWatermark = fp.Partition, k.source.EndOffset(int(fp.Partition))
		if n := r.n[0] + r.n[1]; n > 0 {
			pr.Records = recs[at : at+n : at+n]
			for pass := range 2 {
				k.source.ReadInto(recs[at:at+r.n[pass]], int(fp.Partition), r.off[pass], &vals)
				at += r.n[pass]
			}
		}
	}
	if k.gen != nil {
		k.arena.used(vals)
	}
	return body
}

// recordArena hands out the records of fetch responses from slabs, a few
// hundred at a time, instead of a few allocations per fetch. A slab lives
// as long as any record carved from it: records are never written after
// the response is sent, nor reused.
type recordArena struct {
	recs   []messages.KafkaRecord
	ptrs   []*messages.KafkaRecord
	vals   []byte
	resps  []fetchResponse
	resps4 []fetchResponseSmall
}

// arenaResponses is how many one-partition responses a slab holds.
const arenaResponses = 64

// arenaRecords is how many records a slab holds (more when one fetch needs
// more).
const arenaRecords = 512

// records returns n pointers to n new zero records.
func (a *recordArena) records(n int) []*messages.KafkaRecord {
	if len(a.recs) < n {
		m := max(n, arenaRecords)
		a.recs, a.ptrs = make([]messages.KafkaRecord, m), make([]*messages.KafkaRecord, m)
	}
	out := a.ptrs[:n:n]
	for i := range out {
		out[i] = &a.recs[i]
	}
	a.recs, a.ptrs = a.recs[n:], a.ptrs[n:]
	return out
}

// values returns an empty slice with room for about n bytes of values, to
// append to; used tells the arena what was appended.
func (a *recordArena) values(n int) []byte {
	if cap(a.vals)-len(a.vals) < n {
		a.vals = make([]byte, 0, max(n, arenaRecords*48))
	}
	return a.vals[len(a.vals):len(a.vals):cap(a.vals)]
}

// used advances the arena past v, a slice values returned and its owner
// appended to. When v outgrew the arena's room, append moved it, but the
// records filled before the move still point into the arena's slab: the
// slab is dropped, so that no later fetch writes over them.
func (a *recordArena) used(v []byte) {
	if len(v) == 0 {
		return
	}
	if rest := a.vals[len(a.vals):cap(a.vals)]; len(rest) >= len(v) && &rest[0] == &v[0] {
		a.vals = a.vals[:len(a.vals)+len(v)]
		return
	}
	a.vals = nil
}

// smallFetch is the most partitions a fetchResponseSmall holds: a source
// subtask of the default job reads two.
const smallFetch = 4

// fetchResponseSmall is a response to a fetch of 2 to smallFetch
// partitions, allocated together as fetchResponse is.
type fetchResponseSmall struct {
	res  messages.FetchResponse
	body messages.Envelope_FetchResponse
	ptrs [smallFetch]*messages.PartitionRecords
	part [smallFetch]messages.PartitionRecords
}

// fetchResponse is a response to a fetch of one partition (a source
// subtask reads one split, most often) with its envelope body, allocated
// together.
type fetchResponse struct {
	res  messages.FetchResponse
	body messages.Envelope_FetchResponse
	ptrs [1]*messages.PartitionRecords
	part [1]messages.PartitionRecords
}

// response returns a response for n partitions, its n partitions' records
// (res.Partitions[i] is &parts[i]) and its envelope body.
func (a *recordArena) response(n int) (res *messages.FetchResponse, parts []messages.PartitionRecords, body *messages.Envelope_FetchResponse) {
	if n == 1 {
		if len(a.resps) == 0 {
			a.resps = make([]fetchResponse, arenaResponses)
		}
		f := &a.resps[0]
		a.resps = a.resps[1:]
		f.ptrs[0] = &f.part[0]
		f.res.Partitions = f.ptrs[:]
		f.body.FetchResponse = &f.res
		return &f.res, f.part[:], &f.body
	}
	if n <= smallFetch {
		if len(a.resps4) == 0 {
			a.resps4 = make([]fetchResponseSmall, arenaResponses)
		}
		f := &a.resps4[0]
		a.resps4 = a.resps4[1:]
		for i := range n {
			f.ptrs[i] = &f.part[i]
		}
		f.res.Partitions = f.ptrs[:n:n]
		f.body.FetchResponse = &f.res
		return &f.res, f.part[:n:n], &f.body
	}
	res = &messages.FetchResponse{Partitions: make([]*messages.PartitionRecords, n)}
	parts = make([]messages.PartitionRecords, n)
	for i := range parts {
		res.Partitions[i] = &parts[i]
	}
	return res, parts, &messages.Envelope_FetchResponse{FetchResponse: res}
}

// fetchRange is what one fetch reads of one partition: in each of the two
// passes, n records from offset off.
type fetchRange struct {
	off [2]int64
	n   [2]int
}

// dataBefore reports whether a parked fetch of an events file's topic would
// get records before virtual time deadline: whether the events still to be
// appended at their event-time pace bring a record beyond the fetch's
// offset to one of its partitions before then. Nothing else appends to the
// source topic. Cost: a scan of the events due before deadline. (The
// generator's topic: firstData.)
func (k *Broker) dataBefore(req *messages.Fetch, deadline vt.Time) bool {
	if req.MaxRecords <= 0 {
		return false
	}
	// need[i]: records partition i must still get to pass the fetch offset
	need := make([]int64, len(req.Partitions))
	for i, fp := range req.Partitions {
		p := int(fp.Partition)
		need[i] = Clamp(k.source, p, fp.Offset) - k.source.EndOffset(p) + 1
	}
	f := &k.file
	for j := f.next; j < len(f.pending) && f.appendAt[j] < deadline; j++ {
		p := f.partitionOf(f.records[f.pending[j]])
		if f.paused[p] {
			continue // held until the producer resumes
		}
		for i, fp := range req.Partitions {
			if fp.Partition == p {
				if need[i]--; need[i] <= 0 {
					return true
				}
			}
		}
	}
	return false
}

func (k *Broker) serveParked(o *kernel.Out) {
	kept := k.parked[:0]
	for _, p := range k.parked {
		if p.sent != 0 || !k.fetch(o, p.from, p.req, true) {
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
			o.Send(p.from, vt.FromDuration(k.cfg.KafkaLatency()), &messages.Envelope_FetchResponse{FetchResponse: &messages.FetchResponse{RequestId: p.req.RequestId}})
			k.parked = slices.Delete(k.parked, i, i+1)
			return
		}
	}
}

func (k *Broker) endOffsetsJSON() string {
	offs := make([]int64, k.source.NumPartitions())
	for p := range offs {
		offs[p] = k.source.EndOffset(p)
	}
	return eventlog.JSONInts(offs)
}

// metrics logs, per source partition, the end offset, the consumer's read
// position and the lag (end offset - read offset).
func (k *Broker) metrics(o *kernel.Out) {
	s := "["
	for p := range k.source.NumPartitions() {
		end := k.source.EndOffset(p)
		pos := k.position[int32(p)]
		if p > 0 {
			s += ","
		}
		s += `{"partition":` + strconv.Itoa(p) + `,"end_offset":` + eventlog.Itoa(end) + `,"read_offset":` + eventlog.Itoa(pos) + `,"lag":` + eventlog.Itoa(end-pos)
		if c, ok := k.group.committed[int32(p)]; ok {
			s += `,"committed_offset":` + eventlog.Itoa(c)
		}
		s += `}`
	}
	open, pre, committed, aborted, plain := k.sink.Counts()
	o.Log(eventlog.KafkaMetrics{Topic: k.cfg.SourceTopic, Partitions: s + "]", SinkRecords: k.sink.Topic().Total(),
		SinkOpen: int64(open), SinkPreCommitted: int64(pre), SinkCommitted: int64(committed), SinkAborted: int64(aborted),
		SinkPlain: int64(plain), LastStableOffset: k.sink.LastStableOffset(0)})
}

// sinkValues are the sink topic's record counts by transaction state
// (TxnLog.Counts) and the last stable offset of its partition 0.
func (k *Broker) sinkValues() []eventlog.Value {
	open, pre, committed, aborted, plain := k.sink.Counts()
	return []eventlog.Value{eventlog.I("sink_open", int64(open)), eventlog.I("sink_pre_committed", int64(pre)),
		eventlog.I("sink_committed", int64(committed)), eventlog.I("sink_aborted", int64(aborted)),
		eventlog.I("sink_plain", int64(plain)), eventlog.I("last_stable_offset", k.sink.LastStableOffset(0))}
}
