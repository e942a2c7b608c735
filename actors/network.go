package actors

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/vt"
)

// Flink's rules for a network partition (partition-network): the scheduler
// drops what crosses the cut and tells both ends of a pair of actors that
// lost an envelope (ConnectionLost, once per cut). What each component
// makes of it:
//
//   - A RemoteInputChannel whose connection to its producer broke fails its
//     task with the RemoteTransportException that
//     CreditBasedPartitionRequestClientHandler hands every channel of a
//     broken connection (notifyAllChannelsOfErrorAndClose); from then on it
//     ignores the connection. The producer's side (PartitionRequestQueue)
//     only closes the connection: the producer task runs on until the
//     failover cancels it.
//   - RPC (JobMaster, ResourceManager, TaskExecutor) has no rule of its own:
//     a TaskManager cut off from the JobManager just misses its heartbeats.
//     The JobManager and the ResourceManager notice as for a killed
//     TaskManager. The TaskManager, which lives on, monitors the heartbeats
//     of both as TaskExecutor does: when the JobManager's time out it fails
//     its tasks ("Disconnect from JobManager responsible for ...") and frees
//     their slots; when the ResourceManager's time out it registers again,
//     retrying as RetryingRegistration does until it is answered.
//
// The TaskManager's monitors are armed only once its connection to the
// JobManager's host lost an envelope: without a cut both keep hearing every
// heartbeat.interval, so a check could never fire, and runs without cuts
// keep their logs.

// Timer kinds of the TaskManager's heartbeat monitors and registration.
const (
	timerJMHeartbeatTimeout = "jobmanager_heartbeat_timeout"
	timerRMHeartbeatTimeout = "resourcemanager_heartbeat_timeout"
	timerRegistration       = "registration_timeout"
)

// Registration retry timeouts (cluster.registration.initial-timeout and
// max-timeout, RetryingRegistration doubles the timeout after each
// attempt).
const (
	registrationInitialTimeout vt.Time = 100_000
	registrationMaxTimeout     vt.Time = 30_000_000
)

// remoteTransportException is the text Flink's
// CreditBasedPartitionRequestClientHandler.exceptionCaught gives a channel
// whose connection to a producer's TaskManager was lost.
func remoteTransportException(connection, tm string) string {
	return "org.apache.flink.runtime.io.network.netty.exception.RemoteTransportException: Lost connection to task manager '" +
		connection + " [ " + tm + " ] '. This indicates that the remote task manager was lost."
}

// connectionLost is a RemoteInputChannel learning that its connection to the
// producer broke: it fails its task.
func (c *InputChannel) connectionLost(o *Out, peer string) {
	if c.local || c.broken || peer != c.producer {
		return
	}
	c.broken = true
	cause := remoteTransportException(c.connection, c.producerTM)
	o.Log(eventlog.KindChannelError, messages.Str("producer", c.producer), messages.Str("connection_id", c.connection),
		messages.Str("cause", cause))
	o.Send(c.consumer, 0, &messages.Envelope_FailTask{FailTask: &messages.FailTask{Cause: cause}})
}

// failExternally is Task.failExternally: a running task fails with cause;
// its operators close, so the exactly-once writer aborts its open
// transaction (KafkaWriter.close), and its TaskManager reports FAILED. A task
// already in a final state stays in it.
func (s *Subtask) failExternally(o *Out, cause string) {
	switch s.status {
	case "FINISHED", "CANCELED", "FAILED":
		return
	}
	if s.exactlyOnce() && s.ck.txn != "" && !s.finishedAll {
		s.sinkOut = nil
		s.txnRequest(o, messages.TxnRequest_ABORT, s.ck.txn)
	}
	s.setState(o, "FAILED", cause)
}

// tmNetwork is a TaskManager's view of its connections to the JobManager
// and the ResourceManager: the last heartbeat request of each (ms; -1: none
// yet), whether its monitor is armed, and the registration state.
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

// heard records a heartbeat request from the JobManager or the ResourceManager.
func (t *TaskManager) heard(o *Out, from string) {
	now := vt.Millis(o.Now())
	switch from {
	case JobManagerName:
		t.net.lastJM = now
	case ResourceManagerName:
		t.net.lastRM = now
	}
}

// connectionLost arms the heartbeat monitor of the peer's connection.
func (t *TaskManager) connectionLost(o *Out, peer string) {
	timeout := t.cfg.HeartbeatTimeout.Milliseconds()
	switch peer {
	case JobManagerName:
		if !t.net.jmArmed && t.net.lastJM >= 0 {
			t.net.jmArmed = true
			o.Timer(max(0, vt.FromMillis(t.net.lastJM+timeout)-o.Now()), timerJMHeartbeatTimeout, t.net.lastJM)
		}
	case ResourceManagerName:
		if !t.net.registered && !t.net.retrying {
			t.register(o) // the first registration was lost: retry
			return
		}
		if !t.net.rmArmed && t.net.lastRM >= 0 {
			t.net.rmArmed = true
			o.Timer(max(0, vt.FromMillis(t.net.lastRM+timeout)-o.Now()), timerRMHeartbeatTimeout, t.net.lastRM)
		}
	}
}

// networkTimer handles the TaskManager's monitor and registration timers.
func (t *TaskManager) networkTimer(o *Out, m *messages.Timer) {
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
			cause := "The heartbeat of ResourceManager with id " + ResourceManagerName + " timed out."
			o.Log(eventlog.KindHeartbeatTimeout, messages.Str("resource_manager", ResourceManagerName),
				messages.Int("last_heartbeat_ms", t.net.lastRM), messages.Str("cause", cause))
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
func (t *TaskManager) jobManagerLost(o *Out) {
	cause := "The heartbeat of JobManager with id " + JobManagerName + " timed out."
	o.Log(eventlog.KindHeartbeatTimeout, messages.Str("job_manager", JobManagerName),
		messages.Int("last_heartbeat_ms", t.net.lastJM), messages.Str("cause", cause))
	t.net.lastJM = -1
	job := t.net.job
	if job == "" {
		job = JobID
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
func (t *TaskManager) register(o *Out) {
	t.net.retrying = true
	t.net.regTimeout = registrationInitialTimeout
	t.sendRegistration(o)
}

func (t *TaskManager) sendRegistration(o *Out) {
	t.net.regAttempt++
	t.sendRegister(o)
	o.Timer(t.net.regTimeout, timerRegistration, t.net.regAttempt)
}
