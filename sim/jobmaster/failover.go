package jobmaster

import (
	"slices"
	"strings"

	"github.com/flinksim/flinksim/sim/config"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/heartbeat"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/restart"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// startFailover sets up the restart strategy and the heartbeat timer.
func (j *JobMaster) startFailover(o *kernel.Out) {
	// Flink 1.19+ (RestartStrategyOptions): with checkpointing on and no
	// strategy configured, exponential-delay; without checkpointing, none
	rc := restart.DefaultConfig(j.cfg.CheckpointInterval > 0)
	if j.cfg.RestartStrategy != config.RestartDefault {
		rc.Strategy = string(j.cfg.RestartStrategy)
	}
	rc.InitialBackoffMs = j.cfg.RestartInitialBackoff.Milliseconds()
	rc.JitterFactor = j.cfg.RestartJitterFactor
	rc.FixedDelayAttempts = j.cfg.FixedDelayAttempts
	rc.FixedDelayMs = j.cfg.FixedDelay.Milliseconds()
	if j.cfg.RestartStrategy == config.RestartDefault {
		// Flink ignores the exponential-delay options when no strategy is
		// configured; the simulator's shorter initial backoff is what the
		// user set, so it applies in both cases
		rc.Strategy = ""
	}
	st, err := restart.New(rc, o.Rand())
	if err != nil {
		o.Invariant("restart_strategy", "%v", err)
		return
	}
	j.strategy = st
	o.Log(eventlog.RestartStrategy{Strategy: st.Name(), Description: strings.TrimSpace(describe(st))})
	o.Timer(vt.FromDuration(j.cfg.HeartbeatInterval), timerHeartbeat, 0)
}

func describe(s restart.Strategy) string {
	if st, ok := s.(interface{ String() string }); ok {
		return st.String()
	}
	return s.Name()
}

// heartbeat sends a heartbeat request to every task manager that offered
// slots, then checks their monitors: one that timed out is lost
// (HeartbeatManagerSenderImpl, HeartbeatMonitorImpl; JobMaster's
// TaskManagerHeartbeatListener.notifyHeartbeatTimeout).
func (j *JobMaster) heartbeat(o *kernel.Out, send bool) {
	if j.status.Terminal() {
		return
	}
	if send {
		o.Timer(vt.FromDuration(j.cfg.HeartbeatInterval), timerHeartbeat, 0)
	}
	heartbeat.Round(o, j.monitors, send, vt.FromDuration(j.cfg.RPCLatency()), func(tm string, m *heartbeat.Monitor) {
		j.lost[tm] = true
		cause := "The heartbeat of TaskManager with id " + tm + " timed out."
		o.Log(eventlog.HeartbeatTimeout{TaskManager: tm, LastHeartbeatMs: m.LastHeartbeat(), Cause: cause})
		j.slots = slices.DeleteFunc(j.slots, func(s Slot) bool { return s.TaskManager == tm })
		j.failover(o, "java.util.concurrent.TimeoutException: "+cause)
		// JobMaster.disconnectTaskManager: the TaskManager is told to close
		// its connection (lost to a cut or a dead TaskManager; one that
		// stalled fails its tasks as soon as it wakes)
		o.Send(tm, vt.FromDuration(j.cfg.RPCLatency()), &messages.Envelope_DisconnectJobManager{DisconnectJobManager: &messages.DisconnectJobManager{
			JobId: j.jobID(), Cause: "java.util.concurrent.TimeoutException: " + cause}})
	})
}

// failover restarts the whole pipelined region (here the whole job, whose
// tasks are all connected by pipelined edges) after the restart strategy's
// backoff, or fails the job when the strategy allows no more restarts
// (DefaultScheduler.handleTaskFailure with RestartPipelinedRegionFailoverStrategy).
func (j *JobMaster) failover(o *kernel.Out, cause string) {
	if j.status != status.JobRunning {
		return
	}
	now := vt.Millis(o.Now())
	j.strategy.NotifyFailure(now)
	j.cancelTasks(o)
	if !j.strategy.CanRestart() {
		o.Log(eventlog.Failover{Cause: cause, Strategy: j.strategy.Name(), Restarts: int64(j.restarts)})
		j.setStatus(o, status.JobFailing, cause)
		j.setStatus(o, status.JobFailed, "org.apache.flink.runtime.JobException: Recovery is suppressed by "+describe(j.strategy))
		return
	}
	backoff := j.strategy.BackoffMs()
	j.restarts++
	j.setStatus(o, status.JobRestarting, cause)
	o.Log(eventlog.Failover{Cause: cause, Restart: true, Strategy: j.strategy.Name(), BackoffMs: backoff,
		Restarts: int64(j.restarts), NextAttempt: int64(j.attempt + 1)})
	o.Timer(vt.FromMillis(backoff), timerRestart, 0)
}

// cancelTasks cancels every execution of the current attempt on the task
// managers still alive.
func (j *JobMaster) cancelTasks(o *kernel.Out) {
	j.exec.canceled = j.exec.canceledView()
	for _, name := range j.exec.order {
		tm := j.exec.location[name]
		if j.exec.tasks[name] != status.Finished && !j.lost[tm] {
			o.Send(tm, vt.FromDuration(j.cfg.RPCLatency()), &messages.Envelope_CancelTask{CancelTask: &messages.CancelTask{ExecutionId: name}})
		}
		o.Log(eventlog.TaskState{Task: name, State: "CANCELED"})
	}
	clear(j.exec.location)
	j.exec.order = j.exec.order[:0]
	j.deploy = false
	j.ckpt.sendExecutions(o, &j.exec)
}

// restart deploys a new attempt of every task once enough slots are there,
// restored from the latest completed checkpoint (or from the starting
// offsets when there is none).
func (j *JobMaster) restart(o *kernel.Out) {
	if j.status != status.JobRestarting {
		return
	}
	j.attempt++
	j.exec.canceled = nil
	j.setStatus(o, status.JobRunning, "")
	j.source.enum.Reset()
	if j.ckpt.started {
		// restore from the latest completed checkpoint, if there is one:
		// keyed state, channel state, and the source offsets through the
		// enumerator (restored, when the coordinator answers)
		j.ckpt.requestRestore(o, &messages.RestoreRequest{})
		return
	}
	j.restoreFrom = nil
	j.logFreshStart(o)
	j.deployOrWait(o)
}

// action carries out a user action addressed to the JobManager.
func (j *JobMaster) action(o *kernel.Out, m *messages.Action) {
	a := action.FromMessage(m)
	text := a.String()
	if j.status != status.JobRunning {
		reason := "the job is " + j.status.String()
		if j.status == 0 {
			reason = "the job is not submitted yet"
		}
		o.Log(eventlog.ActionIgnored{Action: text, Reason: reason})
		return
	}
	switch a.Verb {
	case action.TriggerCheckpoint:
		j.requestCheckpoint(o, messages.CheckpointKind_CHECKPOINT)
	case action.TriggerSavepoint:
		j.requestCheckpoint(o, messages.CheckpointKind_SAVEPOINT)
	case action.StopWithSavepoint:
		j.requestCheckpoint(o, messages.CheckpointKind_STOP_WITH_SAVEPOINT)
	case action.Set:
		if j.rescaleTo > 0 || j.reconfig != nil {
			o.Log(eventlog.ActionIgnored{Action: text, Reason: "a rescale or reconfiguration is in progress"})
			return
		}
		k, v := a.Key, a.Value
		// a running job takes new configuration only through a restart:
		// stop with a savepoint, then a new job from it with the new value
		j.reconfig = &messages.Setting{Key: k, Value: v}
		o.Log(eventlog.Reconfigure{Step: eventlog.RescaleStop, Setting: k, Value: v})
		j.requestCheckpoint(o, messages.CheckpointKind_STOP_WITH_SAVEPOINT)
	case action.Rescale:
		if j.rescaleTo > 0 || j.reconfig != nil {
			o.Log(eventlog.ActionIgnored{Action: text, Reason: "a rescale is in progress"})
			return
		}
		j.rescaleTo, j.rescaleMaxP = a.Parallelism, a.MaxParallelism
		o.Log(eventlog.Rescale{Step: eventlog.RescaleStop, ToParallelism: int64(j.rescaleTo)})
		j.requestCheckpoint(o, messages.CheckpointKind_STOP_WITH_SAVEPOINT)
	default:
		o.Log(eventlog.ActionIgnored{Action: text, Reason: "not an action for the JobManager"})
	}
}
