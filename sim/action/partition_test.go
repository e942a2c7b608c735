package action

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePartitionNetwork(t *testing.T) {
	for _, c := range []struct {
		give string
		want Action
		arg  string
	}{
		{"at=30s partition-network tm-1 jobmanager for 10s", Action{At: 30 * time.Second, Verb: PartitionNetwork, Cut: Partition{"tm-1", "jobmanager", 10 * time.Second}}, "tm-1 jobmanager for 10s"},
		{"at=1 min partition-network tm-2 tm-1 for 1500 ms", Action{At: time.Minute, Verb: PartitionNetwork, Cut: Partition{"tm-2", "tm-1", 1500 * time.Millisecond}}, "tm-2 tm-1 for 1500ms"},
		{"at=0 partition-network jobmanager tm-3 for 2 min", Action{Verb: PartitionNetwork, Cut: Partition{"jobmanager", "tm-3", 2 * time.Minute}}, "jobmanager tm-3 for 2min"},
	} {
		got, err := Parse(c.give)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.give, got, err, c.want)
			continue
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(String()) of %q = %+v, %v", c.give, again, err)
		}
		if got.Arg() != c.arg {
			t.Errorf("Arg() of %q = %q, want %q", c.give, got.Arg(), c.arg)
		}
		if back := FromMessage(got.Message(true)); !reflect.DeepEqual(back, got) {
			t.Errorf("FromMessage(Message()) of %q = %+v", c.give, back)
		}
	}
	for give, want := range map[string]string{
		"at=1s partition-network tm-1 jobmanager":          "needs 'A B for DURATION'",
		"at=1s partition-network tm-1 jobmanager 10s":      "needs 'A B for DURATION'",
		"at=1s partition-network tm-1 kafka for 10s":       `"kafka" is neither jobmanager nor a task manager`,
		"at=1s partition-network tm-0 jobmanager for 10s":  `"tm-0" is neither`,
		"at=1s partition-network tm-1 tm-1 for 10s":        "cannot be cut off from itself",
		"at=1s partition-network tm-1 tm-2 for 0 ms":       "must last more than 0 ms",
		"at=1s partition-network tm-1 tm-2 for forever":    "for forever",
		"at=1s partition-network jobmanager tm-2 for -1 s": "for -1 s",
	} {
		if _, err := Parse(give); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", give, err, want)
		}
	}
}
