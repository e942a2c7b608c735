package exchange

// BufferManager is the buffer accounting of one remote or local input
// channel (org.apache.flink.runtime.io.network.partition.consumer.
// BufferManager with RemoteInputChannel's credit handling): the channel
// owns Exclusive buffers (taskmanager.network.memory.buffers-per-channel)
// and may borrow floating buffers from its InputGate's pool
// (floating-buffers-per-gate). Every free buffer is one credit the producer
// knows of.
//
// Invariant: Available + InUse = Exclusive + Floating, except while an
// aligned barrier blocks a channel without exclusive buffers (its free
// floating buffers went back to the gate and its credit restarts from 0).
type BufferManager struct {
	Exclusive int // exclusive buffers
	Floating  int // floating buffers held
	Available int // free buffers, each a credit announced to the producer
	InUse     int // buffers holding data, handed to the task
	Requested int // floating buffers asked of the gate, not yet granted
	Required  int // backlog + exclusive buffers (numRequiredBuffers)
	// InUseFloating are the floating buffers among InUse: a data buffer
	// takes a free floating buffer before an exclusive one
	// (AvailableBufferQueue.takeBuffer).
	InUseFloating int
}

// NewBufferManager returns the accounting of a channel with exclusive
// buffers, all free: its initial credit in the PartitionRequest.
func NewBufferManager(exclusive int) BufferManager {
	return BufferManager{Exclusive: exclusive, Available: exclusive, Required: exclusive}
}

// Take uses one free buffer for a data buffer that arrived; it reports
// false when there was none (the producer sent without credit).
func (b *BufferManager) Take() bool {
	if b.Available <= 0 {
		return false
	}
	if b.Floating > b.InUseFloating {
		b.InUseFloating++
	}
	b.Available--
	b.InUse++
	return true
}

// OnSenderBacklog takes the producer's backlog (from a BufferResponse or a
// BacklogAnnouncement) and returns how many floating buffers to ask the gate
// for: enough that backlog + exclusive buffers are free or asked for
// (RemoteInputChannel.onSenderBacklog). With no floating buffers in the gate
// (pool 0) it asks for none.
func (b *BufferManager) OnSenderBacklog(backlog, gateFloating int) (want int) {
	b.Required = backlog + b.Exclusive
	if want = b.Required - b.Available - b.Requested; want > 0 && gateFloating > 0 {
		b.Requested += want
		return want
	}
	return 0
}

// OnFloatingGranted takes n floating buffers the gate granted: the channel
// keeps what it still needs (each a new credit) and gives the rest back at
// once (RemoteInputChannel.notifyBufferAvailable).
func (b *BufferManager) OnFloatingGranted(n int) (credit, back int) {
	b.Requested -= n
	keep := min(n, max(0, b.Required-b.Available))
	b.Floating += keep
	b.Available += keep
	return keep, n - keep
}

// Recycle frees n buffers the task consumed. A floating buffer goes back to
// the gate: its recycler is the gate's LocalBufferPool, which hands it to
// the channel waiting longest for one (LocalBufferPool.recycle notifies its
// BufferListeners in order), so a channel with a long backlog cannot keep the
// gate's floating buffers from the others. An exclusive buffer comes back
// to the channel as a credit, and a free floating buffer the backlog no
// longer needs goes back instead (BufferManager.recycle,
// AvailableBufferQueue.addExclusiveBuffer).
func (b *BufferManager) Recycle(n int) (credit, back int) {
	b.InUse -= n
	for i := 0; i < n; i++ {
		if b.InUseFloating > 0 {
			b.InUseFloating--
			b.Floating--
			back++
			continue
		}
		if b.Floating > b.InUseFloating && b.Available >= b.Required {
			b.Floating--
			back++
			continue
		}
		b.Available++
		credit++
	}
	return credit, back
}

// OnAlignedBarrier is an aligned barrier through a channel without
// exclusive buffers: its producer is blocked until ResumeConsumption, so the
// channel gives its free floating buffers back to the gate meanwhile (the
// other channels can bring their barriers). It returns how many; the
// channel needs none until it resumes.
func (b *BufferManager) OnAlignedBarrier() (back int) {
	if b.Exclusive != 0 {
		return 0
	}
	back = min(b.Floating-b.InUseFloating, b.Available)
	b.Floating -= back
	b.Available -= back
	b.Required = 0
	return back
}

// OnResumeConsumption: after the alignment, a channel without exclusive
// buffers starts from no credit, as its producer does.
func (b *BufferManager) OnResumeConsumption() {
	if b.Exclusive == 0 {
		b.Available = 0
	}
}
