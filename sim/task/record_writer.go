package task

// The task's output: the RecordWriter's channel selection (the edge's
// partitioner) and the ResultPartition's sends, each subpartition a FIFO
// connection to its consumer.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/netty"
	"github.com/flinksim/flinksim/sim/vt"
)

// target is the subpartition of a record: its key group's operator for a
// keyBy (KeyGroupStreamPartitioner), otherwise round robin
// (RebalancePartitioner, or ForwardPartitioner with one consumer).
func (t *StreamTask) target(key string) int {
	if t.hashOut {
		return keygroup.OperatorIndexForKeyGroup(t.maxP, len(t.consumers), int(keyGroupOf(key, t.maxP)))
	}
	if len(t.consumers) == 1 {
		return 0
	}
	t.rrNext = (t.rrNext + 1) % len(t.consumers)
	return t.rrNext
}

// flushSends sends every buffer the partition can send now, delay µs from
// now (the end of the slice that produced them).
func (t *StreamTask) flushSends(o *kernel.Out, delay vt.Time) {
	if t.rp == nil {
		return
	}
	t.sends = t.rp.Poll(t.sends[:0])
	if t.lastSend == nil {
		t.lastSend = make([]vt.Time, t.rp.NumSubpartitions())
	}
	for _, x := range t.sends {
		// a channel is a FIFO connection: nothing overtakes what was sent
		// on it before
		at := max(o.Now()+delay+t.channelLatency(x.Subpartition), t.lastSend[x.Subpartition])
		t.lastSend[x.Subpartition] = at
		if t.cfg.LogNettyFrames && t.d.ResultPartition.ConsumerLocations[x.Subpartition] != t.tm {
			if x.Response != nil {
				dt := netty.DataTypeDataBuffer
				if x.Response.Buffer.IsEvent {
					dt = netty.DataTypeEventBuffer
				}
				exchange.LogFrame(o, x.Receiver, netty.BufferResponse{ReceiverID: exchange.ChannelID(x.Receiver), SubpartitionID: int32(x.Subpartition),
					SequenceNumber: x.Response.SequenceNumber, Backlog: x.Response.Backlog, DataType: dt,
					Buffer: make([]byte, x.Response.Buffer.SizeBytes)})
			} else {
				exchange.LogFrame(o, x.Receiver, netty.BacklogAnnouncement{Backlog: x.Announcement.Backlog, ReceiverID: exchange.ChannelID(x.Receiver)})
			}
		}
		if x.Response != nil {
			o.SendAt(x.Receiver, at, &messages.Envelope_BufferResponse{BufferResponse: x.Response})
		} else {
			o.SendAt(x.Receiver, at, &messages.Envelope_BacklogAnnouncement{BacklogAnnouncement: x.Announcement})
		}
	}
	t.ck.outputBarrierSent(o)
	if t.finishedAll && !t.reported {
		t.report(o)
	}
}

// channelLatency is the latency to the consumer of subpartition i: local
// when it runs on this task manager, the network latency otherwise.
func (t *StreamTask) channelLatency(i int) vt.Time {
	if t.d.ResultPartition.ConsumerLocations[i] == t.tm {
		return vt.FromDuration(t.cfg.LocalLatency)
	}
	return vt.FromDuration(t.cfg.NetworkLatency)
}
