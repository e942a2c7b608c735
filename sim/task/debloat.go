package task

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// gateDebloat is the buffer debloating of a task's InputGate (FLIP-183):
// SingleInputGate's ThroughputCalculator and BufferDebloater, which the
// task's debloat timer (StreamTask.scheduleBufferDebloater, every
// taskmanager.network.memory.buffer-debloat.period) asks for a new buffer
// size (SingleInputGate.triggerDebloating).
type gateDebloat struct {
	throughput exchange.ThroughputCalculator
	debloater  *exchange.BufferDebloater
	backlog    []int // per channel: the producer's backlog the channel's last buffer carried
}

// newGateDebloat returns the debloating of a gate of n channels, nil when
// taskmanager.network.memory.buffer-debloat.enabled is off.
func (g *oneInputStreamTask) newGateDebloat(n int) *gateDebloat {
	cfg := g.t.cfg
	if !cfg.DebloatEnabled {
		return nil
	}
	return &gateDebloat{throughput: exchange.NewThroughputCalculator(), backlog: make([]int, n),
		debloater: exchange.NewBufferDebloater(cfg.DebloatTarget.Milliseconds(), int(cfg.SegmentSize), int(cfg.MinSegmentSize),
			cfg.DebloatThresholdPercentages, cfg.DebloatSamples)}
}

// took counts a buffer or event the task took from the gate at now
// (SingleInputGate.getNextBufferOrEvent: the measurement resumes and the
// bytes count).
func (d *gateDebloat) took(now vt.Time, b *messages.Buffer) {
	if d == nil {
		return
	}
	ms := vt.Millis(now)
	d.throughput.ResumeMeasurement(ms)
	d.throughput.IncomingDataSize(ms, int64(b.SizeBytes))
}

// idle pauses the measurement at now: the gate had nothing to give.
func (d *gateDebloat) idle(now vt.Time) {
	if d != nil {
		d.throughput.PauseMeasurement(vt.Millis(now))
	}
}

// buffersInUse is SingleInputGate.getBuffersInUseCount: per channel the
// buffers queued in the gate plus the producer's backlog (a
// RemoteInputChannel's receivedBuffers and numRequiredBuffers -
// initialCredit; for a LocalInputChannel, whose queue is the producer's
// subpartition, the backlog its last buffer carried stands for the
// subpartition view's queued buffers).
func (g *oneInputStreamTask) buffersInUse() int {
	n := 0
	for ci := range g.gate.NumChannels() {
		n += len(g.gate.Channel(ci).Buffers) + max(0, g.debloat.backlog[ci])
	}
	return n
}

// triggerDebloating recalculates the gate's buffer size from the
// throughput since the last time and the buffers in use, and, when the
// debloater announces it, logs it and tells every channel not finished
// (SingleInputGate.triggerDebloating, announceBufferSize), each of which
// tells its producer (RemoteInputChannel / LocalInputChannel.
// announceBufferSize).
func (g *oneInputStreamTask) triggerDebloating(o *kernel.Out) {
	d := g.debloat
	if d == nil || g.gate.AllEnded() {
		return
	}
	throughput := d.throughput.CalculateThroughput(vt.Millis(o.Now()))
	inUse := g.buffersInUse()
	previous := d.debloater.LastBufferSize()
	size, announce := d.debloater.RecalculateBufferSize(throughput, inUse)
	if !announce {
		return
	}
	var channels []int
	for ci := range g.gate.NumChannels() {
		if !g.gate.Channel(ci).Ended {
			channels = append(channels, ci)
		}
	}
	o.Log(eventlog.BufferSizeAnnounced{BufferSize: int64(size), PreviousSize: int64(previous), Throughput: throughput,
		BuffersInUse: int64(inUse), EstimatedTimeToConsumeMs: d.debloater.LastEstimatedTimeToConsumeMs, Channels: int64(len(channels))})
	for _, ci := range channels {
		o.Send(jobgraph.ChannelName(o.Name(), ci), 0, &messages.Envelope_AnnounceBufferSize{
			AnnounceBufferSize: &messages.AnnounceBufferSize{BufferSize: int32(size)}})
	}
}

// addDebloatMetrics fills debloatedBufferSize and
// estimatedTimeToConsumeBuffersMs (NettyShuffleMetricFactory.
// registerDebloatingTaskMetrics: the smallest size and the longest time of
// the task's gates; here one gate).
func (g *oneInputStreamTask) addDebloatMetrics(m *eventlog.TaskMetrics) {
	if d := g.debloat; d != nil {
		m.HasDebloat = true
		m.DebloatedBufferSize = int64(d.debloater.LastBufferSize())
		m.EstimatedTimeToConsumeBuffersMs = d.debloater.LastEstimatedTimeToConsumeMs
	}
}
