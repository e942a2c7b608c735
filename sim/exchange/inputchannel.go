package exchange

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/netty"
	"github.com/flinksim/flinksim/sim/vt"
)

// InputChannel is the consumer end of one ResultSubpartition: a
// LocalInputChannel when producer and consumer share a TaskManager, a
// RemoteInputChannel otherwise
// (org.apache.flink.runtime.io.network.partition.consumer.RemoteInputChannel
// with its BufferManager).
//
// Buffers: the channel owns taskmanager.network.memory.buffers-per-channel
// exclusive buffers, which are its initial credit in the PartitionRequest.
// When a sender's backlog exceeds the channel's free buffers it asks its
// InputGate for floating buffers (taskmanager.network.memory.
// floating-buffers-per-gate, shared by the gate's channels) and gives them
// back once the backlog is served. Every free buffer is one credit, announced
// to the producer with AddCredit. It checks every BufferResponse's sequence
// number and that it had credit for it, hands the buffer to its subtask's
// InputGate and, when the subtask recycles it, frees the buffer again.
type InputChannel struct {
	cfg          *config.Config
	consumer     string
	index        int
	producer     string
	subpartition int
	local        bool
	connection   string // ConnectionID of a remote channel: producer's TaskManager address + connection index
	producerTM   string
	latency      vt.Time
	broken       bool // the connection to the producer broke (network.go): nothing more on it

	bm      BufferManager // exclusive and floating buffers, credit (remote channels)
	nextSeq int32         // expected sequence number

	buffersIn, recordsIn, bytesIn, nettyBytes int64
}

// NewInputChannel returns the channel of consumer subtask consumer (its
// channel index) reading subpartition of producer. local selects a
// LocalInputChannel; a remote one names its connection (many channels share
// one TCP connection per TaskManager pair).
func NewInputChannel(cfg *config.Config, consumer string, index int, producer, producerTM string, subpartition int, local bool) *InputChannel {
	lat := vt.FromDuration(cfg.NetworkLatency)
	if local {
		lat = vt.FromDuration(cfg.LocalLatency)
	}
	return &InputChannel{cfg: cfg, consumer: consumer, index: index, producer: producer, subpartition: subpartition,
		local: local, latency: lat, connection: producerTM + ":data#0", producerTM: producerTM}
}

// Step implements kernel.Component.
func (c *InputChannel) Step(o *kernel.Out, env *messages.Envelope) {
	if _, end := env.Body.(*messages.Envelope_EndOfRun); c.broken && !end {
		return
	}
	switch b := env.Body.(type) {
	case *messages.Envelope_ConnectionLost:
		c.connectionLost(o, b.ConnectionLost.Peer)
	case *messages.Envelope_Start:
		req := &messages.PartitionRequest{PartitionId: c.producer, SubpartitionIndex: int32(c.subpartition),
			ReceiverId: o.Name(), Local: c.local}
		ev := eventlog.PartitionRequest{Channel: "LocalInputChannel", Producer: c.producer, Subpartition: int64(c.subpartition)}
		if !c.local {
			// only a RemoteInputChannel has buffers of its own: exclusive
			// ones (its initial credit) and floating ones from the gate
			// (RemoteInputChannel.setup); a LocalInputChannel reads the
			// producer's buffers
			c.bm = NewBufferManager(c.cfg.BuffersPerChannel)
			req.Credit = int32(c.bm.Available)
			ev.Channel, ev.Remote, ev.InitialCredit, ev.ConnectionID = "RemoteInputChannel", true, int64(c.bm.Available), c.connection
			c.nettyBytes += int64(partitionRequestFrameLength)
			if c.cfg.LogNettyFrames {
				LogFrame(o, c.producer, netty.PartitionRequest{ReceiverID: ChannelID(o.Name()), Credit: req.Credit,
					PartitionID:   ResultPartitionID(c.producer),
					QueueIndexSet: netty.ResultSubpartitionIndexSet{StartIndex: req.SubpartitionIndex, EndIndex: req.SubpartitionIndex}})
			}
		}
		o.Log(ev)
		o.Send(c.producer, c.latency, &messages.Envelope_PartitionRequest{PartitionRequest: req})
	case *messages.Envelope_BufferResponse:
		c.onBuffer(o, b.BufferResponse)
	case *messages.Envelope_ResumeConsumption:
		c.bm.OnResumeConsumption() // without exclusive buffers the producer's credit restarts from 0 too
		if !c.local {
			c.nettyBytes += int64(resumeConsumptionFrameLength)
			if c.cfg.LogNettyFrames {
				LogFrame(o, c.producer, netty.ResumeConsumption{ReceiverID: ChannelID(o.Name())})
			}
		}
		o.Send(c.producer, c.latency, &messages.Envelope_ResumeConsumption{ResumeConsumption: &messages.ResumeConsumption{
			ReceiverId: o.Name(), SubpartitionIndex: int32(c.subpartition)}})
	case *messages.Envelope_RecycleBuffers:
		if c.local {
			c.recycleLocal(o, int(b.RecycleBuffers.Count))
			break
		}
		c.recycle(o, int(b.RecycleBuffers.Count))
	case *messages.Envelope_FloatingBuffers:
		// a grant the channel no longer needs goes straight back
		keep, back := c.bm.OnFloatingGranted(int(b.FloatingBuffers.Count))
		if back > 0 {
			c.returnFloating(o, back)
		}
		c.announce(o, keep)
	case *messages.Envelope_BacklogAnnouncement:
		m := b.BacklogAnnouncement
		o.Log(eventlog.BacklogAnnouncement{Producer: c.producer, Backlog: int64(m.Backlog), FreeBuffers: int64(c.bm.Available), BuffersInUse: int64(c.bm.InUse), FloatingBuffers: int64(c.bm.Floating)})
		c.onSenderBacklog(o, int(m.Backlog))
	case *messages.Envelope_AnnounceBufferSize:
		c.announceBufferSize(o, b.AnnounceBufferSize.BufferSize)
	case *messages.Envelope_EndOfRun:
		fields := []eventlog.Value{eventlog.I("channel_buffers_in", c.buffersIn), eventlog.I("channel_records_in", c.recordsIn),
			eventlog.I("channel_bytes_in", c.bytesIn)}
		if !c.local {
			fields = append(fields, eventlog.I("netty_bytes", c.nettyBytes))
		}
		o.Log(eventlog.FinalCounters{List: fields})
	}
}

func (c *InputChannel) onBuffer(o *kernel.Out, m *messages.BufferResponse) {
	if m.SequenceNumber != c.nextSeq {
		o.Invariant("buffer_sequence", "%s expected buffer #%d from %s, got #%d", o.Name(), c.nextSeq, c.producer, m.SequenceNumber)
		return
	}
	c.nextSeq++
	if !c.local {
		c.nettyBytes += int64(netty.BufferResponseFrameLength(int(m.Buffer.SizeBytes)))
	}
	if c.local {
		if !m.Buffer.IsEvent {
			c.buffersIn++
			c.recordsIn += int64(countRecords(m.Buffer))
			c.bytesIn += int64(m.Buffer.SizeBytes)
		}
		o.Send(c.consumer, 0, &messages.Envelope_ChannelBuffer{ChannelBuffer: &messages.ChannelBuffer{
			ChannelIndex: int32(c.index), SequenceNumber: m.SequenceNumber, Buffer: m.Buffer, Backlog: m.Backlog}})
		return
	}
	if !m.Buffer.IsEvent {
		if !c.bm.Take() {
			o.Invariant("network_buffer_bounds", "%s received a data buffer from %s without credit", o.Name(), c.producer)
			return
		}
		c.buffersIn++
		c.recordsIn += int64(countRecords(m.Buffer))
		c.bytesIn += int64(m.Buffer.SizeBytes)
	}
	o.Send(c.consumer, 0, &messages.Envelope_ChannelBuffer{ChannelBuffer: &messages.ChannelBuffer{
		ChannelIndex: int32(c.index), SequenceNumber: m.SequenceNumber, Buffer: m.Buffer, Backlog: m.Backlog}})
	if b := m.Buffer; b.IsEvent && b.Kinds[0] == KindBarrier && !b.Unaligned && c.bm.Exclusive == 0 {
		// an aligned barrier blocks the producer until ResumeConsumption:
		// a channel without exclusive buffers gives its free floating
		// buffers back to the gate meanwhile, so the other channels can
		// bring their barriers (RemoteInputChannel with initialCredit 0)
		if n := c.bm.OnAlignedBarrier(); n > 0 {
			c.returnFloating(o, n)
		}
		return
	}
	c.onSenderBacklog(o, int(m.Backlog))
}

// onSenderBacklog asks the gate for floating buffers when the sender's
// backlog needs more than the channel's free buffers
// (RemoteInputChannel.onSenderBacklog).
func (c *InputChannel) onSenderBacklog(o *kernel.Out, backlog int) {
	if want := c.bm.OnSenderBacklog(backlog, c.cfg.FloatingBuffersPerGate); want > 0 {
		o.Send(c.consumer, 0, &messages.Envelope_RequestFloatingBuffers{RequestFloatingBuffers: &messages.RequestFloatingBuffers{
			ChannelIndex: int32(c.index), Count: int32(want)}})
	}
}

// recycle frees n buffers the subtask consumed: a floating buffer the
// channel no longer needs goes back to the gate, any other becomes a credit
// again (BufferManager.recycle).
func (c *InputChannel) recycle(o *kernel.Out, n int) {
	credit, back := c.bm.Recycle(n)
	for i := 0; i < back; i++ {
		c.returnFloating(o, 1) // one message per recycled buffer, as each buffer's recycler calls the pool
	}
	c.announce(o, credit)
}

// recycleLocal is the task recycling n buffers a local channel read: the
// producer takes back the segments among them and the channel reads its
// next buffer (LocalInputChannel reads the subpartition view one buffer at a
// time, when its task asks for the next).
func (c *InputChannel) recycleLocal(o *kernel.Out, n int) {
	o.Send(c.producer, c.latency, &messages.Envelope_LocalBufferRecycled{LocalBufferRecycled: &messages.LocalBufferRecycled{
		SubpartitionIndex: int32(c.subpartition), Count: int32(n)}})
}

func (c *InputChannel) returnFloating(o *kernel.Out, n int) {
	o.Send(c.consumer, 0, &messages.Envelope_ReturnFloatingBuffers{ReturnFloatingBuffers: &messages.ReturnFloatingBuffers{
		ChannelIndex: int32(c.index), Count: int32(n)}})
}

// announce sends AddCredit for n new free buffers.
func (c *InputChannel) announce(o *kernel.Out, n int) {
	if n <= 0 {
		return
	}
	if !c.local {
		c.nettyBytes += int64(addCreditFrameLength)
		if c.cfg.LogNettyFrames {
			LogFrame(o, c.producer, netty.AddCredit{Credit: int32(n), ReceiverID: ChannelID(o.Name())})
		}
	}
	o.Send(c.producer, c.latency, &messages.Envelope_AddCredit{AddCredit: &messages.AddCredit{
		ReceiverId: o.Name(), Credit: int32(n), SubpartitionIndex: int32(c.subpartition)}})
}

// announceBufferSize tells the producer's subpartition the buffer size the
// gate's debloater chose: a RemoteInputChannel sends NettyMessage.
// NewBufferSize over its connection (notifyNewBufferSize); a
// LocalInputChannel calls its subpartition view (ResultSubpartitionView.
// notifyNewBufferSize), carried here as a message with the local latency.
func (c *InputChannel) announceBufferSize(o *kernel.Out, size int32) {
	if !c.local {
		c.nettyBytes += int64(newBufferSizeFrameLength)
		if c.cfg.LogNettyFrames {
			LogFrame(o, c.producer, netty.NewBufferSize{BufferSize: size, ReceiverID: ChannelID(o.Name())})
		}
	}
	o.Send(c.producer, c.latency, &messages.Envelope_NewBufferSize{NewBufferSize: &messages.NewBufferSize{
		ReceiverId: o.Name(), BufferSize: size, SubpartitionIndex: int32(c.subpartition)}})
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

// Frame sizes of the fixed-size NettyMessages a remote channel sends, for
// byte accounting (NettyMessage layouts, sim/netty).
var (
	partitionRequestFrameLength  = netty.FrameLength(netty.PartitionRequest{})
	addCreditFrameLength         = netty.FrameLength(netty.AddCredit{})
	resumeConsumptionFrameLength = netty.FrameLength(netty.ResumeConsumption{})
	newBufferSizeFrameLength     = netty.FrameLength(netty.NewBufferSize{})
)
