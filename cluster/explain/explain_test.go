package explain

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/window"
)

// "orders".hashCode() is -1008770331; * 31 wraps to -1207109189, & 0x7FFFFFFF
// is 940374459, % 4 = 3: partition 0 goes to reader 3, then round robin.
// With two partitions readers 1 and 2 own none, and the note says so.
func TestSplitsOf(t *testing.T) {
	r, owned := SplitsOf("orders", 5, 4)
	var got []string
	for _, a := range r.Assignments {
		got = append(got, fmt.Sprintf("%d->%d", a.Partition, a.Reader))
	}
	if strings.Join(got, " ") != "0->3 1->0 2->1 3->2 4->3" || r.StartIndex != 3 || r.TopicHashCode != -1008770331 ||
		len(r.IdleReaders) != 0 || r.Note != "" || fmt.Sprint(owned) != "[[1] [2] [3] [0 4]]" {
		t.Errorf("5 partitions over 4 readers: %v, start %d, hash %d, idle %v, owned %v", got, r.StartIndex, r.TopicHashCode, r.IdleReaders, owned)
	}
	r, _ = SplitsOf("orders", 2, 4)
	if fmt.Sprint(r.IdleReaders) != "[1 2]" || !strings.HasPrefix(r.Note, "readers 1, 2 own no split.") {
		t.Errorf("2 partitions over 4 readers: idle %v, note %q", r.IdleReaders, r.Note)
	}
}

// A tumbling minute holds 1700000000123 in [1699999980000, 1700000040000)
// (1700000000123 / 60000 = 28333333, times 60000); it is cleaned up at its
// max timestamp plus the allowed lateness, capped at Long.MAX_VALUE. A
// sliding window of 10 s every 5 s puts an element in two windows, by
// start.
func TestWindowsOf(t *testing.T) {
	tumbling, err := window.NewTumblingEventTimeWindows(60_000, 0, window.StaggerAligned)
	if err != nil {
		t.Fatal(err)
	}
	r, err := WindowsOf(tumbling, 1_700_000_000_123, 5_000)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Window{Start: 1_699_999_980_000, End: 1_700_000_040_000, MaxTimestamp: 1_700_000_039_999, CleanupTime: 1_700_000_044_999}); len(r.Windows) != 1 || r.Windows[0] != want {
		t.Errorf("tumbling: %+v, want %+v", r.Windows, want)
	}
	if r, _ := WindowsOf(tumbling, 1_700_000_000_123, math.MaxInt64); r.Windows[0].CleanupTime != math.MaxInt64 {
		t.Errorf("an overflowing cleanup time is %d, want Long.MAX_VALUE", r.Windows[0].CleanupTime)
	}
	sliding, err := window.NewSlidingEventTimeWindows(10_000, 5_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, _ = WindowsOf(sliding, 12_000, 0)
	if len(r.Windows) != 2 || r.Windows[0].Start != 5_000 || r.Windows[1].Start != 10_000 {
		t.Errorf("sliding: %+v, want the windows from 5 s and from 10 s", r.Windows)
	}
}

// A key's subtask is its key group times the parallelism over the max
// parallelism (computeOperatorIndexForKeyGroup), and the subtask's range
// holds the key group.
func TestKeyOf(t *testing.T) {
	for _, key := range []string{"orders", "user-1", "user-42", ""} {
		hash, err := keygroup.HashCodeOf(key, keygroup.KeyTypeString)
		if err != nil {
			t.Fatal(err)
		}
		r, err := KeyOf(key, keygroup.KeyTypeString, hash, 3, 128, true)
		if err != nil {
			t.Fatal(err)
		}
		if r.Subtask != r.KeyGroup*3/128 || r.KeyGroupRange[0] > r.KeyGroup || r.KeyGroup > r.KeyGroupRange[1] ||
			r.KeyGroup < 0 || r.KeyGroup >= 128 || r.HashCode != hash || !r.MaxParallelismDefault {
			t.Errorf("%q: %+v", key, r)
		}
	}
}

// source 2, window 3, sink 1: keyBy is 2 x 3 channels, window to sink 3;
// 128 key groups over 3 subtasks are [0,42] [43,85] [86,127]; slot 2 holds
// window-2 alone; "orders" starts its splits at reader 1 of 2.
func TestJobOf(t *testing.T) {
	c := config.Default()
	c.SourceParallelism, c.WindowParallelism, c.SinkParallelism = 2, 3, 1
	g, err := jobgraph.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	r := JobOf(g, c)
	var edges, groups []string
	for _, e := range r.Edges {
		edges = append(edges, fmt.Sprintf("%s->%s %s %d", e.From, e.To, e.ShipStrategy, e.Channels))
	}
	for _, k := range r.KeyGroups {
		groups = append(groups, fmt.Sprintf("%s[%d,%d]", k.Subtask, k.Start, k.End))
	}
	if got := strings.Join(edges, ", "); got != "source->window HASH 6, window->sink REBALANCE 3" {
		t.Errorf("edges %s", got)
	}
	if got := strings.Join(groups, " "); got != "window-0[0,42] window-1[43,85] window-2[86,127]" {
		t.Errorf("key groups %s", got)
	}
	if r.SlotsNeeded != 3 || fmt.Sprint(r.Slots[2]) != "[window-2]" || fmt.Sprint(r.Splits) != "[[1 3] [0 2]]" {
		t.Errorf("slots %d %v, splits %v", r.SlotsNeeded, r.Slots, r.Splits)
	}
}
