package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// maxFlights bounds the envelopes a frame lists; the rest are counted.
const maxFlights = 1500

// Flight is one envelope on its way (messages.Envelope): drawn at
// (now - sent) / (deliver - sent) of the way from From to To.
type Flight struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Msg     string `json:"msg"`  // the message: BufferResponse, AddCredit, TriggerCheckpoint, ...
	Kind    string `json:"kind"` // how the page draws it (see flightKind)
	Sent    int64  `json:"sent"` // virtual µs
	Deliver int64  `json:"deliver"`
	// a buffer or a batch of Kafka records: how many records, the distinct
	// keys of the first few (for colour), the first record's key and event
	// time (ms), the last watermark in it, the barrier it carries
	Records   int      `json:"records,omitempty"`
	Keys      []string `json:"keys,omitempty"`
	Key       string   `json:"key,omitempty"`
	TS        int64    `json:"ts,omitempty"`
	Watermark *int64   `json:"wm,omitempty"`
	Barrier   int64    `json:"cp,omitempty"`
	Unaligned bool     `json:"unaligned,omitempty"`
	End       bool     `json:"end_of_partition,omitempty"`
	Credit    int32    `json:"credit,omitempty"`
	Partition *int32   `json:"partition,omitempty"` // a fetch's or offset commit's first partition
	Text      string   `json:"text,omitempty"`      // an action's text
}

// flightKind is how the page draws a message: buffer (records, W,
// barriers along a channel), credit (green dots going back), records and
// fetch (Kafka source traffic), produce (to the sink topic), control (the
// JobManager's triggers, acknowledgements, notifications and deployments:
// violet), heartbeat, rpc (cluster bring-up), gate (between a channel and
// its own task), action (the user's).
func flightKind(e *messages.Envelope) string {
	switch e.Body.(type) {
	case *messages.Envelope_BufferResponse:
		return "buffer"
	case *messages.Envelope_ChannelBuffer, *messages.Envelope_RecycleBuffers, *messages.Envelope_RequestFloatingBuffers,
		*messages.Envelope_FloatingBuffers, *messages.Envelope_ReturnFloatingBuffers:
		return "gate"
	case *messages.Envelope_AddCredit, *messages.Envelope_PartitionRequest, *messages.Envelope_BacklogAnnouncement,
		*messages.Envelope_ResumeConsumption:
		return "credit"
	case *messages.Envelope_Fetch, *messages.Envelope_ListOffsets, *messages.Envelope_ListOffsetsResult,
		*messages.Envelope_CommitOffsets:
		return "fetch"
	case *messages.Envelope_FetchResponse:
		return "records"
	case *messages.Envelope_Produce, *messages.Envelope_TxnRequest:
		return "produce"
	case *messages.Envelope_TriggerCheckpoint, *messages.Envelope_AcknowledgeCheckpoint, *messages.Envelope_DeclineCheckpoint,
		*messages.Envelope_NotifyCheckpointComplete, *messages.Envelope_NotifyCheckpointAborted, *messages.Envelope_SubmitTask,
		*messages.Envelope_CancelTask, *messages.Envelope_TaskExecutionState, *messages.Envelope_AddSplits,
		*messages.Envelope_NoMoreSplits, *messages.Envelope_ReaderRegistration, *messages.Envelope_ReportedWatermarkEvent,
		*messages.Envelope_WatermarkAlignmentEvent:
		return "control"
	case *messages.Envelope_HeartbeatRequest, *messages.Envelope_HeartbeatResponse:
		return "heartbeat"
	case *messages.Envelope_Action:
		return "action"
	}
	return "rpc"
}

// msgName is the message's protobuf name: "*messages.Envelope_AddCredit"
// -> "AddCredit".
func msgName(e *messages.Envelope) string {
	s := fmt.Sprintf("%T", e.Body)
	return strings.TrimPrefix(s, "*messages.Envelope_")
}

// flights converts the queue into what the page draws, soonest delivery
// first, at most maxFlights. It reads the envelopes between steps only.
func flights(queue []*messages.Envelope) ([]Flight, int) {
	drawn := queue[:0:0]
	for _, e := range queue {
		if isFlightDrawn(e) {
			drawn = append(drawn, e)
		}
	}
	slices.SortFunc(drawn, vt.Compare)
	more := 0
	if len(drawn) > maxFlights {
		more = len(drawn) - maxFlights
		drawn = drawn[:maxFlights]
	}
	out := make([]Flight, 0, len(drawn))
	for _, e := range drawn {
		f := Flight{From: e.From, To: e.To, Msg: msgName(e), Kind: flightKind(e), Sent: e.SentAt, Deliver: e.DeliverAt}
		switch b := e.Body.(type) {
		case *messages.Envelope_BufferResponse:
			describeBuffer(&f, b.BufferResponse.GetBuffer())
		case *messages.Envelope_ChannelBuffer:
			describeBuffer(&f, b.ChannelBuffer.GetBuffer())
		case *messages.Envelope_AddCredit:
			f.Credit = b.AddCredit.Credit
		case *messages.Envelope_PartitionRequest:
			f.Credit = b.PartitionRequest.Credit
		case *messages.Envelope_FetchResponse:
			for _, p := range b.FetchResponse.Partitions {
				if f.Partition == nil {
					pp := p.Partition
					f.Partition = &pp
				}
				describeRecords(&f, p.Records)
			}
		case *messages.Envelope_Fetch:
			if ps := b.Fetch.Partitions; len(ps) > 0 {
				pp := ps[0].Partition
				f.Partition = &pp
			}
		case *messages.Envelope_CommitOffsets:
			if ps := b.CommitOffsets.Offsets; len(ps) > 0 {
				pp := ps[0].Partition
				f.Partition = &pp
			}
		case *messages.Envelope_Produce:
			describeRecords(&f, b.Produce.Records)
		case *messages.Envelope_TriggerCheckpoint:
			f.Barrier, f.Unaligned = b.TriggerCheckpoint.CheckpointId, b.TriggerCheckpoint.Unaligned
		case *messages.Envelope_AcknowledgeCheckpoint:
			f.Barrier = b.AcknowledgeCheckpoint.CheckpointId
		case *messages.Envelope_NotifyCheckpointComplete:
			f.Barrier = b.NotifyCheckpointComplete.CheckpointId
		case *messages.Envelope_SubmitTask:
			f.Barrier = b.SubmitTask.RestoreCheckpointId // a deployment that restores state
		case *messages.Envelope_Action:
			f.Text = action.Text(b.Action)
		}
		out = append(out, f)
	}
	return out, more
}

const maxFlightKeys = 6

func addKey(f *Flight, key string, ts int64) {
	if f.Records == 0 {
		f.Key, f.TS = key, ts
	}
	f.Records++
	if len(f.Keys) < maxFlightKeys && !slices.Contains(f.Keys, key) {
		f.Keys = append(f.Keys, key)
	}
}

func describeBuffer(f *Flight, b *messages.Buffer) {
	cp, unaligned, end := walkBuffer(b, func(key string, ts int64) { addKey(f, key, ts) }, func(w int64) { f.Watermark = &w })
	if cp > 0 {
		f.Barrier, f.Unaligned = cp, unaligned
	}
	f.End = f.End || end
}

// walkBuffer hands a buffer's records (key, event time in ms) and
// watermarks (ms) to the callbacks, in order, and returns the checkpoint of
// the barrier it carries (0: none), whether that barrier is unaligned, and
// whether it carries an EndOfPartition.
func walkBuffer(b *messages.Buffer, record func(key string, ts int64), watermark func(int64)) (cp int64, unaligned, end bool) {
	if b == nil {
		return 0, false, false
	}
	if b.IsEvent && b.CheckpointId > 0 {
		cp, unaligned = b.CheckpointId, b.Unaligned
	}
	for i, k := range b.Kinds {
		switch k {
		case exchange.KindRecord:
			key, ts := "", int64(0)
			if i < len(b.Keys) {
				key = b.Keys[i]
			}
			if i < len(b.Timestamps) {
				ts = b.Timestamps[i]
			}
			record(key, ts)
		case exchange.KindWatermark:
			if i < len(b.Timestamps) {
				watermark(b.Timestamps[i])
			}
		case exchange.KindBarrier:
			if cp == 0 {
				cp, unaligned = b.CheckpointId, b.Unaligned
			}
		case exchange.KindEndOfPartition:
			end = true
		}
	}
	return cp, unaligned, end
}

func describeRecords(f *Flight, recs []*messages.KafkaRecord) {
	for _, r := range recs {
		addKey(f, r.Key, r.Timestamp)
	}
}

// ---------------------------------------------------------------- traffic

// Drawing is not flight time (ARCHITECTURE.md, "Next steps"): a buffer is on
// the wire for 200 µs of virtual time, so what is in the queue at the
// instant of a frame is next to nothing. The traffic tap sees every envelope
// as the scheduler delivers it (cluster.Options.ObserveDelivery) and keeps,
// until the next frame takes it, what the page draws: each delivery worth
// drawing on its own (Delivery), and per link (producer and consumer, kind)
// the rest merged into a count with the keys it carried (Stream). It only
// reads envelopes and never reaches the queue or the log; its memory is
// bounded by the caps below whatever the speed.
const (
	// maxDeliveries bounds the deliveries a batch lists one by one.
	maxDeliveries = 240
	// perLinkDeliveries bounds those of one link in a batch (data, credit
	// and RPC envelopes; barriers are always listed while the batch has
	// room, and a watermark-only buffer replaces the link's last one).
	perLinkDeliveries = 4
	// maxStreams bounds the links a batch counts; beyond them deliveries
	// are only counted in Batch.Dropped.
	maxStreams = 2048
	// maxStreamKeys is how many distinct keys a stream counts by name.
	maxStreamKeys = 6
	// maxLabels is how many records of a delivery carry key@event time.
	maxLabels = 3
)

// Traffic kinds of a Delivery or Stream: a data envelope (records, a
// watermark, a barrier, in a network buffer, a Kafka fetch response or a
// produce request), a credit message of the credit-based flow control
// (AddCredit, PartitionRequest, BacklogAnnouncement, ResumeConsumption), or
// an RPC of the control plane (the JobManager's and CheckpointCoordinator's
// triggers, acknowledgements, notifications, deployments, restores,
// heartbeats, split assignment, the sink's transaction requests).
const (
	trafficData   = "data"
	trafficCredit = "credit"
	trafficRPC    = "rpc"
)

// KeyTime is one record's key and event time (ms), as key@time labels it.
type KeyTime struct {
	Key string `json:"k"`
	TS  int64  `json:"ts"`
}

// KeyCount is how many records of a stream carried one key.
type KeyCount struct {
	Key   string `json:"k"`
	Count int    `json:"n"`
}

// Delivery is one envelope delivered since the last frame, as the page
// draws it: from one actor to another (a Kafka fetch response once per
// partition it carries records of), at virtual time At (µs) after it was
// sent at Sent.
type Delivery struct {
	Kind      string    `json:"kind"` // data, credit, rpc
	Msg       string    `json:"msg"`  // BufferResponse, AddCredit, TriggerCheckpoint, ...
	From      string    `json:"from"`
	To        string    `json:"to"`
	Sent      int64     `json:"sent"`
	At        int64     `json:"at"`
	Partition *int32    `json:"p,omitempty"` // the Kafka partition of a fetch response
	Records   int       `json:"n,omitempty"` // records in it
	Keys      []string  `json:"keys,omitempty"`
	Labels    []KeyTime `json:"labels,omitempty"` // the first records' key@event time
	Watermark *int64    `json:"wm,omitempty"`     // the last watermark in a buffer (ms)
	Barrier   int64     `json:"cp,omitempty"`     // a barrier's checkpoint, or the checkpoint an RPC is about
	Unaligned bool      `json:"unaligned,omitempty"`
	End       bool      `json:"end,omitempty"` // EndOfPartition
	Credit    int32     `json:"credit,omitempty"`
	Label     string    `json:"label,omitempty"` // an RPC's short name: trigger, ack, complete, deploy, restore, ...
}

// Stream is what one link carried since the last frame beyond the
// deliveries listed: envelopes, records, the records of its first keys.
type Stream struct {
	Kind      string     `json:"kind"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	Partition *int32     `json:"p,omitempty"`
	Envelopes int        `json:"envelopes"`
	Records   int        `json:"n,omitempty"`
	Keys      []KeyCount `json:"keys,omitempty"`
	Other     int        `json:"other,omitempty"` // records of keys past the first maxStreamKeys
	Watermark *int64     `json:"wm,omitempty"`    // the last watermark it carried (ms)
}

// Batch is the traffic of one frame: every delivery drawn between virtual
// times From (exclusive, the previous frame's) and To (µs), listed or
// merged into streams. Dropped counts deliveries past maxStreams links.
type Batch struct {
	Seq        uint64     `json:"seq"`
	From       int64      `json:"from_vt"`
	To         int64      `json:"to_vt"`
	Deliveries []Delivery `json:"deliveries"`
	Streams    []*Stream  `json:"streams,omitempty"`
	Dropped    int        `json:"dropped,omitempty"`
}

type linkKey struct {
	from, to, kind string
	part           int32
}

// trafficTap collects the traffic between two frames. observe runs on the
// scheduler's goroutine while the session loop waits in RunUntil or Step;
// take runs on the loop's goroutine between runs; the mutex only makes that
// plain.
type trafficTap struct {
	mu      sync.Mutex
	seq     uint64
	from    int64
	batch   Batch
	perLink map[linkKey]int
	streams map[linkKey]*Stream
	// scratch for a delivery's keys and labels while it is described: most
	// deliveries at a high speed only count in their link's stream, and a
	// listed one gets copies of its own (owned)
	keys   []string
	labels []KeyTime
}

func newTrafficTap() *trafficTap {
	return &trafficTap{perLink: map[linkKey]int{}, streams: map[linkKey]*Stream{}}
}

// observe takes one delivered envelope (cluster.Options.ObserveDelivery).
func (t *trafficTap) observe(now vt.Time, e *messages.Envelope) {
	if e.From == e.To || e.From == kernel.SchedulerName || e.From == kernel.UserName {
		return
	}
	kind, msg, label := trafficOf(e)
	if kind == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d := Delivery{Kind: kind, Msg: msg, From: e.From, To: e.To, Sent: e.SentAt, At: now.Micros(), Label: label,
		Keys: t.keys[:0], Labels: t.labels[:0]}
	defer func() { t.keys, t.labels = d.Keys[:0], d.Labels[:0] }() // what grew, for the next one
	switch b := e.Body.(type) {
	case *messages.Envelope_BufferResponse:
		describeDelivery(&d, b.BufferResponse.GetBuffer())
		if d.Records == 0 && d.Watermark == nil && d.Barrier == 0 && !d.End {
			return // a buffer of watermark statuses only
		}
	case *messages.Envelope_FetchResponse:
		for _, p := range b.FetchResponse.Partitions {
			if len(p.Records) == 0 {
				continue
			}
			dp := d
			pp := p.Partition
			dp.Partition = &pp
			for _, r := range p.Records {
				addRecord(&dp, r.Key, r.Timestamp)
			}
			t.add(dp)
		}
		return
	case *messages.Envelope_Produce:
		for _, r := range b.Produce.Records {
			addRecord(&d, r.Key, r.Timestamp)
		}
		if d.Records == 0 {
			return
		}
	case *messages.Envelope_AddCredit:
		d.Credit = b.AddCredit.Credit
	case *messages.Envelope_PartitionRequest:
		if b.PartitionRequest.Local {
			return // a LocalInputChannel asks for a view, without credit
		}
		d.Credit = b.PartitionRequest.Credit
	case *messages.Envelope_TriggerCheckpoint:
		d.Barrier, d.Unaligned = b.TriggerCheckpoint.CheckpointId, b.TriggerCheckpoint.Unaligned
	case *messages.Envelope_AcknowledgeCheckpoint:
		d.Barrier = b.AcknowledgeCheckpoint.CheckpointId
	case *messages.Envelope_DeclineCheckpoint:
		d.Barrier = b.DeclineCheckpoint.CheckpointId
	case *messages.Envelope_NotifyCheckpointComplete:
		d.Barrier = b.NotifyCheckpointComplete.CheckpointId
	case *messages.Envelope_NotifyCheckpointAborted:
		d.Barrier = b.NotifyCheckpointAborted.CheckpointId
	case *messages.Envelope_SubmitTask:
		if d.Barrier = b.SubmitTask.RestoreCheckpointId; d.Barrier > 0 {
			d.Label = "restore"
		}
	case *messages.Envelope_TaskExecutionState:
		d.Label = strings.ToLower(status.Execution(b.TaskExecutionState.State).String())
	}
	if d.Barrier > 0 && d.Label != "" {
		d.Label += " " + strconv.FormatInt(d.Barrier, 10)
	}
	t.add(d)
}

// add lists d, or merges it into its link's stream when the batch or the
// link has had its share.
func (t *trafficTap) add(d Delivery) {
	k := linkKey{from: d.From, to: d.To, kind: d.Kind, part: -1}
	if d.Partition != nil {
		k.part = *d.Partition
	}
	if d.Kind == trafficData && d.Records == 0 && d.Barrier == 0 && !d.End && d.Watermark != nil {
		// a buffer that carries only a watermark: the link's newest counts
		for i := len(t.batch.Deliveries) - 1; i >= 0; i-- {
			x := &t.batch.Deliveries[i]
			if x.From == d.From && x.To == d.To && x.Records == 0 && x.Barrier == 0 && !x.End && x.Watermark != nil {
				*x = d.owned()
				return
			}
		}
	}
	listed := len(t.batch.Deliveries) < maxDeliveries && (d.Barrier > 0 && d.Kind == trafficData || t.perLink[k] < perLinkDeliveries)
	if listed {
		t.perLink[k]++
		t.batch.Deliveries = append(t.batch.Deliveries, d.owned())
		return
	}
	s := t.streams[k]
	if s == nil {
		if len(t.streams) >= maxStreams {
			t.batch.Dropped++
			return
		}
		s = &Stream{Kind: d.Kind, From: d.From, To: d.To, Partition: d.Partition}
		t.streams[k] = s
		t.batch.Streams = append(t.batch.Streams, s)
	}
	s.Envelopes++
	s.Records += d.Records
	if d.Watermark != nil {
		s.Watermark = d.Watermark
	}
	// the delivery's own key counts are not kept: its first keys stand for
	// its records, in proportion
	if len(d.Keys) > 0 {
		per, rest := d.Records/len(d.Keys), d.Records%len(d.Keys)
		for i, key := range d.Keys {
			n := per
			if i < rest {
				n++
			}
			s.addKey(key, n)
		}
	}
}

func (s *Stream) addKey(key string, n int) {
	for i := range s.Keys {
		if s.Keys[i].Key == key {
			s.Keys[i].Count += n
			return
		}
	}
	if len(s.Keys) < maxStreamKeys {
		s.Keys = append(s.Keys, KeyCount{Key: key, Count: n})
		return
	}
	s.Other += n
}

// take returns the traffic since the last take (up to virtual time now)
// and starts a new batch.
func (t *trafficTap) take(now vt.Time) *Batch {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	b := t.batch
	b.Seq, b.From, b.To = t.seq, t.from, now.Micros()
	if b.Deliveries == nil {
		b.Deliveries = []Delivery{}
	}
	t.from = now.Micros()
	t.batch = Batch{}
	clear(t.perLink)
	clear(t.streams)
	return &b
}

// trafficOf says how the page draws an envelope: its traffic kind ("" for
// what it does not draw: timers, the scheduler's own, traffic between a
// channel and its own task, Kafka fetch requests and offsets, heartbeats), the
// message's name and an RPC's short label.
func trafficOf(e *messages.Envelope) (kind, msg, label string) {
	switch e.Body.(type) {
	case *messages.Envelope_BufferResponse:
		return trafficData, "BufferResponse", ""
	case *messages.Envelope_FetchResponse:
		return trafficData, "FetchResponse", ""
	case *messages.Envelope_Produce:
		return trafficData, "Produce", ""
	case *messages.Envelope_AddCredit:
		return trafficCredit, "AddCredit", ""
	case *messages.Envelope_PartitionRequest:
		return trafficCredit, "PartitionRequest", ""
	case *messages.Envelope_BacklogAnnouncement:
		return trafficCredit, "BacklogAnnouncement", ""
	case *messages.Envelope_ResumeConsumption:
		return trafficCredit, "ResumeConsumption", ""
	case *messages.Envelope_TriggerCheckpoint:
		return trafficRPC, "TriggerCheckpoint", "trigger"
	case *messages.Envelope_AcknowledgeCheckpoint:
		return trafficRPC, "AcknowledgeCheckpoint", "ack"
	case *messages.Envelope_DeclineCheckpoint:
		return trafficRPC, "DeclineCheckpoint", "decline"
	case *messages.Envelope_NotifyCheckpointComplete:
		return trafficRPC, "NotifyCheckpointComplete", "complete"
	case *messages.Envelope_NotifyCheckpointAborted:
		return trafficRPC, "NotifyCheckpointAborted", "abort"
	case *messages.Envelope_SubmitTask:
		return trafficRPC, "SubmitTask", "deploy"
	case *messages.Envelope_CancelTask:
		return trafficRPC, "CancelTask", "cancel"
	case *messages.Envelope_TaskExecutionState:
		return trafficRPC, "TaskExecutionState", ""
	case *messages.Envelope_AddSplits:
		return trafficRPC, "AddSplits", "splits"
	case *messages.Envelope_NoMoreSplits:
		return trafficRPC, "NoMoreSplits", ""
	case *messages.Envelope_ReaderRegistration:
		return trafficRPC, "ReaderRegistration", ""
	case *messages.Envelope_ReportedWatermarkEvent:
		return trafficRPC, "ReportedWatermarkEvent", ""
	case *messages.Envelope_WatermarkAlignmentEvent:
		return trafficRPC, "WatermarkAlignmentEvent", ""
	case *messages.Envelope_TxnRequest:
		return trafficRPC, "TxnRequest", ""
	case *messages.Envelope_RegisterTaskExecutor:
		return trafficRPC, "RegisterTaskExecutor", ""
	case *messages.Envelope_RegistrationResponse:
		return trafficRPC, "RegistrationResponse", ""
	case *messages.Envelope_DeclareResourceRequirements:
		return trafficRPC, "DeclareResourceRequirements", ""
	case *messages.Envelope_RequestSlot:
		return trafficRPC, "RequestSlot", ""
	case *messages.Envelope_OfferSlots:
		return trafficRPC, "OfferSlots", ""
	case *messages.Envelope_SlotOfferResponse:
		return trafficRPC, "SlotOfferResponse", ""
	}
	return "", "", ""
}

// owned is d with keys and labels of its own (not the tap's scratch).
func (d Delivery) owned() Delivery {
	if len(d.Keys) == 0 {
		d.Keys = nil
	} else {
		d.Keys = slices.Clone(d.Keys)
	}
	if len(d.Labels) == 0 {
		d.Labels = nil
	} else {
		d.Labels = slices.Clone(d.Labels)
	}
	return d
}

func addRecord(d *Delivery, key string, ts int64) {
	d.Records++
	if len(d.Labels) < maxLabels {
		d.Labels = append(d.Labels, KeyTime{Key: key, TS: ts})
	}
	if len(d.Keys) < maxFlightKeys && !slices.Contains(d.Keys, key) {
		d.Keys = append(d.Keys, key)
	}
}

func describeDelivery(d *Delivery, b *messages.Buffer) {
	cp, unaligned, end := walkBuffer(b, func(key string, ts int64) { addRecord(d, key, ts) }, func(w int64) { d.Watermark = &w })
	d.Barrier, d.Unaligned, d.End = cp, unaligned, end
}
