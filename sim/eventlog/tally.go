package eventlog

// Tally is the observer behind the summary line: it reads the typed events
// of a run, in log order, and keeps what the summary reports.
type Tally struct {
	JobStatus    string // the last status a job_status event gave
	FailureCause string // the cause of the last FAILED status
	// Counters sums the integer final_counters fields over every actor;
	// windows_fired counts every window_fired event instead (firings of
	// attempts that died count too).
	Counters map[string]int64
	// MaxBackPressure is the highest backPressuredTimeMsPerSecond any
	// subtask reported, MaxBackPressureTask the first subtask that did.
	MaxBackPressure     int64
	MaxBackPressureTask string
	// OutputViewFrom is the sink offset where the output view starts: 0, or
	// where the last job started from a savepoint began (output_view).
	OutputViewFrom int64
	// IgnoredActions are the user actions not carried out, each
	// "action: reason", in log order.
	IgnoredActions []string
	// OutputIsolation is the output consumer's isolation.level when a set
	// action changed it during the run ("" otherwise).
	OutputIsolation string
	// AttemptsLost is whether a task attempt ended without its final
	// counters: a TaskManager killed, or a failover (RESTARTING). Counters
	// then count only the attempts that ran to the end, as Flink's metrics
	// are those of the current attempts.
	AttemptsLost bool
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{Counters: map[string]int64{}} }

// Observe takes the next event of the log.
func (t *Tally) Observe(ev *LogEvent) {
	switch e := Decode(ev).(type) {
	case TaskManagerKilled:
		t.AttemptsLost = true
	case JobStatus:
		t.JobStatus = e.Status
		if e.Status == "RESTARTING" {
			t.AttemptsLost = true
		}
		if e.Status == "FAILED" && e.Cause != "" {
			t.FailureCause = e.Cause
		}
	case OutputView:
		t.OutputViewFrom = e.FromOffset
	case ActionIgnored:
		t.IgnoredActions = append(t.IgnoredActions, e.Action+": "+e.Reason)
	case TaskMetrics:
		if e.BackPressuredTimeMsPerSecond > t.MaxBackPressure {
			t.MaxBackPressure = e.BackPressuredTimeMsPerSecond
			t.MaxBackPressureTask = ev.Actor
		}
	case FinalCounters:
		e.Ints(func(k string, v int64) {
			if k != "windows_fired" {
				t.Counters[k] += v
			}
		})
	case OutputIsolation:
		t.OutputIsolation = e.IsolationLevel
	case WindowFired:
		t.Counters["windows_fired"]++
	}
}
