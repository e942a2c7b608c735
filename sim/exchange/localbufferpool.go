package exchange

import "fmt"

// LocalBufferPool is a result partition's pool of network buffers
// (org.apache.flink.runtime.io.network.buffer.LocalBufferPool): it lends
// at most its size plus max-overdraft-buffers-per-gate buffers, each to one
// subpartition, and is unavailable while it has none left or a
// subpartition holds max-buffers-per-channel of them.
type LocalBufferPool struct {
	size          int
	maxPerChannel int // taskmanager.network.memory.max-buffers-per-channel (0: no limit)
	maxOverdraft  int // taskmanager.network.memory.max-overdraft-buffers-per-gate
	inUse         int // buffers taken (overdraft included): held by some subpartition
	atMax         int // subpartitions holding maxPerChannel buffers (each makes the pool unavailable)
}

// Pool is the partition's LocalBufferPool.
func (p *ResultPartition) Pool() *LocalBufferPool { return &p.pool }

// SetMaxBuffersPerChannel sets taskmanager.network.memory.max-buffers-per-channel
// (LocalBufferPool's maxBuffersPerChannel): while a subpartition holds that
// many pool buffers the whole pool is unavailable, so the producer is
// backpressured although the pool has buffers left. As in Flink 1.20 it
// gates availability only: a record or broadcast already under way still
// gets the buffers it needs for that subpartition. 0: no bound.
func (b *LocalBufferPool) SetMaxBuffersPerChannel(n int) { b.maxPerChannel = n }

// SetMaxOverdraftBuffers sets how many buffers beyond its size the pool may
// lend to a task that needs one in the middle of writing a record or a
// broadcast (taskmanager.network.memory.max-overdraft-buffers-per-gate,
// FLIP-227; LocalBufferPool.requestOverdraftMemorySegmentFromGlobal). The
// pool stays unavailable while any is in use.
func (b *LocalBufferPool) SetMaxOverdraftBuffers(n int) { b.maxOverdraft = max(0, n) }

// BuffersInUse is the number of pool buffers taken, overdraft ones included.
func (b *LocalBufferPool) BuffersInUse() int { return b.inUse }

// PoolCapacity is the pool size in buffers.
func (b *LocalBufferPool) PoolCapacity() int { return b.size }

// OutPoolUsage is Flink's outPoolUsage (OutputBufferPoolUsageGauge): the
// pool's used buffers, overdraft ones included
// (LocalBufferPool.bestEffortGetNumOfUsedBuffers), over its size; above 1
// while overdraft buffers are in use.
func (b *LocalBufferPool) OutPoolUsage() float64 {
	if b.size == 0 {
		return 0
	}
	return float64(b.inUse) / float64(b.size)
}

// available reports whether the pool has a free buffer and no subpartition
// holds max-buffers-per-channel of them.
func (b *LocalBufferPool) available() bool { return b.inUse < b.size && b.atMax == 0 }

// request takes a pool buffer for subpartition s: a free one of the pool,
// else an overdraft one (LocalBufferPool.requestMemorySegment(
// targetChannel)); false when neither is left.
func (b *LocalBufferPool) request(s *Subpartition) bool {
	if b.inUse >= b.size+b.maxOverdraft {
		return false
	}
	b.take(s)
	return true
}

// take lends subpartition s one pool buffer.
func (b *LocalBufferPool) take(s *Subpartition) {
	b.inUse++
	s.held++
	if b.maxPerChannel > 0 && s.held == b.maxPerChannel {
		b.atMax++
	}
}

// release returns one of subpartition s's pool buffers to the pool.
func (b *LocalBufferPool) release(s *Subpartition) {
	if b.maxPerChannel > 0 && s.held == b.maxPerChannel {
		b.atMax--
	}
	b.inUse--
	s.held--
	if s.held < 0 || b.inUse < 0 {
		panic("exchange: a pool buffer released twice")
	}
}

// checkBounds checks the pool against the subpartitions' buffers: it lends
// no more than its size plus the overdraft buffers, the buffers lent are
// the subpartitions', and it counts the subpartitions at
// max-buffers-per-channel right.
func (b *LocalBufferPool) checkBounds(subs []Subpartition) string {
	total, atMax := 0, 0
	for i := range subs {
		total += subs[i].held
		if b.maxPerChannel > 0 && subs[i].held >= b.maxPerChannel {
			atMax++
		}
	}
	if b.inUse > b.size+b.maxOverdraft {
		return fmt.Sprintf("the output pool lends %d buffers, more than its %d and %d overdraft", b.inUse, b.size, b.maxOverdraft)
	}
	if total != b.inUse {
		return fmt.Sprintf("the output pool lends %d buffers but the subpartitions hold %d", b.inUse, total)
	}
	if (atMax > 0) != (b.atMax > 0) {
		return fmt.Sprintf("%d subpartitions at max-buffers-per-channel but the pool counts %d", atMax, b.atMax)
	}
	return ""
}
