package status

import (
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// Every status and state crosses the wire under its own number, and the
// wire's name is Flink's with the enum's prefix.
func TestWireNames(t *testing.T) {
	for s := JobCreated; s <= JobCanceled; s++ {
		if got, want := s.Proto().String(), "JOB_"+s.String(); got != want {
			t.Errorf("Job %d on the wire is %s, want %s", s, got, want)
		}
		if back, ok := JobOf(s.Proto()); !ok || back != s {
			t.Errorf("JobOf(%v) = %v, %v", s.Proto(), back, ok)
		}
	}
	if len(messages.JobStatus_name) != int(JobCanceled)+1 {
		t.Errorf("%d JobStatus values on the wire, %d here", len(messages.JobStatus_name), JobCanceled+1)
	}
	for s := Scheduled; s <= Failed; s++ {
		if got, want := s.Proto().String(), "EXECUTION_"+s.String(); got != want {
			t.Errorf("Execution %d on the wire is %s, want %s", s, got, want)
		}
		if back, ok := ExecutionOf(s.Proto()); !ok || back != s {
			t.Errorf("ExecutionOf(%v) = %v, %v", s.Proto(), back, ok)
		}
	}
	if len(messages.ExecutionState_name) != int(Failed)+1 {
		t.Errorf("%d ExecutionState values on the wire, %d here", len(messages.ExecutionState_name), Failed+1)
	}
	for _, m := range []messages.JobStatus{0, 8, -1} {
		if _, ok := JobOf(m); ok {
			t.Errorf("JobOf(%d) is known", m)
		}
	}
	for _, m := range []messages.ExecutionState{0, 8, -1} {
		if _, ok := ExecutionOf(m); ok {
			t.Errorf("ExecutionOf(%d) is known", m)
		}
	}
	if JobRunning.String() != "RUNNING" || Job(0).String() != "" || Job(9).String() != "JobStatus(9)" {
		t.Errorf("names: %q %q %q", JobRunning, Job(0), Job(9))
	}
}
