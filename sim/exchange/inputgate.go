package exchange

import (
	"fmt"

	"github.com/flinksim/flinksim/messages"
)

// InputGate is the consumer side of a task's input
// (org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate
// with its LocalBufferPool of floating buffers): one queue of buffers per
// input channel, the channels with data in the order their data arrived
// (inputChannelsWithData), and the floating buffers it lends its channels
// first come, first served (BufferListener.notifyBufferAvailable).
//
// Invariant: a channel index is in the ready list exactly when its queue is
// not empty.
type InputGate struct {
	channels      []*GateChannel
	local         []bool // per channel: a LocalInputChannel (it reads the producer's buffers, none of the gate's)
	ready         []int  // channel indexes with buffers, in arrival order
	floatingFree  int    // free floating buffers of the pool
	floatingTotal int    // the pool's floating buffers
	floatingWait  []floatingWant
	BuffersIn     int64 // numBuffersIn
	BytesIn       int64 // numBytesIn
}

// GateChannel is one channel's queue in the gate.
type GateChannel struct {
	Buffers   []*messages.Buffer // received, not yet processed, in order
	Ended     bool               // EndOfPartition processed
	DataEnded bool               // EndOfData (FLIP-147) or EndOfPartition processed
}

type floatingWant struct{ channel, count int }

// Grant is floating buffers the gate hands one channel.
type Grant struct{ Channel, Count int }

// NewInputGate returns a gate of numChannels channels whose pool holds
// floating buffers; local[i] says channel i is a LocalInputChannel (nil:
// every channel is remote).
func NewInputGate(numChannels, floating int, local []bool) *InputGate {
	if local == nil {
		local = make([]bool, numChannels)
	}
	g := &InputGate{channels: make([]*GateChannel, numChannels), floatingFree: floating, floatingTotal: floating, local: local}
	for i := range g.channels {
		g.channels[i] = &GateChannel{}
	}
	return g
}

// NumChannels is the number of input channels.
func (g *InputGate) NumChannels() int { return len(g.channels) }

// Channel is channel i's queue (read it; change it only through the gate).
func (g *InputGate) Channel(i int) *GateChannel { return g.channels[i] }

// Count counts a buffer a channel delivered in numBuffersIn / numBytesIn
// (data buffers only).
func (g *InputGate) Count(b *messages.Buffer) {
	if !b.IsEvent {
		g.BuffersIn++
		g.BytesIn += int64(b.SizeBytes)
	}
}

// Enqueue appends a buffer to channel ci's queue.
func (g *InputGate) Enqueue(ci int, b *messages.Buffer) {
	ch := g.channels[ci]
	if len(ch.Buffers) == 0 {
		g.ready = append(g.ready, ci)
	}
	ch.Buffers = append(ch.Buffers, b)
}

// InsertBeforeEnd puts b right before the EndOfPartition queued in channel
// ci, behind its data; it reports false when no EndOfPartition is queued.
func (g *InputGate) InsertBeforeEnd(ci int, b *messages.Buffer) bool {
	ch := g.channels[ci]
	for k, q := range ch.Buffers {
		if q.IsEvent && q.Kinds[0] == KindEndOfPartition {
			ch.Buffers = append(ch.Buffers[:k], append([]*messages.Buffer{b}, ch.Buffers[k:]...)...)
			return true
		}
	}
	return false
}

// HasEndQueued reports whether channel ci's EndOfPartition is queued.
func (g *InputGate) HasEndQueued(ci int) bool {
	for _, q := range g.channels[ci].Buffers {
		if q.IsEvent && q.Kinds[0] == KindEndOfPartition {
			return true
		}
	}
	return false
}

// BarrierQueued reports whether a barrier of checkpoint id is queued in
// channel ci.
func (g *InputGate) BarrierQueued(ci int, id int64) bool {
	for _, q := range g.channels[ci].Buffers {
		if q.IsEvent && q.Kinds[0] == KindBarrier && q.CheckpointId == id {
			return true
		}
	}
	return false
}

// QueuedBarrier is the barrier of checkpoint id queued in channel ci.
func (g *InputGate) QueuedBarrier(ci int, id int64) (*messages.Buffer, bool) {
	for _, q := range g.channels[ci].Buffers {
		if q.IsEvent && q.Kinds[0] == KindBarrier && q.CheckpointId == id {
			return q, true
		}
	}
	return nil, false
}

// RemoveBarrier takes the barrier of checkpoint id out of channel ci's
// queue (it overtook the data ahead of it); it reports false when none is
// queued.
func (g *InputGate) RemoveBarrier(ci int, id int64) bool {
	ch := g.channels[ci]
	for k, q := range ch.Buffers {
		if q.IsEvent && q.Kinds[0] == KindBarrier && q.CheckpointId == id {
			ch.Buffers = append(ch.Buffers[:k], ch.Buffers[k+1:]...)
			if len(ch.Buffers) == 0 {
				for r, c := range g.ready {
					if c == ci {
						g.ready = append(g.ready[:r], g.ready[r+1:]...)
						break
					}
				}
			}
			return true
		}
	}
	return false
}

// HasData reports whether any channel has a buffer queued.
func (g *InputGate) HasData() bool { return len(g.ready) > 0 }

// Ready reports whether a channel that blocked does not hold back has a
// buffer queued.
func (g *InputGate) Ready(blocked func(ci int) bool) bool {
	for _, c := range g.ready {
		if !blocked(c) {
			return true
		}
	}
	return false
}

// Next takes the head buffer of the first channel with data, in arrival
// order, that blocked does not hold back (a channel blocked by checkpoint
// alignment); ok is false when there is none. A channel that still has
// buffers goes to the back of the ready list.
func (g *InputGate) Next(blocked func(ci int) bool) (ci int, b *messages.Buffer, ok bool) {
	pick := -1
	for k, c := range g.ready {
		if !blocked(c) {
			pick = k
			break
		}
	}
	if pick < 0 {
		return 0, nil, false
	}
	ci = g.ready[pick]
	ch := g.channels[ci]
	b = ch.Buffers[0]
	ch.Buffers[0] = nil
	ch.Buffers = ch.Buffers[1:]
	g.ready = append(g.ready[:pick], g.ready[pick+1:]...)
	if len(ch.Buffers) > 0 {
		g.ready = append(g.ready, ci)
	}
	return ci, b, true
}

// AllDataEnded reports whether every channel's data ended.
func (g *InputGate) AllDataEnded() bool {
	for _, ch := range g.channels {
		if !ch.DataEnded {
			return false
		}
	}
	return true
}

// AllEnded reports whether every channel's EndOfPartition was processed.
func (g *InputGate) AllEnded() bool {
	for _, ch := range g.channels {
		if !ch.Ended {
			return false
		}
	}
	return true
}

// RequestFloating queues channel ci's request for n floating buffers and
// returns what the pool can grant now.
func (g *InputGate) RequestFloating(ci, n int) []Grant {
	g.floatingWait = append(g.floatingWait, floatingWant{ci, n})
	return g.grant()
}

// ReturnFloating takes n floating buffers back and returns what waiting
// channels get of them now.
func (g *InputGate) ReturnFloating(n int) []Grant {
	g.floatingFree += n
	return g.grant()
}

// grant hands free floating buffers to waiting channels in the order they
// asked.
func (g *InputGate) grant() []Grant {
	var out []Grant
	for len(g.floatingWait) > 0 && g.floatingFree > 0 {
		w := &g.floatingWait[0]
		n := min(w.count, g.floatingFree)
		g.floatingFree -= n
		w.count -= n
		out = append(out, Grant{Channel: w.channel, Count: n})
		if w.count == 0 {
			g.floatingWait = g.floatingWait[1:]
		}
	}
	return out
}

// CheckBounds checks the gate's queues against Flink's bounds and returns
// what broke, or "": a RemoteInputChannel queues at most its exclusive
// buffers and the floating buffers it can have (every data buffer it
// receives takes a credit), all remote channels together at most their
// exclusive buffers and the gate's floating ones, and a LocalInputChannel,
// which reads its producer's queue one buffer at a time, at most one.
func (g *InputGate) CheckBounds(buffersPerChannel, floating int) string {
	var remote, queued int
	for i, ch := range g.channels {
		n := 0
		for _, b := range ch.Buffers {
			if !b.IsEvent {
				n++
			}
		}
		if g.local[i] {
			if n > 1 {
				return fmt.Sprintf("local input channel %d queues %d buffers", i, n)
			}
			continue
		}
		if n > buffersPerChannel+floating {
			return fmt.Sprintf("remote input channel %d queues %d buffers, more than its %d exclusive and the gate's %d floating", i, n, buffersPerChannel, floating)
		}
		remote++
		queued += n
	}
	if queued > remote*buffersPerChannel+floating {
		return fmt.Sprintf("the remote input channels queue %d buffers, more than their %d exclusive and the gate's %d floating", queued, remote*buffersPerChannel, floating)
	}
	return ""
}

// InPoolUsage is Flink's inPoolUsage (CreditBasedInputBuffersUsageGauge):
// the gate's own buffers in use over all of them, where the exclusive
// buffers of the remote channels that hold data are in use
// (ExclusiveBuffersUsageGauge), and so are the floating buffers the pool has
// lent to channels, holding data or announced as credit
// (FloatingBuffersUsageGauge); local channels hold the producer's buffers,
// none of the gate's. It also returns the data buffers queued in all
// channels and the count per channel (inputQueueLength(s)).
func (g *InputGate) InPoolUsage(buffersPerChannel int) (usage float64, queued int64, lengths []int64) {
	lengths = make([]int64, len(g.channels))
	var used int64
	remote := 0
	for i, ch := range g.channels {
		for _, b := range ch.Buffers {
			if !b.IsEvent {
				lengths[i]++
			}
		}
		queued += lengths[i]
		if !g.local[i] {
			used += min(lengths[i], int64(buffersPerChannel))
			remote++
		}
	}
	used += int64(g.floatingTotal - g.floatingFree)
	if total := remote*buffersPerChannel + g.floatingTotal; total > 0 {
		usage = float64(used) / float64(total)
	}
	return usage, queued, lengths
}
