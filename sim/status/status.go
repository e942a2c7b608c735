// Package status holds Flink's two status enums: a job's JobStatus
// (org.apache.flink.api.common.JobStatus) and an execution's ExecutionState
// (org.apache.flink.runtime.execution.ExecutionState). Messages and the log
// carry them as enums (messages.JobStatus, messages.ExecutionState, with the
// same numbers), the log shows their names as Flink prints them.
package status

import (
	"fmt"

	"github.com/flinksim/flinksim/messages"
)

// Job is a job's status (JobStatus), of the statuses the simulator's jobs
// go through.
type Job uint8

// The job statuses; the zero value is "not submitted yet".
const (
	JobCreated Job = 1 + iota
	JobRunning
	JobRestarting
	JobFailing
	JobFailed
	JobFinished
	JobCanceled
)

var jobNames = [...]string{JobCreated: "CREATED", JobRunning: "RUNNING", JobRestarting: "RESTARTING",
	JobFailing: "FAILING", JobFailed: "FAILED", JobFinished: "FINISHED", JobCanceled: "CANCELED"}

// String is the status as Flink names it ("" before submission).
func (s Job) String() string {
	if int(s) < len(jobNames) {
		return jobNames[s]
	}
	return fmt.Sprintf("JobStatus(%d)", uint8(s))
}

// Terminal reports whether the job ended (JobStatus.isGloballyTerminalState).
func (s Job) Terminal() bool { return s == JobFailed || s == JobFinished || s == JobCanceled }

// Proto is the status on the wire.
func (s Job) Proto() messages.JobStatus { return messages.JobStatus(s) }

// JobOf is the status a message carries; false for one the simulator does
// not know (UNSPECIFIED among them).
func JobOf(m messages.JobStatus) (Job, bool) {
	s := Job(m)
	return s, m > 0 && int(m) < len(jobNames)
}

// Execution is the state of one execution of a subtask (ExecutionState).
type Execution uint8

// The execution states; the zero value is "unknown".
const (
	Scheduled Execution = 1 + iota
	Deploying
	Initializing
	Running
	Finished
	Canceled
	Failed
)

var executionNames = [...]string{Scheduled: "SCHEDULED", Deploying: "DEPLOYING", Initializing: "INITIALIZING",
	Running: "RUNNING", Finished: "FINISHED", Canceled: "CANCELED", Failed: "FAILED"}

// String is the state as Flink names it.
func (s Execution) String() string {
	if int(s) < len(executionNames) {
		return executionNames[s]
	}
	return fmt.Sprintf("ExecutionState(%d)", uint8(s))
}

// Proto is the state on the wire.
func (s Execution) Proto() messages.ExecutionState { return messages.ExecutionState(s) }

// ExecutionOf is the state a message carries; false for one the simulator
// does not know (UNSPECIFIED among them).
func ExecutionOf(m messages.ExecutionState) (Execution, bool) {
	s := Execution(m)
	return s, m > 0 && int(m) < len(executionNames)
}
