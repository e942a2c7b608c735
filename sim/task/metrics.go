package task

// The task's metrics (Flink's names) and final counters.

import (
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
	fields := make([]eventlog.Value, 1, 8)
	fields[0] = eventlog.S("task", o.Name())
	fields = t.head.appendFinal(fields)
	fields = t.chain.appendFinal(fields)
	o.Log(eventlog.FinalCounters{List: fields})
}

// metrics logs the task's metrics of the last virtual second with Flink's
// metric names (busyTimeMsPerSecond, backPressuredTimeMsPerSecond,
// idleTimeMsPerSecond add up to ~1000).
func (t *StreamTask) metrics(o *kernel.Out) {
	r, ok := t.mb.Tick(o.Now())
	if !ok {
		return
	}
	m := eventlog.TaskMetrics{BusyTimeMsPerSecond: r.Busy, BackPressuredTimeMsPerSecond: r.BackPressured,
		IdleTimeMsPerSecond: r.Idle, NumRecordsIn: t.m.recordsIn, NumRecordsOut: t.m.recordsOut}
	if t.rp != nil {
		// outputQueueLengths: the buffers each subpartition holds (Flink's
		// outputQueueLength per subpartition), in subpartition order.
		lengths := t.rp.QueueLengths()
		out := make([]int64, len(lengths))
		for i, n := range lengths {
			out[i] = int64(n)
		}
		m.HasOutput, m.NumBuffersOut, m.NumBytesOut = true, t.rp.BuffersOut, t.rp.BytesOut
		m.OutPoolUsage, m.OutputQueueLengths = t.rp.Pool().OutPoolUsage(), out
	}
	t.head.addMetrics(&m)
	o.Log(m)
}
