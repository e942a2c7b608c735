// Package status holds Flink's two status enums: a job's JobStatus
// (org.apache.flink.api.common.JobStatus) and an execution's ExecutionState
// (org.apache.flink.runtime.execution.ExecutionState). Messages and the log
// carry their names as Flink prints them; components keep the typed values.
package status

import "fmt"

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

// ParseJob reads a job status name.
func ParseJob(name string) (Job, bool) {
	for s, n := range jobNames {
		if n != "" && n == name {
			return Job(s), true
		}
	}
	return 0, false
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

// ParseExecution reads an execution state name.
func ParseExecution(name string) (Execution, bool) {
	for s, n := range executionNames {
		if n != "" && n == name {
			return Execution(s), true
		}
	}
	return 0, false
}
