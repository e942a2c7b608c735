package kafka

import "github.com/flinksim/flinksim/sim/vt"

// maxViewRecords bounds the sink records the broker's view lists.
const maxViewRecords = 200

// KafkaView is the broker: the source topic's partitions and the sink
// topic with its transactions.
type KafkaView struct {
	SourceTopic string          `json:"source_topic"`
	Partitions  []PartitionView `json:"partitions"`
	SinkTopic   string          `json:"sink_topic"`
	SinkRecords int64           `json:"sink_records"`
	// the sink's records by transaction state, and partition 0's last
	// stable offset (where a read_committed consumer stops)
	SinkOpen         int   `json:"sink_open"`
	SinkPreCommitted int   `json:"sink_pre_committed"`
	SinkCommitted    int   `json:"sink_committed"`
	SinkAborted      int   `json:"sink_aborted"`
	SinkPlain        int   `json:"sink_plain"`
	LastStableOffset int64 `json:"last_stable_offset"`
	// Recent are the sink topic's last records, oldest first, with their
	// transaction state
	Recent []SinkRecordView `json:"recent"`
}

// PartitionView is one source partition.
type PartitionView struct {
	Partition       int   `json:"partition"`
	EndOffset       int64 `json:"end_offset"`
	ReadOffset      int64 `json:"read_offset"` // the consumer position after its last fetch
	Lag             int64 `json:"lag"`
	CommittedOffset int64 `json:"committed_offset"` // -1: none committed
	Paused          bool  `json:"paused"`           // pause-partition stalled its producer
}

// SinkRecordView is one record of the sink topic.
type SinkRecordView struct {
	Offset          int64  `json:"offset"`
	Key             string `json:"key"`
	Value           string `json:"value"` // the record's JSON
	State           string `json:"state"` // Open, PreCommitted, Committed, Aborted, or "" outside a transaction
	TransactionalID string `json:"transactional_id,omitempty"`
}

// Inspect implements kernel.Inspector.
func (k *Broker) Inspect(now vt.Time) any {
	v := &KafkaView{SourceTopic: k.cfg.SourceTopic, SinkTopic: k.sink.Topic().Name, SinkRecords: k.sink.Topic().Total(),
		LastStableOffset: k.sink.LastStableOffset(0)}
	v.SinkOpen, v.SinkPreCommitted, v.SinkCommitted, v.SinkAborted, v.SinkPlain = k.sink.Counts()
	// as the generator's timer left it (broker_ahead.go): its ticks before
	// now visible, and the tick at now once passed, the fetches answered
	// ahead of them at their new positions; put back before returning
	// (generating the ticks ahead draws what they would draw anyway: no
	// later step reads anything else). Between two steps at a tick's time
	// the broker had no part in, this is one tick behind the timer's view.
	pos := func(p int) int64 { return k.position[int32(p)] }
	if seen := now - 1; k.gen != nil && !k.ahead.ticking {
		if k.ahead.crossed >= now {
			seen = now
		}
		seen = max(seen, k.gen.Seen())
		k.gen.GenerateTo(seen)
		defer k.gen.PeekAt(seen).Back()
		pos = func(p int) int64 {
			at := k.position[int32(p)]
			for _, f := range k.parked {
				if f.sent == 0 || f.due > seen {
					continue
				}
				for i, fp := range f.req.Partitions {
					if int(fp.Partition) == p {
						at = f.pos[i]
					}
				}
			}
			return at
		}
	}
	for p := range k.source.NumPartitions() {
		end := k.source.EndOffset(p)
		pos := pos(p)
		c, ok := k.group.committed[int32(p)]
		if !ok {
			c = -1
		}
		v.Partitions = append(v.Partitions, PartitionView{Partition: p, EndOffset: end, ReadOffset: pos, Lag: end - pos, CommittedOffset: c,
			Paused: k.isPaused(p)})
	}
	end := k.sink.Topic().EndOffset(0)
	from := max(0, end-maxViewRecords)
	for _, r := range k.sink.Topic().Read(0, from, maxViewRecords) {
		st, id := k.sink.StateOf(0, r.Offset)
		rv := SinkRecordView{Offset: r.Offset, Key: r.Key, Value: string(r.Value), TransactionalID: id}
		if id != "" {
			rv.State = st.String()
		}
		v.Recent = append(v.Recent, rv)
	}
	return v
}
