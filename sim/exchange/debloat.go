package exchange

import "math"

// Buffer debloating (FLIP-183), as Flink 1.20 has it: an input gate
// measures the bytes its task takes per second (ThroughputCalculator); every
// taskmanager.network.memory.buffer-debloat.period its task's debloat timer
// asks the gate's BufferDebloater for the buffer size that lets the buffers
// in use be consumed in buffer-debloat.target, smoothed by an exponential
// moving average (BufferSizeEMA); a size far enough from the last announced
// one is announced to every channel's producer (NettyMessage.NewBufferSize),
// whose subpartition gives its next buffers that size
// (PipelinedSubpartition.bufferSize).

// ThroughputCalculator measures a gate's throughput in bytes per second
// over the time it had data to give
// (org.apache.flink.runtime.throughput.ThroughputCalculator): the bytes of
// the buffers and events the task took, over the time measured, which
// pauses while the gate has nothing to give (SingleInputGate.
// getNextBufferOrEvent finding no data) and resumes with the next buffer.
// Times are virtual milliseconds, as Flink's clock.absoluteTimeMillis.
type ThroughputCalculator struct {
	throughput  int64 // the last throughput calculated (bytes/s)
	accumulated int64 // bytes since the last calculation
	measured    int64 // ms measured since the last calculation
	start       int64 // when the current measurement started (ms); notTracked: paused
}

const notTracked = -1

// NewThroughputCalculator returns a calculator that has measured nothing.
func NewThroughputCalculator() ThroughputCalculator {
	return ThroughputCalculator{start: notTracked}
}

// IncomingDataSize counts bytes the task took at now (ms); it resumes a
// paused measurement.
func (c *ThroughputCalculator) IncomingDataSize(now, bytes int64) {
	if c.start == notTracked {
		c.start = now
	}
	c.accumulated += bytes
}

// PauseMeasurement stops the clock at now: the gate has no data to give.
func (c *ThroughputCalculator) PauseMeasurement(now int64) {
	if c.start != notTracked {
		c.measured += now - c.start
	}
	c.start = notTracked
}

// ResumeMeasurement starts the clock again at now, when it is paused.
func (c *ThroughputCalculator) ResumeMeasurement(now int64) {
	if c.start == notTracked {
		c.start = now
	}
}

// CalculateThroughput returns the throughput since the last calculation in
// bytes per second, and starts a new period at now. With no time measured
// it returns the last throughput.
func (c *ThroughputCalculator) CalculateThroughput(now int64) int64 {
	if c.start != notTracked {
		c.measured += now - c.start
		c.start = now
	}
	if c.measured > 0 {
		c.throughput = int64(float64(c.accumulated) / float64(c.measured) * 1000)
	}
	c.accumulated, c.measured = 0, 0
	return c.throughput
}

// BufferSizeEMA is the exponential moving average of the buffer size
// (org.apache.flink.runtime.throughput.BufferSizeEMA): alpha = 2 / (samples
// + 1); one step moves at most as far up as down, since the instant size is
// capped at twice the current one; the result stays within [min, max].
type BufferSizeEMA struct {
	min, max int
	alpha    float64
	last     float64
}

// NewBufferSizeEMA starts at maxSize.
func NewBufferSizeEMA(maxSize, minSize, samples int) BufferSizeEMA {
	return BufferSizeEMA{min: minSize, max: maxSize, alpha: 2.0 / float64(samples+1), last: float64(maxSize)}
}

// CalculateBufferSize takes one sample, totalBytes spread over buffers
// buffers (> 0), and returns the new average, rounded.
func (e *BufferSizeEMA) CalculateBufferSize(totalBytes int64, buffers int) int {
	desirable := math.Min(float64(totalBytes)/float64(buffers), 2*e.last)
	e.last += e.alpha * (desirable - e.last)
	e.last = math.Max(float64(e.min), math.Min(e.last, float64(e.max)))
	return int(math.Round(e.last))
}

// BufferDebloater chooses a gate's buffer size
// (org.apache.flink.runtime.throughput.BufferDebloater): the bytes the gate
// takes in the target time, spread over the buffers in use, averaged. It
// starts at the segment size.
type BufferDebloater struct {
	targetMs  int64
	min, max  int
	threshold float64 // threshold-percentages / 100
	ema       BufferSizeEMA
	lastSize  int
	// LastEstimatedTimeToConsumeMs is the time the buffers in use take to
	// consume at the last size and throughput (estimatedTimeToConsumeBuffersMs).
	LastEstimatedTimeToConsumeMs int64
}

// NewBufferDebloater returns the debloater of a gate: target in ms, buffer
// sizes in bytes between minSize (taskmanager.memory.min-segment-size) and
// maxSize (the segment size).
func NewBufferDebloater(targetMs int64, maxSize, minSize, thresholdPercentages, samples int) *BufferDebloater {
	return &BufferDebloater{targetMs: targetMs, min: minSize, max: maxSize, threshold: float64(thresholdPercentages) / 100,
		ema: NewBufferSizeEMA(maxSize, minSize, samples), lastSize: maxSize}
}

// LastBufferSize is the size last announced (the segment size before the
// first): debloatedBufferSize.
func (d *BufferDebloater) LastBufferSize() int { return d.lastSize }

// RecalculateBufferSize takes the gate's throughput (bytes/s) and its
// buffers in use, and returns the new size and true when it is to be
// announced: it differs from the last one by at least the threshold, or it
// reached the minimum or maximum.
func (d *BufferDebloater) RecalculateBufferSize(throughput int64, buffersInUse int) (int, bool) {
	inUse := max(1, buffersInUse)
	desiredTotal := throughput * d.targetMs / 1000
	size := d.ema.CalculateBufferSize(desiredTotal, inUse)
	d.LastEstimatedTimeToConsumeMs = int64(size) * int64(inUse) * 1000 / max(1, throughput)
	if d.skipUpdate(size) {
		return 0, false
	}
	d.lastSize = size
	return size, true
}

func (d *BufferDebloater) skipUpdate(size int) bool {
	if size == d.lastSize {
		return true
	}
	if size <= d.min || size >= d.max {
		return false
	}
	delta := int(float64(d.lastSize) * d.threshold)
	return abs(size-d.lastSize) < delta
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
