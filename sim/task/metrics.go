package task

// The task's metrics (Flink's names) and final counters.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
)

func (s *Subtask) logFinal(o *kernel.Out) {
	if s.finalLogged {
		return
	}
	s.finalLogged = true
	fields := []*messages.Field{messages.Str("task", o.Name())}
	if s.isSource {
		fields = append(fields, messages.Int("records_read", s.m.recordsIn), messages.Int("records_emitted", s.m.recordsOut))
	} else {
		fields = append(fields, messages.Int("records_in", s.m.recordsIn))
		if s.op == nil && s.proc == nil && s.rp != nil {
			// ParseOrder and/or Filter in a task of their own
			fields = append(fields, messages.Int("records_emitted", s.m.recordsOut))
		}
	}
	if s.op != nil {
		// windows still open when the task ends: for processing-time
		// windows on a bounded input Flink quiesces the processing-time
		// service at end of input (FLINK-14231), so they never fire
		var open, held int64
		for _, ks := range s.op.Snapshot() {
			for _, w := range ks.Windows {
				if w.Fired == 0 {
					open++
					held += w.Acc.Count
				}
			}
		}
		fields = append(fields, messages.Int("windows_fired", s.m.windowsFired),
			messages.Int("numLateRecordsDropped", s.op.NumLateRecordsDropped()),
			messages.Int("unfired_windows", open), messages.Int("records_in_unfired_windows", held))
	}
	if s.proc != nil {
		fields = append(fields, messages.Int("keys", int64(s.proc.NumKeys())),
			messages.Int("expired_state_reads", s.proc.ExpiredStateCount()))
	}
	if s.hasSink {
		fields = append(fields, messages.Int("results_sent", s.m.resultsWritten))
	}
	o.Log(eventlog.KindFinal, fields...)
}

// metrics logs the task's metrics of the last virtual second with Flink's
// metric names (busyTimeMsPerSecond, backPressuredTimeMsPerSecond,
// idleTimeMsPerSecond add up to ~1000).
func (s *Subtask) metrics(o *kernel.Out) {
	r, ok := s.mb.Tick(o.Now())
	if !ok {
		return
	}
	fields := []*messages.Field{
		messages.Int("busyTimeMsPerSecond", r.Busy),
		messages.Int("backPressuredTimeMsPerSecond", r.BackPressured),
		messages.Int("idleTimeMsPerSecond", r.Idle),
		messages.Int("numRecordsIn", s.m.recordsIn), messages.Int("numRecordsOut", s.m.recordsOut),
	}
	if s.rp != nil {
		// outputQueueLengths: the buffers each subpartition holds (Flink's
		// outputQueueLength per subpartition), in subpartition order.
		lengths := s.rp.QueueLengths()
		out := make([]int64, len(lengths))
		for i, n := range lengths {
			out[i] = int64(n)
		}
		fields = append(fields, messages.Int("numBuffersOut", s.rp.BuffersOut), messages.Int("numBytesOut", s.rp.BytesOut),
			messages.Float("outPoolUsage", s.rp.OutPoolUsage()),
			messages.Raw("outputQueueLengths", eventlog.JSONInts(out)))
	}
	if s.isSource {
		fields = append(fields, messages.Int("currentOutputWatermark", s.sentWm),
			messages.Int("assignedSplits", int64(len(s.src.Splits()))))
	} else {
		usage, queued, lengths := s.gate.InPoolUsage(s.cfg.BuffersPerChannel)
		fields = append(fields, messages.Int("currentInputWatermark", s.valve.LastOutputWatermark()),
			messages.Int("numBuffersIn", s.gate.BuffersIn), messages.Int("numBytesIn", s.gate.BytesIn),
			messages.Float("inPoolUsage", usage), messages.Int("inputQueueLength", queued),
			messages.Raw("inputQueueLengths", eventlog.JSONInts(lengths)))
		if s.proc != nil {
			fields = append(fields, messages.Int("keys", int64(s.proc.NumKeys())),
				messages.Int("expired_state_reads", s.proc.ExpiredStateCount()))
		}
		if s.op != nil {
			fields = append(fields, messages.Int("keys", int64(s.op.NumKeys())), messages.Int("windows", int64(s.op.NumWindows())),
				messages.Int("numLateRecordsDropped", s.op.NumLateRecordsDropped()))
		}
	}
	o.Log(eventlog.KindTaskMetrics, fields...)
}
