package watermark

// Emitter is the output gate between a watermark generator and the stream: it forwards a
// watermark only when it is strictly greater than the last forwarded one (initially
// Long.MIN_VALUE, so a MIN_VALUE proposal is never forwarded), and it forwards a
// WatermarkStatus only on a real toggle.
//
// It follows org.apache.flink.streaming.api.operators.source.WatermarkToDataOutput (the
// source reader's output) and TimestampsAndWatermarksOperator.WatermarkEmitter (the
// assignTimestampsAndWatermarks operator), which behave the same: forwarding a watermark
// first marks an idle output ACTIVE again; a watermark that is not forwarded does not.
// The zero value is not usable; use NewEmitter.
type Emitter struct {
	current int64
	idle    bool
	// forwarded counts every element sent downstream (watermarks and status changes),
	// so callers can tell whether a composite step forwarded anything.
	forwarded uint64
}

// NewEmitter returns an ACTIVE emitter whose last forwarded watermark is Long.MIN_VALUE.
func NewEmitter() *Emitter {
	return &Emitter{current: MinWatermark}
}

// EmitWatermark offers wm (event-time ms). If wm is strictly greater than the last
// forwarded watermark it is forwarded (after an ACTIVE status if the output was idle) and
// the result is (wm, true); otherwise nothing is forwarded and the result is
// (last forwarded watermark, false).
func (e *Emitter) EmitWatermark(wm int64) (out int64, changed bool) {
	if wm <= e.current {
		return e.current, false
	}
	e.current = wm
	e.MarkActive()
	e.forwarded++
	return wm, true
}

// MarkIdle forwards WatermarkStatus.IDLE unless the output is already idle; it reports
// whether the status was forwarded.
func (e *Emitter) MarkIdle() (changed bool) {
	if e.idle {
		return false
	}
	e.idle = true
	e.forwarded++
	return true
}

// MarkActive forwards WatermarkStatus.ACTIVE if the output is idle; it reports whether
// the status was forwarded.
func (e *Emitter) MarkActive() (changed bool) {
	if !e.idle {
		return false
	}
	e.idle = false
	e.forwarded++
	return true
}

// CurrentWatermark is the last forwarded watermark (Long.MIN_VALUE before the first).
func (e *Emitter) CurrentWatermark() int64 { return e.current }

// IsIdle reports whether the last forwarded status is IDLE.
func (e *Emitter) IsIdle() bool { return e.idle }
