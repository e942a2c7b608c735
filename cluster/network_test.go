package cluster

import (
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
)

// The envelope of a user action goes from the user, at the action's time,
// to its target (TestActionTargets), and carries the action typed: its verb
// on the wire, its text the one the log shows.
func TestActionEnvelopes(t *testing.T) {
	for _, c := range []struct{ give, to string }{
		{"at=1s kill-taskmanager tm-3", "tm-3"},
		{"at=1s trigger-checkpoint", "jobmanager"},
		{"at=1s trigger-savepoint", "jobmanager"},
		{"at=1s stop-with-savepoint", "jobmanager"},
		{"at=1s rescale 2", "jobmanager"},
		{"at=1s set job.watermark.idleness=5s", "jobmanager"},
		{"at=1s set execution.checkpointing.unaligned.enabled=true", "jobmanager"},
		{"at=1s set sim.output.isolation-level=read_uncommitted", "kafka"},
		{"at=1s send-event key=a ts=now", "kafka"},
		{"at=1s pause-partition 0", "kafka"},
		{"at=1s resume-partition 0", "kafka"},
		{"at=1s partition-network tm-1 jobmanager for 2s", "scheduler"},
	} {
		a, err := action.Parse(c.give)
		if err != nil {
			t.Fatal(err)
		}
		s := &Session{}
		e := s.actionEnvelope(a, true)
		m := e.GetAction()
		if e.To != c.to || e.From != "user" || e.DeliverAt != 1_000_000 || m == nil || !m.Live ||
			m.Verb != messages.ActionVerb(a.Verb) || action.Text(m) != c.give {
			t.Errorf("%q: envelope to %s from %s at %d carries %v (%q)", c.give, e.To, e.From, e.DeliverAt, m, action.Text(m))
		}
	}
}

// The hosts a network cut names: each TaskManager a process of its own,
// the JobManager's process holding the JobMaster, the ResourceManager and
// the checkpoint coordinator's spawner, the broker apart, and a subtask or
// channel on the host of whoever spawned it.
func TestHostOf(t *testing.T) {
	for _, c := range []struct{ name, spawner, want string }{
		{"tm-1", "", "tm-1"},
		{"tm-4", "jobmanager", "tm-4"}, // a replacement the ResourceManager starts
		{"jobmanager", "", "jobmanager"},
		{"resourcemanager", "", "jobmanager"},
		{"kafka", "", "kafka"},
		{"window-0", "tm-2", "tm-2"},
		{"window-0/ch-1", "tm-2", "tm-2"},
		{"checkpoint-coordinator", "jobmanager", "jobmanager"},
		{"scheduler", "", "scheduler"},
	} {
		if got := hostOf(c.name, c.spawner); got != c.want {
			t.Errorf("hostOf(%q, %q) = %q, want %q", c.name, c.spawner, got, c.want)
		}
	}
}
