package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/exchange"
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
			f.Text = b.Action.Text
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
	if b == nil {
		return
	}
	if b.IsEvent && b.CheckpointId > 0 {
		f.Barrier, f.Unaligned = b.CheckpointId, b.Unaligned
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
			addKey(f, key, ts)
		case exchange.KindWatermark:
			if i < len(b.Timestamps) {
				w := b.Timestamps[i]
				f.Watermark = &w
			}
		case exchange.KindEndOfPartition:
			f.End = true
		}
	}
}

func describeRecords(f *Flight, recs []*messages.KafkaRecord) {
	for _, r := range recs {
		addKey(f, r.Key, r.Timestamp)
	}
}
