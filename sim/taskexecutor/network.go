package taskexecutor

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// A network partition (partition-network) is no rule of RPC's own: a
// TaskManager cut off from the JobManager just misses its heartbeats. The
// JobManager and the ResourceManager notice as for a killed TaskManager.
// The TaskManager, which lives on, monitors the heartbeats of both as
// TaskExecutor does: when the JobManager's time out it fails its tasks
// ("Disconnect from JobManager responsible for ...") and frees their slots;
// when the ResourceManager's time out it registers again, retrying as
// RetryingRegistration does until it is answered.
//
// Each monitor's timeout is always scheduled while it monitors, as
// HeartbeatMonitorImpl's timeout future is: it fires heartbeat.timeout after
// the last heartbeat request it heard, finds a later one and waits for that
// one's timeout, or times the peer out. Without a fault the checks find the
// heartbeats and log nothing; behind a cut they time out at the last
// request plus heartbeat.timeout; a TaskManager whose process stalled
// (stall-taskmanager) wakes with its overdue timeouts and finds that its
// JobManager stopped heartbeating it meanwhile: a zombie that fails its
// tasks and registers again.

// Timer kinds (messages.TimerKind) of the heartbeat monitors and the
// registration.
const (
	timerJMHeartbeatTimeout = messages.TimerKind_TIMER_JOBMANAGER_HEARTBEAT_TIMEOUT
	timerRMHeartbeatTimeout = messages.TimerKind_TIMER_RESOURCEMANAGER_HEARTBEAT_TIMEOUT
	timerRegistration       = messages.TimerKind_TIMER_REGISTRATION_TIMEOUT
)

// Registration retry timeouts (cluster.registration.initial-timeout and
// max-timeout; RetryingRegistration doubles the timeout after each
// attempt).
const (
	registrationInitialTimeout = 100 * vt.Millisecond
	registrationMaxTimeout     = 30 * vt.Second
)

// tmNetwork is a TaskManager's view of its connections to the JobManager
// and the ResourceManager: the last heartbeat request of each, or when its
// monitoring began (ms; -1: not monitored), the generation of each
// monitor's timeout (a timer of an earlier one is stale), and the
// registration state.
type tmNetwork struct {
	lastJM, lastRM int64
	jmGen, rmGen   int64
	registered     bool
	retrying       bool    // registering again, with a timeout
	regTimeout     vt.Time // the current registration attempt's timeout
	regAttempt     int64
	job            string // the job its slots were last allocated to
}

func newTMNetwork() tmNetwork { return tmNetwork{lastJM: -1, lastRM: -1} }

// monitorResourceManager starts monitoring the ResourceManager's
// heartbeats on registration (TaskExecutor.establishResourceManagerConnection
// calls HeartbeatManager.monitorTarget, whose HeartbeatMonitorImpl times out
// heartbeat.timeout after its creation if no heartbeat comes): a
// TaskManager cut off before the first heartbeat request still times the
// ResourceManager out and registers again after the heal.
func (t *TaskExecutor) monitorResourceManager(o *kernel.Out) {
	t.net.lastRM = vt.Millis(o.Now())
	t.net.rmGen++
	o.Timer(vt.FromDuration(t.cfg.HeartbeatTimeout), timerRMHeartbeatTimeout, t.net.rmGen)
}

// monitorJobManager starts monitoring the JobManager's heartbeats when the
// TaskManager connects to it to offer slots, unless it monitors it already
// (TaskExecutor.establishJobManagerConnection, monitorTarget).
func (t *TaskExecutor) monitorJobManager(o *kernel.Out) {
	if t.net.lastJM < 0 {
		t.net.lastJM = vt.Millis(o.Now())
		t.net.jmGen++
		o.Timer(vt.FromDuration(t.cfg.HeartbeatTimeout), timerJMHeartbeatTimeout, t.net.jmGen)
	}
}

// heard records a heartbeat request from the JobManager or the ResourceManager.
func (t *TaskExecutor) heard(o *kernel.Out, from string) {
	switch now := vt.Millis(o.Now()); from {
	case jobgraph.JobManagerName:
		t.net.lastJM = now
	case jobgraph.ResourceManagerName:
		t.net.lastRM = now
	}
}

// connectionLost retries a registration with the ResourceManager that was
// lost (the monitors time out on their own).
func (t *TaskExecutor) connectionLost(o *kernel.Out, peer string) {
	if peer == jobgraph.ResourceManagerName && !t.net.registered && !t.net.retrying {
		t.register(o)
	}
}

// networkTimer handles the monitors' and the registration's timers.
func (t *TaskExecutor) networkTimer(o *kernel.Out, m *messages.Timer) {
	timeout := t.cfg.HeartbeatTimeout.Milliseconds()
	now := vt.Millis(o.Now())
	switch m.Kind {
	case timerJMHeartbeatTimeout:
		switch {
		case m.Arg != t.net.jmGen || t.net.lastJM < 0:
			// an earlier monitor's
		case now >= t.net.lastJM+timeout:
			t.jobManagerLost(o)
		default:
			o.Timer(vt.FromMillis(t.net.lastJM+timeout)-o.Now(), timerJMHeartbeatTimeout, m.Arg)
		}
	case timerRMHeartbeatTimeout:
		switch {
		case m.Arg != t.net.rmGen || t.net.lastRM < 0:
		case now >= t.net.lastRM+timeout:
			cause := "The heartbeat of ResourceManager with id " + jobgraph.ResourceManagerName + " timed out."
			o.Log(eventlog.HeartbeatTimeout{ResourceManager: jobgraph.ResourceManagerName, LastHeartbeatMs: t.net.lastRM, Cause: cause})
			t.net.registered = false
			t.register(o)
		default:
			o.Timer(vt.FromMillis(t.net.lastRM+timeout)-o.Now(), timerRMHeartbeatTimeout, m.Arg)
		}
	case timerRegistration:
		if m.Arg == t.net.regAttempt && t.net.retrying && !t.net.registered {
			t.net.regTimeout = min(2*t.net.regTimeout, registrationMaxTimeout)
			t.sendRegistration(o)
		}
	}
}

// jobManagerLost is TaskExecutor's JobManagerHeartbeatListener: the
// JobManager connection closes, every task fails and the slots are freed.
func (t *TaskExecutor) jobManagerLost(o *kernel.Out) {
	cause := "The heartbeat of JobManager with id " + jobgraph.JobManagerName + " timed out."
	o.Log(eventlog.HeartbeatTimeout{JobManager: jobgraph.JobManagerName, LastHeartbeatMs: t.net.lastJM, Cause: cause})
	t.closeJobManagerConnection(o)
}

// jobManagerDisconnected is TaskExecutor.disconnectJobManager: the
// JobMaster timed this TaskManager out and closed the connection (a
// TaskManager that stalled hears it when it wakes); as when its own monitor
// times the JobManager out, every task fails and the slots are freed. One
// no longer connected has nothing to close.
func (t *TaskExecutor) jobManagerDisconnected(o *kernel.Out, m *messages.DisconnectJobManager) {
	if t.net.lastJM < 0 {
		return
	}
	t.closeJobManagerConnection(o)
}

// closeJobManagerConnection fails every task ("Disconnect from JobManager
// responsible for ...") and frees the slots.
func (t *TaskExecutor) closeJobManagerConnection(o *kernel.Out) {
	t.net.lastJM = -1
	job := t.net.job
	if job == "" {
		job = jobgraph.JobID
	}
	fail := "org.apache.flink.util.FlinkException: Disconnect from JobManager responsible for " + job + "."
	for _, task := range t.tasks {
		if _, ok := t.children[task]; ok {
			o.Send(task, 0, &messages.Envelope_FailTask{FailTask: &messages.FailTask{Cause: fail}})
		}
	}
	for i := range t.slots {
		t.slots[i] = ""
	}
}

// register (re)starts the registration with the ResourceManager, retried
// until answered (RetryingRegistration).
func (t *TaskExecutor) register(o *kernel.Out) {
	t.net.retrying = true
	t.net.regTimeout = registrationInitialTimeout
	t.sendRegistration(o)
}

func (t *TaskExecutor) sendRegistration(o *kernel.Out) {
	t.net.regAttempt++
	t.sendRegister(o)
	o.Timer(t.net.regTimeout, timerRegistration, t.net.regAttempt)
}
