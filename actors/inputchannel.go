package actors

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/vt"
)

// InputChannel is the consumer end of one ResultSubpartition: a
// LocalInputChannel when producer and consumer share a TaskManager, a
// RemoteInputChannel otherwise
// (org.apache.flink.runtime.io.network.partition.consumer.RemoteInputChannel).
// It requests its subpartition with an initial credit of
// taskmanager.network.memory.buffers-per-channel exclusive buffers, checks
// every BufferResponse's sequence number and credit, hands the buffer to its
// subtask's InputGate and, when the subtask recycles it, announces the credit
// back with AddCredit.
type InputChannel struct {
	cfg          *config.Config
	consumer     string
	index        int
	producer     string
	subpartition int
	local        bool
	latency      vt.Time
	granted      int   // credit the producer holds and has not used
	nextSeq      int32 // expected sequence number
	held         int   // buffers handed to the subtask, not yet recycled
	buffersIn    int64
	recordsIn    int64
	backlog      int32
}

// NewInputChannel returns the channel of consumer subtask consumer (its
// channel index) reading subpartition of producer. local selects a
// LocalInputChannel.
func NewInputChannel(cfg *config.Config, consumer string, index int, producer string, subpartition int, local bool) *InputChannel {
	lat := vt.FromDuration(cfg.NetworkLatency)
	if local {
		lat = vt.FromDuration(cfg.LocalLatency)
	}
	return &InputChannel{cfg: cfg, consumer: consumer, index: index, producer: producer, subpartition: subpartition,
		local: local, latency: lat}
}

// Receive implements Component.
func (c *InputChannel) Receive(o *Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		c.granted = c.cfg.BuffersPerChannel
		kind := "RemoteInputChannel"
		if c.local {
			kind = "LocalInputChannel"
		}
		o.Log(eventlog.KindPartitionRequest, messages.Str("channel", kind), messages.Str("producer", c.producer),
			messages.Int("subpartition", int64(c.subpartition)), messages.Int("initial_credit", int64(c.granted)))
		o.Send(c.producer, c.latency, &messages.Envelope_PartitionRequest{PartitionRequest: &messages.PartitionRequest{
			PartitionId: c.producer, SubpartitionIndex: int32(c.subpartition), ReceiverId: o.Name(), Credit: int32(c.granted)}})
	case *messages.Envelope_BufferResponse:
		m := b.BufferResponse
		if m.SequenceNumber != c.nextSeq {
			o.Invariant("buffer_sequence", "%s expected buffer #%d from %s, got #%d", o.Name(), c.nextSeq, c.producer, m.SequenceNumber)
			return
		}
		c.nextSeq++
		c.backlog = m.Backlog
		if !m.Buffer.IsEvent {
			if c.granted <= 0 {
				o.Invariant("credit_non_negative", "%s received a data buffer from %s without credit", o.Name(), c.producer)
				return
			}
			c.granted--
			c.held++
			c.buffersIn++
			c.recordsIn += int64(countRecords(m.Buffer))
		}
		o.Send(c.consumer, 0, &messages.Envelope_ChannelBuffer{ChannelBuffer: &messages.ChannelBuffer{
			ChannelIndex: int32(c.index), SequenceNumber: m.SequenceNumber, Buffer: m.Buffer}})
	case *messages.Envelope_RecycleBuffers:
		n := int(b.RecycleBuffers.Count)
		c.held -= n
		c.granted += n
		o.Send(c.producer, c.latency, &messages.Envelope_AddCredit{AddCredit: &messages.AddCredit{
			ReceiverId: o.Name(), Credit: int32(n), SubpartitionIndex: int32(c.subpartition)}})
	case *messages.Envelope_BacklogAnnouncement:
		c.backlog = b.BacklogAnnouncement.Backlog
		o.Log(eventlog.KindBacklogAnnouncement, messages.Str("producer", c.producer), messages.Int("backlog", int64(c.backlog)),
			messages.Int("credit", int64(c.granted)), messages.Int("buffers_queued", int64(c.held)))
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.KindFinal, messages.Int("channel_buffers_in", c.buffersIn), messages.Int("channel_records_in", c.recordsIn))
	}
}

func countRecords(b *messages.Buffer) int {
	n := 0
	for _, k := range b.Kinds {
		if k == 0 {
			n++
		}
	}
	return n
}
