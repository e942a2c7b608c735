package task

import (
	"reflect"
	"testing"

	"github.com/flinksim/flinksim/sim/window"
)

// A window operator's snapshot survives the trip through the protobuf
// TaskStateSnapshot unchanged, and each key carries its key group.
func TestWindowStateRoundTrip(t *testing.T) {
	states := []window.KeyState{{
		Key: "user-7",
		Windows: []window.WindowState{{Window: window.TimeWindow{Start: 0, End: 60000}, StateWindow: window.TimeWindow{Start: 0, End: 60000},
			Acc: window.Accumulator{Count: 3, Sum: 7.5, Min: 1, Max: 4}, Fired: 1}},
		EventTimeTimers: []window.Timer{{Timestamp: 59999, Key: "user-7", Window: window.TimeWindow{Start: 0, End: 60000}}},
	}}
	p, sizes := windowStateToProto(states, 128)
	if p[0].KeyGroup != keyGroupOf("user-7", 128) || sizes["user-7"] != int64(len("user-7")+windowEntryBytes+timerBytes) {
		t.Fatalf("key group %d, size %d", p[0].KeyGroup, sizes["user-7"])
	}
	if back := windowStateFromProto(p); !reflect.DeepEqual(back, states) {
		t.Fatalf("round trip gave %+v, want %+v", back, states)
	}
}
