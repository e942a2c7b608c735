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
// The monitors are armed only once the connection to the JobManager's host
// lost an envelope (ConnectionLost, sim/kernel/network.go): without a cut
// both keep hearing every heartbeat.interval, so a check could never fire,
// and runs without cuts keep their logs.

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
// monitoring began (ms; -1: not monitored), whether its monitor is armed,
// and the registration state.
type tmNetwork struct {
	lastJM, lastRM int64
	jmArmed        bool
	rmArmed        bool
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
func (n *tmNetwork) monitorResourceManager(o *kernel.Out) { n.lastRM = vt.Millis(o.Now()) }

// monitorJobManager starts monitoring the JobManager's heartbeats when the
// TaskManager connects to it to offer slots, unless it monitors it already
// (TaskExecutor.establishJobManagerConnection, monitorTarget).
func (n *tmNetwork) monitorJobManager(o *kernel.Out) {
	if n.lastJM < 0 {
		n.lastJM = vt.Millis(o.Now())
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

// connectionLost arms the heartbeat monitor of the peer's connection, or
// retries a registration that was lost.
func (t *TaskExecutor) connectionLost(o *kernel.Out, peer string) {
	timeout := t.cfg.HeartbeatTimeout.Milliseconds()
	switch peer {
	case jobgraph.JobManagerName:
		if !t.net.jmArmed && t.net.lastJM >= 0 {
			t.net.jmArmed = true
			o.Timer(max(0, vt.FromMillis(t.net.lastJM+timeout)-o.Now()), timerJMHeartbeatTimeout, t.net.lastJM)
		}
	case jobgraph.ResourceManagerName:
		if !t.net.registered && !t.net.retrying {
			t.register(o)
			return
		}
		if !t.net.rmArmed && t.net.lastRM >= 0 {
			t.net.rmArmed = true
			o.Timer(max(0, vt.FromMillis(t.net.lastRM+timeout)-o.Now()), timerRMHeartbeatTimeout, t.net.lastRM)
		}
	}
}

// networkTimer handles the monitors' and the registration's timers.
func (t *TaskExecutor) networkTimer(o *kernel.Out, m *messages.Timer) {
	timeout := t.cfg.HeartbeatTimeout.Milliseconds()
	now := vt.Millis(o.Now())
	switch m.Kind {
	case timerJMHeartbeatTimeout:
		switch {
		case t.net.lastJM > m.Arg:
			t.net.jmArmed = false // heartbeats came again
		case now >= t.net.lastJM+timeout:
			t.net.jmArmed = false
			t.jobManagerLost(o)
		default:
			o.Timer(vt.FromMillis(t.net.lastJM+timeout)-o.Now(), timerJMHeartbeatTimeout, t.net.lastJM)
		}
	case timerRMHeartbeatTimeout:
		switch {
		case t.net.lastRM > m.Arg:
			t.net.rmArmed = false
		case now >= t.net.lastRM+timeout:
			t.net.rmArmed = false
			cause := "The heartbeat of ResourceManager with id " + jobgraph.ResourceManagerName + " timed out."
			o.Log(eventlog.HeartbeatTimeout{ResourceManager: jobgraph.ResourceManagerName, LastHeartbeatMs: t.net.lastRM, Cause: cause})
			t.net.registered = false
			t.register(o)
		default:
			o.Timer(vt.FromMillis(t.net.lastRM+timeout)-o.Now(), timerRMHeartbeatTimeout, t.net.lastRM)
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
