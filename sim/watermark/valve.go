package watermark

import "errors"

// ErrNegativeChannelCount refuses a valve with a negative number of input channels (Java
// would fail allocating the channel array).
var ErrNegativeChannelCount = errors.New("numInputChannels must not be negative")

// inputChannelStatus is StatusWatermarkValve.InputChannelStatus (SubpartitionStatus in
// later versions).
type inputChannelStatus struct {
	watermark int64
	idle      bool
	// aligned: the channel takes part in the minimum. A channel is unaligned while idle,
	// and after becoming active again until its watermark catches up with the valve's
	// last output.
	aligned bool
}

// StatusWatermarkValve combines the watermarks and WatermarkStatus of an operator's input
// channels into the operator's input watermark, following
// org.apache.flink.streaming.runtime.watermarkstatus.StatusWatermarkValve:
//
//   - every channel starts ACTIVE, aligned, at Long.MIN_VALUE; the valve starts ACTIVE
//     with last output Long.MIN_VALUE;
//   - a watermark is ignored on an idle channel, while the whole valve is idle, or when it
//     is not above the channel's own watermark; otherwise it raises the channel, realigns
//     an unaligned channel that caught up with the last output, and the valve emits the
//     minimum over aligned channels if that minimum is above its last output (so the
//     output never goes backwards);
//   - a channel going idle leaves the minimum: if it held the minimum, the minimum over the
//     remaining aligned channels may be emitted; if it was the last active channel, the
//     maximum watermark over all channels is flushed (when the channel held the last
//     output) and then the valve emits IDLE;
//   - a channel going active again is aligned at once only if its watermark is not below
//     the last output (otherwise it must catch up first); the valve emits ACTIVE if it was
//     idle. No watermark is emitted on that toggle.
//
// Channel indexes out of range are ignored (nothing changes, nothing is emitted). The
// minimum is found by a scan, O(channels) per input; Flink uses a heap with the same
// result. The zero value is a valve with no channel; use NewStatusWatermarkValve.
type StatusWatermarkValve struct {
	channels   []inputChannelStatus
	lastOutput int64
	idle       bool
}

// NewStatusWatermarkValve returns a valve for numInputChannels channels; a negative count
// gives ErrNegativeChannelCount.
func NewStatusWatermarkValve(numInputChannels int) (*StatusWatermarkValve, error) {
	if numInputChannels < 0 {
		return nil, ErrNegativeChannelCount
	}
	v := &StatusWatermarkValve{
		channels:   make([]inputChannelStatus, numInputChannels),
		lastOutput: MinWatermark,
	}
	for i := range v.channels {
		v.channels[i] = inputChannelStatus{watermark: MinWatermark, aligned: true}
	}
	return v, nil
}

// InputWatermark feeds watermark wm (event-time ms) from channel (0-based)
// (StatusWatermarkValve.inputWatermark). It returns the valve's last output watermark and
// whether this input made the valve emit a new one.
func (v *StatusWatermarkValve) InputWatermark(channel int, wm int64) (out int64, changed bool) {
	if channel < 0 || channel >= len(v.channels) {
		return v.lastOutput, false
	}
	ch := &v.channels[channel]
	if v.idle || ch.idle || wm <= ch.watermark {
		return v.lastOutput, false
	}
	ch.watermark = wm
	if !ch.aligned && wm >= v.lastOutput {
		// a previously unaligned channel is aligned again once it has caught up
		ch.aligned = true
	}
	return v.lastOutput, v.findAndOutputNewMinWatermarkAcrossAlignedChannels()
}

// InputWatermarkStatus feeds a WatermarkStatus from channel (idle true for IDLE, false for
// ACTIVE) (StatusWatermarkValve.inputWatermarkStatus). It returns the valve's last output
// watermark and whether this input made it emit one, then the valve's status and whether
// this input made it emit a status. When both are emitted (the last channel going idle)
// the watermark comes first.
func (v *StatusWatermarkValve) InputWatermarkStatus(channel int, idle bool) (outWm int64, wmChanged bool, outIdle bool, statusChanged bool) {
	if channel < 0 || channel >= len(v.channels) {
		return v.lastOutput, false, v.idle, false
	}
	ch := &v.channels[channel]
	switch {
	case idle && !ch.idle:
		ch.idle = true
		ch.aligned = false
		if !v.hasActiveChannels() {
			// No channel will advance any more: flush the maximum across all channels,
			// needed only if this channel held the last output.
			if ch.watermark == v.lastOutput {
				wmChanged = v.findAndOutputMaxWatermarkAcrossAllChannels()
			}
			v.idle = true
			statusChanged = true
		} else if ch.watermark == v.lastOutput {
			// It held the minimum: the remaining aligned channels may allow a new one.
			wmChanged = v.findAndOutputNewMinWatermarkAcrossAlignedChannels()
		}
	case !idle && ch.idle:
		ch.idle = false
		if ch.watermark >= v.lastOutput {
			ch.aligned = true
		}
		if v.idle {
			v.idle = false
			statusChanged = true
		}
	}
	return v.lastOutput, wmChanged, v.idle, statusChanged
}

func (v *StatusWatermarkValve) hasActiveChannels() bool {
	for i := range v.channels {
		if !v.channels[i].idle {
			return true
		}
	}
	return false
}

func (v *StatusWatermarkValve) findAndOutputNewMinWatermarkAcrossAlignedChannels() bool {
	found := false
	minimum := MaxWatermark
	for i := range v.channels {
		if v.channels[i].aligned {
			found = true
			if v.channels[i].watermark < minimum {
				minimum = v.channels[i].watermark
			}
		}
	}
	if found && minimum > v.lastOutput {
		v.lastOutput = minimum
		return true
	}
	return false
}

func (v *StatusWatermarkValve) findAndOutputMaxWatermarkAcrossAllChannels() bool {
	maximum := MinWatermark
	for i := range v.channels {
		if v.channels[i].watermark > maximum {
			maximum = v.channels[i].watermark
		}
	}
	if maximum > v.lastOutput {
		v.lastOutput = maximum
		return true
	}
	return false
}

// LastOutputWatermark is the last watermark the valve emitted (Long.MIN_VALUE before any).
func (v *StatusWatermarkValve) LastOutputWatermark() int64 { return v.lastOutput }

// IsIdle reports whether the valve's last emitted status is IDLE.
func (v *StatusWatermarkValve) IsIdle() bool { return v.idle }

// NumChannels is the number of input channels.
func (v *StatusWatermarkValve) NumChannels() int { return len(v.channels) }

// ChannelStatus returns a channel's watermark, idleness and alignment
// (StatusWatermarkValve.getInputChannelStatus); ok is false for an index out of range.
func (v *StatusWatermarkValve) ChannelStatus(channel int) (wm int64, idle bool, aligned bool, ok bool) {
	if channel < 0 || channel >= len(v.channels) {
		return 0, false, false, false
	}
	ch := v.channels[channel]
	return ch.watermark, ch.idle, ch.aligned, true
}
