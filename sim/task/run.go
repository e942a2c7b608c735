package task

// The mailbox loop: slices of work, the output partition's sends, the
// task finishing once its output is sent.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/netty"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// target is the subpartition of a record: its key group's operator for a
// keyBy (KeyGroupStreamPartitioner), otherwise round robin.
func (s *Subtask) target(key string) int {
	if s.hashOut {
		return keygroup.OperatorIndexForKeyGroup(s.maxP, len(s.consumers), int(keyGroupOf(key, s.maxP)))
	}
	if len(s.consumers) == 1 {
		return 0
	}
	s.rrNext = (s.rrNext + 1) % len(s.consumers)
	return s.rrNext
}

func (s *Subtask) block(o *kernel.Out) {
	s.mb.Block(o.Now())
}

func (s *Subtask) unblock(o *kernel.Out) {
	s.mb.Unblock(o.Now())
}

// work runs the next slice when the task is not busy, then sends what the
// slice produced once it is done.
func (s *Subtask) work(o *kernel.Out) {
	if s.status != status.Running {
		return
	}
	if s.mb.Busy(o.Now()) {
		// still busy with the last slice: come back when it ends
		if delay, ok := s.mb.WakeAt(o.Now()); ok {
			o.Timer(delay, timerContinue, 0)
		}
		return
	}
	var cost vt.Time
	if s.isSource {
		if s.rp.BuffersInUse() < s.rp.PoolCapacity() || s.src.Queued() == 0 {
			s.unblock(o)
		}
		cost = s.sourceSlice(o)
		s.fetch(o)
		s.maybeFinishSource(o)
	} else {
		if s.rp == nil || s.rp.BuffersInUse() < s.rp.PoolCapacity() {
			s.unblock(o)
		}
		// a buffer of only watermarks that change nothing costs no time:
		// take the next one at once
		if len(s.ck.replayIn) > 0 && !s.mb.Blocked() {
			cost = s.replaySlice(o)
		}
		for cost == 0 && s.gateReady() && !s.mb.Blocked() {
			cost = s.gateSlice(o)
		}
		s.maybeFinishGate(o)
	}
	if s.rp != nil && s.cfg.BufferTimeout == 0 {
		// execution.buffer-timeout 0: flush after every record (here,
		// after every slice of records)
		s.rp.FlushAll()
	}
	s.flushSink(o, cost)
	if cost > 0 {
		s.mb.Slice(o.Now(), cost)
		if s.hasInput() {
			// more input waits: take it when this slice ends (otherwise
			// the next arrival schedules the wake-up)
			s.mb.WakeAfter()
			o.Timer(cost, timerContinue, 0)
		}
		s.flushSends(o, cost)
	}
}

// hasInput reports whether input waits to be processed.
func (s *Subtask) hasInput() bool {
	if s.isSource {
		return s.src.Queued() > 0 || (s.src.HasNoMoreSplits() && !s.finishedAll)
	}
	return s.gateReady() || len(s.ck.replayIn) > 0
}

// flushSends sends every buffer the partition can send now, delay µs from
// now (the end of the slice that produced them).
func (s *Subtask) flushSends(o *kernel.Out, delay vt.Time) {
	if s.rp == nil {
		return
	}
	s.sends = s.rp.Poll(s.sends[:0])
	if s.lastSend == nil {
		s.lastSend = make([]vt.Time, s.rp.NumSubpartitions())
	}
	for _, x := range s.sends {
		// a channel is a FIFO connection: nothing overtakes what was sent
		// on it before
		at := max(o.Now()+delay+s.channelLatency(x.Subpartition), s.lastSend[x.Subpartition])
		s.lastSend[x.Subpartition] = at
		if s.cfg.LogNettyFrames && s.d.ResultPartition.ConsumerLocations[x.Subpartition] != s.tm {
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
	s.outputBarrierSent(o)
	if s.finishedAll && !s.reported {
		s.report(o)
	}
}

// channelLatency is the latency to the consumer of subpartition i: local
// when it runs on this task manager, the network latency otherwise.
func (s *Subtask) channelLatency(i int) vt.Time {
	if s.d.ResultPartition.ConsumerLocations[i] == s.tm {
		return vt.FromDuration(s.cfg.LocalLatency)
	}
	return vt.FromDuration(s.cfg.NetworkLatency)
}

// report marks the task FINISHED once all its output is sent.
//
// A task finishes once its EndOfPartition is queued (Flink's
// ResultPartition.finish; consumers may still be reading), but not while it
// is busy with a slice or its last requests to the broker are on their way,
// so the job cannot reach FINISHED before its output is written.
func (s *Subtask) report(o *kernel.Out) {
	if s.reported {
		return
	}
	if at := max(s.mb.BusyUntil(), s.ck.lastKafka); o.Now() < at {
		if !s.reportPending {
			s.reportPending = true
			o.Timer(at-o.Now(), timerReport, 0)
		}
		return
	}
	s.reported = true
	s.metrics(o)
	s.logFinal(o)
	s.setState(o, status.Finished, "")
}
