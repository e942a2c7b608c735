package task

// The task's metrics (Flink's names) and final counters.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
)

// logFinal logs the task's final counters once: its records, then its
// head's and its chain's counters.
func (t *StreamTask) logFinal(o *kernel.Out) {
	if t.finalLogged {
		return
	}
	t.finalLogged = true
	fields := []*messages.Field{messages.Str("task", o.Name())}
	fields = t.head.appendFinal(fields)
	fields = t.chain.appendFinal(fields)
	o.Log(eventlog.F(eventlog.KindFinal, fields...))
}

// metrics logs the task's metrics of the last virtual second with Flink's
// metric names (busyTimeMsPerSecond, backPressuredTimeMsPerSecond,
// idleTimeMsPerSecond add up to ~1000).
func (t *StreamTask) metrics(o *kernel.Out) {
	r, ok := t.mb.Tick(o.Now())
	if !ok {
		return
	}
	fields := []*messages.Field{
		messages.Int("busyTimeMsPerSecond", r.Busy),
		messages.Int("backPressuredTimeMsPerSecond", r.BackPressured),
		messages.Int("idleTimeMsPerSecond", r.Idle),
		messages.Int("numRecordsIn", t.m.recordsIn), messages.Int("numRecordsOut", t.m.recordsOut),
	}
	if t.rp != nil {
		// outputQueueLengths: the buffers each subpartition holds (Flink's
		// outputQueueLength per subpartition), in subpartition order.
		lengths := t.rp.QueueLengths()
		out := make([]int64, len(lengths))
		for i, n := range lengths {
			out[i] = int64(n)
		}
		fields = append(fields, messages.Int("numBuffersOut", t.rp.BuffersOut), messages.Int("numBytesOut", t.rp.BytesOut),
			messages.Float("outPoolUsage", t.rp.OutPoolUsage()),
			messages.Raw("outputQueueLengths", eventlog.JSONInts(out)))
	}
	o.Log(eventlog.F(eventlog.KindTaskMetrics, t.head.appendMetrics(fields)...))
}
