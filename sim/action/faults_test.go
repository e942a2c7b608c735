package action

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
)

// The scheduler's other faults parse, render in the form they parse from,
// and refuse what is wrong with the allowed form.
func TestParseSchedulerFaults(t *testing.T) {
	for _, c := range []struct {
		give string
		want Action
	}{
		{"at=30s stall-taskmanager tm-2 for 12s", Action{At: 30 * time.Second, Verb: StallTaskManager, Stall: Stall{"tm-2", 12 * time.Second}}},
		{"at=1 min stall-taskmanager tm-10 for 1500 ms", Action{At: time.Minute, Verb: StallTaskManager, Stall: Stall{"tm-10", 1500 * time.Millisecond}}},
		{"at=5s network-jitter 3ms for 10s", Action{At: 5 * time.Second, Verb: NetworkJitter, Jitter: Jitter{3 * time.Millisecond, 10 * time.Second}}},
		{"at=5s network-jitter 2 ms for 1 min", Action{At: 5 * time.Second, Verb: NetworkJitter, Jitter: Jitter{2 * time.Millisecond, time.Minute}}},
		{"at=9s lose-rpc acknowledge-checkpoint within 5s", Action{At: 9 * time.Second, Verb: LoseRPC, Lose: Lose{messages.LostRPC_LOST_RPC_ACKNOWLEDGE_CHECKPOINT, "", 5 * time.Second}}},
		{"at=9s lose-rpc notify-checkpoint-complete within 2 s", Action{At: 9 * time.Second, Verb: LoseRPC, Lose: Lose{messages.LostRPC_LOST_RPC_NOTIFY_CHECKPOINT_COMPLETE, "", 2 * time.Second}}},
		{"at=9s lose-rpc notify-checkpoint-complete on window-1 within 2s", Action{At: 9 * time.Second, Verb: LoseRPC, Lose: Lose{messages.LostRPC_LOST_RPC_NOTIFY_CHECKPOINT_COMPLETE, "window-1", 2 * time.Second}}},
		{"at=9s lose-rpc decline-checkpoint within 300ms", Action{At: 9 * time.Second, Verb: LoseRPC, Lose: Lose{messages.LostRPC_LOST_RPC_DECLINE_CHECKPOINT, "", 300 * time.Millisecond}}},
		{"at=20s fail-checkpoint-storage for 4s", Action{At: 20 * time.Second, Verb: FailCheckpointStorage, Outage: 4 * time.Second}},
		{"at=20s kafka-unavailable for 1 min", Action{At: 20 * time.Second, Verb: KafkaUnavailable, Outage: time.Minute}},
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
		// on the wire and back
		if back := FromMessage(got.Message(false)); !reflect.DeepEqual(back, got) {
			t.Errorf("FromMessage(Message()) of %q = %+v", c.give, back)
		}
	}
	for give, want := range map[string]string{
		"at=1s stall-taskmanager tm-1":                                  "needs 'tm-N for DURATION'",
		"at=1s stall-taskmanager jobmanager for 5s":                     `"jobmanager" is not a task manager name`,
		"at=1s stall-taskmanager tm-1 for 0 ms":                         "must be more than 0 ms",
		"at=1s network-jitter for 5s":                                   "needs 'MAX for DURATION'",
		"at=1s network-jitter 3ms for":                                  "needs 'MAX for DURATION'",
		"at=1s network-jitter 2s for 5s":                                "more than 1 s",
		"at=1s network-jitter 0ms for 5s":                               "must be more than 0 ms",
		"at=1s lose-rpc heartbeat within 5s":                            `"heartbeat" is not an RPC it can lose`,
		"at=1s lose-rpc acknowledge-checkpoint":                         "needs 'RPC [on TASK] within DURATION'",
		"at=1s lose-rpc acknowledge-checkpoint on window-1#2 within 1s": "a subtask is VERTEX-INDEX",
		"at=1s lose-rpc acknowledge-checkpoint on tm within 1s":         "a subtask is VERTEX-INDEX",
		"at=1s lose-rpc acknowledge-checkpoint within soon":             "within soon",
		"at=1s fail-checkpoint-storage":                                 "needs 'for DURATION'",
		"at=1s fail-checkpoint-storage 5s":                              "needs 'for DURATION'",
		"at=1s kafka-unavailable for 0s":                                "must be more than 0 ms",
		"at=1s kafka-unavailable for ever":                              "kafka-unavailable: ever",
	} {
		if _, err := Parse(give); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", give, err, want)
		}
	}
}
