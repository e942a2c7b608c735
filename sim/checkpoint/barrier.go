package checkpoint

// BarrierHandlerConfig configures the barrier handling of one task's input gate.
type BarrierHandlerConfig struct {
	// NumChannels is the number of input channels, numbered 0..NumChannels-1. Negative
	// counts as 0.
	NumChannels int
	// Unaligned is execution.checkpointing.unaligned.enabled (default false). Off: every
	// checkpoint is aligned (SingleCheckpointBarrierHandler.aligned). On: Flink's
	// alternating handler (SingleCheckpointBarrierHandler.alternating), where checkpoints
	// are unaligned from the first barrier when AlignedTimeoutMs is 0, and start aligned and
	// switch to unaligned after AlignedTimeoutMs otherwise. Savepoints are always aligned.
	Unaligned bool
	// AlignedTimeoutMs is execution.checkpointing.aligned-checkpoint-timeout (default 0),
	// only used when Unaligned is on: 0 means there is no aligned phase (checkpoints start
	// unaligned, so they never switch); > 0 means a checkpoint whose alignment has not
	// finished AlignedTimeoutMs after the checkpoint's trigger timestamp switches to
	// unaligned (CheckpointOptions.forConfig, BarrierAlignmentUtil.getTimerDelay). Negative
	// counts as 0.
	AlignedTimeoutMs int64
	// DisableCheckpointsAfterTasksFinish turns off
	// execution.checkpointing.checkpoints-after-tasks-finish.enabled (default on). On: a
	// finished channel (EndOfPartition) counts as aligned. Off: an EndOfPartition during a
	// checkpoint aborts it with CHECKPOINT_DECLINED_INPUT_END_OF_STREAM.
	DisableCheckpointsAfterTasksFinish bool
}

// Barrier is a CheckpointBarrier as it reaches a task.
type Barrier struct {
	// ID is the checkpoint id (> 0).
	ID int64
	// TimestampMs is the checkpoint's timestamp, the virtual time the coordinator
	// triggered it; the aligned-checkpoint-timeout counts from it, not from the barrier's
	// arrival.
	TimestampMs int64
	// Savepoint: the barrier belongs to a savepoint, always aligned and never timed out.
	Savepoint bool
	// Unaligned: the barrier arrives as an unaligned (priority) barrier although the
	// configuration made its checkpoint start aligned, because an upstream task switched
	// it after its own alignment timeout (CheckpointBarrier.asUnaligned). Ignored unless
	// BarrierHandlerConfig.Unaligned is on and the barrier is not a savepoint's.
	Unaligned bool
}

// BarrierAction is what the task must do after one input to its BarrierHandler, applied in
// field order. Channel lists are sorted ascending.
type BarrierAction struct {
	// Ignored: the input changed nothing (an obsolete barrier, a channel out of range, a
	// cancellation of an older checkpoint, a timer not due).
	Ignored bool
	// Abort: decline checkpoint AbortCheckpointID to the coordinator with Reason
	// (FailureReason.Message of FailureReason): a newer barrier subsumed it
	// (CHECKPOINT_DECLINED_SUBSUMED), a cancellation marker arrived
	// (CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER) or an input ended
	// (CHECKPOINT_DECLINED_INPUT_END_OF_STREAM).
	Abort             bool
	AbortCheckpointID int64
	Reason            string
	FailureReason     FailureReason
	// UnblockAll: release every channel that was blocked before this action (alignment
	// done or aborted); then block BlockChannels.
	UnblockAll bool
	// BlockChannels: stop consuming what follows these channels' barriers until released
	// (Flink: credit-based flow control blocks the producer after an aligned barrier; data
	// before the barrier still flows).
	BlockChannels []int
	// PrioritizeChannels: the barrier already queued in these channels (announced, not yet
	// processed) must overtake the data ahead of it (convertToPriorityEvent).
	PrioritizeChannels []int
	// TriggerSnapshot: take the snapshot of checkpoint CheckpointID now, and forward the
	// barrier downstream; Unaligned says whether it is an unaligned checkpoint.
	TriggerSnapshot bool
	// CheckpointID is the checkpoint this action is about (0 when none).
	CheckpointID int64
	Unaligned    bool
	// SwitchedToUnaligned: this aligned checkpoint timed out and continues unaligned.
	SwitchedToUnaligned bool
	// PersistChannels (unaligned snapshot only): channels whose in-flight data ahead of
	// the barrier is channel state: what is queued now in every channel whose barrier has
	// not been processed (and what the barrier overtook in the channel that delivered an
	// unaligned barrier), plus, for channels whose barrier is still to come, everything
	// they deliver until it arrives (see Persisting).
	PersistChannels []int
	// AlignmentStarted: this was the checkpoint's first barrier; StartDelayMs is the time
	// since the checkpoint's trigger, max(0, now - Barrier.TimestampMs).
	AlignmentStarted bool
	StartDelayMs     int64
	// AllBarriersReceived: every open channel delivered the barrier or ended; the alignment
	// lasted AlignmentDurationMs (last barrier time - first barrier time; 0 with one
	// channel). An unaligned checkpoint's channel state is complete now.
	AllBarriersReceived bool
	AlignmentDurationMs int64
}

// handlerState names the BarrierHandlerState implementations.
type handlerState int

const (
	// (Alternating)WaitingForFirstBarrier: aligned, no barrier of the current checkpoint yet.
	stWaitingForFirst handlerState = iota
	// (Alternating)CollectingBarriers: aligned, some barriers in, their channels blocked.
	stCollecting
	// AlternatingWaitingForFirstBarrierUnaligned: timed out before processing any barrier.
	stWaitingForFirstUnaligned
	// AlternatingCollectingBarriersUnaligned: the unaligned snapshot is taken, waiting for
	// the remaining barriers.
	stCollectingUnaligned
)

// BarrierHandler tracks checkpoint barriers on the input channels of one task, following
// org.apache.flink.streaming.runtime.io.checkpointing.SingleCheckpointBarrierHandler and its
// states (WaitingForFirstBarrier, CollectingBarriers, AlternatingWaitingForFirstBarrier,
// AlternatingCollectingBarriers, AlternatingWaitingForFirstBarrierUnaligned,
// AlternatingCollectingBarriersUnaligned, ChannelState) and BarrierAlignmentUtil (Flink 1.20).
//
//   - Aligned: the first barrier of a checkpoint blocks its channel, each further barrier
//     blocks its channel; when every open channel delivered it (or ended), the snapshot is
//     triggered and every channel released.
//   - Unaligned: the first barrier triggers the snapshot at once; channels whose barrier is
//     still to come persist their in-flight data until it arrives; aligned barriers that
//     still arrive (after a switch) block their channel until all are in.
//   - Aligned with timeout: aligned until AlignedTimeoutMs after the checkpoint's
//     timestamp (a timer, or a barrier found late), then unaligned.
//
// A barrier with a higher id than the checkpoint in progress aborts it (declined as
// CHECKPOINT_DECLINED_SUBSUMED) and starts the new one; barriers of older or finished
// checkpoints are ignored. It handles one checkpoint at a time.
//
// Every input takes the virtual time nowMs (milliseconds, never decreasing). The handler
// keeps no clock: NextTimer tells when OnTimer is due. Not safe for concurrent use.
type BarrierHandler struct {
	cfg         BarrierHandlerConfig
	alternating bool
	state       handlerState

	numOpen  int
	finished []bool

	currentID int64 // currentCheckpointId, -1 before any
	lastDone  int64 // lastCancelledOrCompletedCheckpointId
	pending   *Barrier

	aligned     []bool // alignedChannels
	numAligned  int
	targetCount int
	blocked     []bool // ChannelState.blockedChannels
	announced   []bool // ChannelState.sequenceNumberInAnnouncedChannels
	prioritized []bool // announced barriers converted to priority events
	persisting  []bool

	timerSet     bool
	timerAtMs    int64
	timerBarrier Barrier

	alignStartMs int64
}

// NewBarrierHandler returns a handler with every channel open and nothing blocked.
func NewBarrierHandler(cfg BarrierHandlerConfig) *BarrierHandler {
	if cfg.NumChannels < 0 {
		cfg.NumChannels = 0
	}
	if cfg.AlignedTimeoutMs < 0 {
		cfg.AlignedTimeoutMs = 0
	}
	n := cfg.NumChannels
	return &BarrierHandler{
		cfg:         cfg,
		alternating: cfg.Unaligned,
		numOpen:     n,
		finished:    make([]bool, n),
		currentID:   -1,
		lastDone:    -1,
		aligned:     make([]bool, n),
		blocked:     make([]bool, n),
		announced:   make([]bool, n),
		prioritized: make([]bool, n),
		persisting:  make([]bool, n),
	}
}

// isUnaligned is CheckpointOptions.isUnalignedCheckpoint for the barrier under this
// configuration (CheckpointOptions.forConfig).
func (h *BarrierHandler) isUnaligned(b Barrier) bool {
	if !h.cfg.Unaligned || b.Savepoint {
		return false
	}
	return b.Unaligned || h.cfg.AlignedTimeoutMs == 0
}

// isTimeoutable is CheckpointOptions.isTimeoutable: aligned with a positive timeout.
func (h *BarrierHandler) isTimeoutable(b Barrier) bool {
	return h.cfg.Unaligned && !b.Savepoint && !b.Unaligned && h.cfg.AlignedTimeoutMs > 0
}

// isTimedOut is ControllerImpl.isTimedOut.
func (h *BarrierHandler) isTimedOut(b Barrier, nowMs int64) bool {
	return h.isTimeoutable(b) && b.ID <= h.currentID && h.cfg.AlignedTimeoutMs < nowMs-b.TimestampMs
}

func (h *BarrierHandler) isCheckpointPending() bool {
	return h.currentID != h.lastDone && h.currentID >= 0
}

func (h *BarrierHandler) validChannel(ch int) bool { return ch >= 0 && ch < h.cfg.NumChannels }

// OnBarrier processes barrier b taken from channel at nowMs
// (SingleCheckpointBarrierHandler.processBarrier). A barrier of an older checkpoint, or of
// the current one once finished or aborted, is ignored. A newer one aborts the checkpoint
// in progress first. Channels out of range are ignored.
func (h *BarrierHandler) OnBarrier(channel int, b Barrier, nowMs int64) BarrierAction {
	if !h.validChannel(channel) || h.finished[channel] {
		return BarrierAction{Ignored: true}
	}
	if h.currentID > b.ID || (h.currentID == b.ID && !h.isCheckpointPending()) {
		// Flink resumes the channel the network paused at this aligned barrier; nothing
		// was blocked here.
		return BarrierAction{Ignored: true, CheckpointID: b.ID}
	}
	t := h.begin()
	h.checkNewCheckpoint(t, b, nowMs)
	h.markAligned(t, channel, b, nowMs, func() { h.barrierReceived(t, channel, b, nowMs) })
	return t.finish()
}

// OnAnnouncement processes an EventAnnouncement: channel has received barrier b (an aligned
// barrier with a timeout) and queued it behind data not processed yet
// (processBarrierAnnouncement). The checkpoint starts for the handler (its alignment timer
// included); if it already runs unaligned, the barrier is prioritized at once, otherwise
// when the alignment times out. Announcements of barriers without a timeout are ignored.
func (h *BarrierHandler) OnAnnouncement(channel int, b Barrier, nowMs int64) BarrierAction {
	if !h.validChannel(channel) || h.finished[channel] || !h.isTimeoutable(b) {
		return BarrierAction{Ignored: true}
	}
	t := h.begin()
	h.checkNewCheckpoint(t, b, nowMs)
	if h.currentID > b.ID || (h.currentID == b.ID && !h.isCheckpointPending()) {
		return t.finish()
	}
	switch h.state {
	case stWaitingForFirst, stCollecting:
		h.announced[channel] = true
	default:
		h.prioritized[channel] = true
		t.prioritize = append(t.prioritize, channel)
	}
	return t.finish()
}

// OnTimer fires the alignment timer if it is due at nowMs (the callback registered by
// registerAlignmentTimer): an aligned checkpoint whose barriers are not all in switches to
// unaligned. Not due, or no timer: Ignored.
func (h *BarrierHandler) OnTimer(nowMs int64) BarrierAction {
	if !h.timerSet || nowMs < h.timerAtMs {
		return BarrierAction{Ignored: true}
	}
	h.timerSet = false
	b := h.timerBarrier
	if h.currentID != b.ID || !h.isCheckpointPending() || h.numAligned == h.targetCount {
		return BarrierAction{Ignored: true}
	}
	t := h.begin()
	h.alignmentTimeout(t, b, nowMs, -1)
	return t.finish()
}

// NextTimer returns the virtual time (ms) at which OnTimer must be called, and false when no
// alignment timer is registered. The timer is registered with a checkpoint's first barrier
// or announcement when the checkpoint is aligned with a timeout, due at
// max(timestamp + AlignedTimeoutMs, registration time), and cancelled when the alignment
// ends or is aborted.
func (h *BarrierHandler) NextTimer() (int64, bool) { return h.timerAtMs, h.timerSet }

// OnEndOfPartition processes the end of channel's input (processEndOfPartition): the
// channel stops counting for later checkpoints and, with a checkpoint in progress, counts
// as aligned for it (or aborts it when DisableCheckpointsAfterTasksFinish). Channels out of
// range or already ended are ignored.
func (h *BarrierHandler) OnEndOfPartition(channel int, nowMs int64) BarrierAction {
	if !h.validChannel(channel) || h.finished[channel] {
		return BarrierAction{Ignored: true}
	}
	h.finished[channel] = true
	h.numOpen--
	h.persisting[channel] = false
	t := h.begin()
	if h.cfg.DisableCheckpointsAfterTasksFinish {
		if h.isCheckpointPending() {
			h.abortInternal(t, h.currentID, ReasonCheckpointDeclinedInputEndOfStream)
		} else {
			t.ignoredIfEmpty = true
		}
		return t.finish()
	}
	if !h.isCheckpointPending() || h.pending == nil {
		t.ignoredIfEmpty = true
		return t.finish()
	}
	b := *h.pending
	h.markAligned(t, channel, b, nowMs, func() { h.endOfPartitionReceived(t, channel, nowMs) })
	return t.finish()
}

// OnCancellation processes a CancelCheckpointMarker for checkpoint id (or an abort of it)
// (processCancellationBarrier): a newer id, or the current one while its alignment is
// under way, aborts with CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER, and later barriers
// of that checkpoint are ignored. Anything else is ignored. Note that, as in Flink, a
// cancellation of a newer id than the checkpoint in progress declines only the newer id.
func (h *BarrierHandler) OnCancellation(id int64) BarrierAction {
	if !(id > h.currentID || (id == h.currentID && h.numAligned > 0)) {
		return BarrierAction{Ignored: true}
	}
	t := h.begin()
	h.abortInternal(t, id, ReasonCheckpointDeclinedOnCancellationBarrier)
	return t.finish()
}

// Blocked reports whether channel is blocked by the current alignment.
func (h *BarrierHandler) Blocked(channel int) bool {
	return h.validChannel(channel) && h.blocked[channel]
}

// Persisting reports whether channel's incoming data is being recorded as channel state of
// the current unaligned checkpoint (from its snapshot until the channel's barrier, end of
// partition or an abort).
func (h *BarrierHandler) Persisting(channel int) bool {
	return h.validChannel(channel) && h.persisting[channel]
}

// CurrentCheckpoint returns the id of the latest checkpoint the handler has seen (in
// progress, done or aborted), -1 before any (getLatestCheckpointId).
func (h *BarrierHandler) CurrentCheckpoint() int64 { return h.currentID }

// CheckpointPending reports whether a checkpoint's alignment is under way.
func (h *BarrierHandler) CheckpointPending() bool { return h.isCheckpointPending() }

// NumOpenChannels returns the number of channels that have not ended.
func (h *BarrierHandler) NumOpenChannels() int { return h.numOpen }

// ---------------------------------------------------------------------------------------

// transition collects the effects of one input, like the callbacks Flink's states make.
type transition struct {
	h              *BarrierHandler
	before         []int // channels blocked when the input arrived
	act            BarrierAction
	prioritize     []int
	ignoredIfEmpty bool
}

func (h *BarrierHandler) begin() *transition {
	t := &transition{h: h}
	for ch, b := range h.blocked {
		if b {
			t.before = append(t.before, ch)
		}
	}
	return t
}

func (t *transition) finish() BarrierAction {
	h := t.h
	a := t.act
	released := false
	for _, ch := range t.before {
		if !h.blocked[ch] {
			released = true
		}
	}
	if released {
		a.UnblockAll = true
	}
	wasBlocked := make(map[int]bool, len(t.before))
	for _, ch := range t.before {
		wasBlocked[ch] = true
	}
	for ch, b := range h.blocked {
		if b && (!wasBlocked[ch] || released) {
			a.BlockChannels = append(a.BlockChannels, ch)
		}
	}
	if len(t.prioritize) > 0 {
		a.PrioritizeChannels = sortedUnique(t.prioritize)
	}
	if a.CheckpointID == 0 && h.currentID > 0 {
		a.CheckpointID = h.currentID
	}
	if t.ignoredIfEmpty && !a.Abort && !a.UnblockAll && len(a.BlockChannels) == 0 && !a.TriggerSnapshot && !a.AllBarriersReceived {
		a.Ignored = true
	}
	return a
}

func sortedUnique(chs []int) []int {
	seen := make(map[int]bool, len(chs))
	var out []int
	for _, c := range chs {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// checkNewCheckpoint starts checkpoint b.ID if it is newer than the current one, aborting
// a pending older one (CHECKPOINT_DECLINED_SUBSUMED) and registering the alignment timer.
func (h *BarrierHandler) checkNewCheckpoint(t *transition, b Barrier, nowMs int64) {
	if h.currentID >= b.ID {
		return
	}
	if h.isCheckpointPending() {
		h.abortInternal(t, h.currentID, ReasonCheckpointDeclinedSubsumed)
	}
	h.currentID = b.ID
	bb := b
	h.pending = &bb
	h.clearAligned()
	clear(h.prioritized)
	h.targetCount = h.numOpen
	if h.alternating && h.isTimeoutable(b) {
		delay := max(h.cfg.AlignedTimeoutMs-(nowMs-b.TimestampMs), 0)
		h.timerSet = true
		h.timerAtMs = nowMs + delay
		h.timerBarrier = b
	}
}

func (h *BarrierHandler) clearAligned() {
	clear(h.aligned)
	h.numAligned = 0
}

// markAligned is markCheckpointAlignedAndTransformState.
func (h *BarrierHandler) markAligned(t *transition, channel int, b Barrier, nowMs int64, transform func()) {
	if !h.aligned[channel] {
		h.aligned[channel] = true
		h.numAligned++
	}
	if h.numAligned == 1 {
		h.alignStartMs = nowMs
		t.act.AlignmentStarted = true
		t.act.StartDelayMs = max(0, nowMs-b.TimestampMs)
	}
	transform()
	if h.numAligned == h.targetCount {
		h.clearAligned()
		h.lastDone = h.currentID
		h.timerSet = false
		for ch := range h.persisting {
			h.persisting[ch] = false
		}
		t.act.AllBarriersReceived = true
		if h.targetCount > 1 {
			t.act.AlignmentDurationMs = nowMs - h.alignStartMs
		}
		t.act.CheckpointID = h.currentID
	}
}

func (h *BarrierHandler) allBarriersReceived() bool { return h.numAligned == h.targetCount }

// barrierReceived dispatches BarrierHandlerState.barrierReceived (markChannelBlocked=true:
// the barrier came over the network).
func (h *BarrierHandler) barrierReceived(t *transition, channel int, b Barrier, nowMs int64) {
	unaligned := h.isUnaligned(b)
	switch h.state {
	case stWaitingForFirst, stCollecting:
		if !h.alternating {
			// AbstractAlignedBarrierHandlerState
			h.blocked[channel] = true
			if h.allBarriersReceived() {
				h.triggerAligned(t, b)
				return
			}
			h.state = stCollecting
			return
		}
		// AbstractAlternatingAlignedBarrierHandlerState
		if unaligned {
			h.alignmentTimeout(t, b, nowMs, channel)
			h.barrierReceived(t, channel, b, nowMs)
			return
		}
		h.announced[channel] = false
		h.blocked[channel] = true
		if h.allBarriersReceived() {
			h.triggerAligned(t, b)
			return
		}
		if h.isTimedOut(b, nowMs) {
			h.blocked[channel] = false // removeFromBlocked
			h.alignmentTimeout(t, b, nowMs, channel)
			h.barrierReceived(t, channel, b, nowMs)
			return
		}
		h.state = stCollecting
	case stWaitingForFirstUnaligned:
		if !unaligned {
			h.blocked[channel] = true
		}
		h.triggerUnaligned(t, b, channel, unaligned || h.prioritized[channel])
		if h.allBarriersReceived() {
			h.stopUnaligned()
			return
		}
		h.state = stCollectingUnaligned
	case stCollectingUnaligned:
		if !unaligned {
			h.blocked[channel] = true
		}
		h.persisting[channel] = false
		if h.allBarriersReceived() {
			h.stopUnaligned()
		}
	}
}

// endOfPartitionReceived dispatches BarrierHandlerState.endOfPartitionReceived.
func (h *BarrierHandler) endOfPartitionReceived(t *transition, channel int, nowMs int64) {
	h.blocked[channel] = false // channelFinished
	h.announced[channel] = false
	switch h.state {
	case stCollecting:
		b := *h.pending
		if h.allBarriersReceived() {
			h.triggerAligned(t, b)
			return
		}
		if h.alternating && h.isTimedOut(b, nowMs) {
			h.alignmentTimeout(t, b, nowMs, -1)
			h.endOfPartitionReceived(t, channel, nowMs)
		}
	case stCollectingUnaligned:
		if h.allBarriersReceived() {
			h.stopUnaligned()
		}
	default:
		// waiting for the first barrier: no pending alignment to finish
	}
}

// alignmentTimeout dispatches BarrierHandlerState.alignedCheckpointTimeout; channel is the
// channel whose barrier is being processed (-1 for the timer).
func (h *BarrierHandler) alignmentTimeout(t *transition, b Barrier, nowMs int64, channel int) {
	// with no aligned phase configured (timeout 0) the checkpoint was unaligned from the
	// start: nothing switched
	switched := h.cfg.AlignedTimeoutMs > 0
	switch h.state {
	case stWaitingForFirst:
		h.prioritizeAllAnnouncements(t)
		h.state = stWaitingForFirstUnaligned
		t.act.SwitchedToUnaligned = switched
	case stCollecting:
		h.prioritizeAllAnnouncements(t)
		h.triggerUnaligned(t, b, channel, false)
		h.state = stCollectingUnaligned
		t.act.SwitchedToUnaligned = switched
	default:
		// already unaligned
	}
}

func (h *BarrierHandler) prioritizeAllAnnouncements(t *transition) {
	for ch, a := range h.announced {
		if a {
			h.announced[ch] = false
			h.prioritized[ch] = true
			t.prioritize = append(t.prioritize, ch)
		}
	}
}

// triggerAligned is triggerGlobalCheckpoint for an aligned checkpoint followed by
// unblockAllChannels and the return to WaitingForFirstBarrier.
func (h *BarrierHandler) triggerAligned(t *transition, b Barrier) {
	t.act.TriggerSnapshot = true
	t.act.CheckpointID = b.ID
	t.act.Unaligned = false
	clear(h.blocked)
	clear(h.announced)
	clear(h.prioritized)
	h.state = stWaitingForFirst
}

// triggerUnaligned is initInputsCheckpoint + checkpointStarted on every input +
// triggerGlobalCheckpoint with the barrier as unaligned. overtaken: the delivering channel's
// barrier overtook queued data (an unaligned or prioritized barrier).
func (h *BarrierHandler) triggerUnaligned(t *transition, b Barrier, delivering int, overtaken bool) {
	t.act.TriggerSnapshot = true
	t.act.CheckpointID = b.ID
	t.act.Unaligned = true
	for ch := 0; ch < h.cfg.NumChannels; ch++ {
		if h.finished[ch] {
			continue
		}
		if h.aligned[ch] {
			if ch == delivering && overtaken {
				t.act.PersistChannels = append(t.act.PersistChannels, ch)
			}
			continue
		}
		t.act.PersistChannels = append(t.act.PersistChannels, ch)
		h.persisting[ch] = true
	}
}

// stopUnaligned is checkpointStopped on every input + unblockAllChannels, back to
// AlternatingWaitingForFirstBarrier.
func (h *BarrierHandler) stopUnaligned() {
	clear(h.persisting)
	clear(h.blocked)
	clear(h.announced)
	clear(h.prioritized)
	h.state = stWaitingForFirst
}

// abortInternal aborts checkpoint cancelledID with reason (SingleCheckpointBarrierHandler.abortInternal).
func (h *BarrierHandler) abortInternal(t *transition, cancelledID int64, reason FailureReason) {
	h.currentID = max(cancelledID, h.currentID)
	h.lastDone = max(h.lastDone, cancelledID)
	h.pending = nil
	h.clearAligned()
	h.targetCount = 0
	h.timerSet = false
	// every state's abort releases all channels and stops persisting
	clear(h.blocked)
	clear(h.announced)
	clear(h.prioritized)
	clear(h.persisting)
	h.state = stWaitingForFirst
	t.act.Abort = true
	t.act.AbortCheckpointID = cancelledID
	t.act.FailureReason = reason
	t.act.Reason = reason.Message()
	// a later trigger in the same input overrides these
	t.act.TriggerSnapshot = false
	t.act.AlignmentStarted = false
	t.act.StartDelayMs = 0
}
