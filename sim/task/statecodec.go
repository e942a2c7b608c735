package task

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/process"
	"github.com/flinksim/flinksim/sim/window"
)

// Serialized sizes (bytes) the simulator charges for state in a snapshot:
// an estimate of what Flink's serializers write, not a measurement. A
// window entry holds the key, the window and state window (4 longs) and the
// accumulator (count, sum, min, max); a timer the timestamp and window; a
// ValueState entry the key, the counter and the TTL timestamp; a source
// split its topic partition and offsets.
const (
	windowEntryBytes = 8*4 + 8*4 + 4
	timerBytes       = 8 * 3
	valueEntryBytes  = 8 * 2
	splitStateBytes  = 8 * 3
)

// keyGroupOf is the key group of a record key (KeyGroupRangeAssignment.assignToKeyGroup).
func keyGroupOf(key string, maxParallelism int) int32 {
	return int32(keygroup.AssignToKeyGroup(keygroup.StringHashCode(key), maxParallelism))
}

// windowStateToProto converts the window operator's snapshot, tagging each
// key with its key group, and returns its size in bytes per key.
func windowStateToProto(states []window.KeyState, maxP int) ([]*messages.KeyedWindowState, map[string]int64) {
	out := make([]*messages.KeyedWindowState, 0, len(states))
	sizes := make(map[string]int64, len(states))
	for _, ks := range states {
		p := &messages.KeyedWindowState{Key: ks.Key, KeyGroup: keyGroupOf(ks.Key, maxP)}
		for _, w := range ks.Windows {
			p.Windows = append(p.Windows, &messages.WindowEntry{WindowStart: w.Window.Start, WindowEnd: w.Window.End,
				StateWindowStart: w.StateWindow.Start, StateWindowEnd: w.StateWindow.End, Count: w.Acc.Count,
				Sum: w.Acc.Sum, Min: w.Acc.Min, Max: w.Acc.Max, Fired: int32(w.Fired)})
		}
		for _, t := range ks.EventTimeTimers {
			p.EventTimeTimers = append(p.EventTimeTimers, &messages.WindowTimer{Timestamp: t.Timestamp, WindowStart: t.Window.Start, WindowEnd: t.Window.End})
		}
		for _, t := range ks.ProcessingTimeTimers {
			p.ProcessingTimeTimers = append(p.ProcessingTimeTimers, &messages.WindowTimer{Timestamp: t.Timestamp, WindowStart: t.Window.Start, WindowEnd: t.Window.End})
		}
		sizes[ks.Key] = int64(len(ks.Key) + len(p.Windows)*windowEntryBytes + (len(p.EventTimeTimers)+len(p.ProcessingTimeTimers))*timerBytes)
		out = append(out, p)
	}
	return out, sizes
}

// windowStateFromProto is the inverse of windowStateToProto.
func windowStateFromProto(in []*messages.KeyedWindowState) []window.KeyState {
	out := make([]window.KeyState, 0, len(in))
	for _, p := range in {
		ks := window.KeyState{Key: p.Key}
		for _, w := range p.Windows {
			ks.Windows = append(ks.Windows, window.WindowState{Window: window.TimeWindow{Start: w.WindowStart, End: w.WindowEnd},
				StateWindow: window.TimeWindow{Start: w.StateWindowStart, End: w.StateWindowEnd},
				Acc:         window.Accumulator{Count: w.Count, Sum: w.Sum, Min: w.Min, Max: w.Max}, Fired: int(w.Fired)})
		}
		for _, t := range p.EventTimeTimers {
			ks.EventTimeTimers = append(ks.EventTimeTimers, window.Timer{Timestamp: t.Timestamp, Key: p.Key, Window: window.TimeWindow{Start: t.WindowStart, End: t.WindowEnd}})
		}
		for _, t := range p.ProcessingTimeTimers {
			ks.ProcessingTimeTimers = append(ks.ProcessingTimeTimers, window.Timer{Timestamp: t.Timestamp, Key: p.Key, Window: window.TimeWindow{Start: t.WindowStart, End: t.WindowEnd}})
		}
		out = append(out, ks)
	}
	return out
}

// valueStateToProto converts the process function's ValueState entries and
// returns their size in bytes per key.
func valueStateToProto(entries []process.Entry, maxP int) ([]*messages.ValueStateEntry, map[string]int64) {
	out := make([]*messages.ValueStateEntry, 0, len(entries))
	sizes := make(map[string]int64, len(entries))
	for _, e := range entries {
		out = append(out, &messages.ValueStateEntry{Key: e.Key, KeyGroup: keyGroupOf(e.Key, maxP), Count: e.Count, LastAccessMs: e.LastAccessMs})
		sizes[e.Key] = int64(len(e.Key) + valueEntryBytes)
	}
	return out, sizes
}

func valueStateFromProto(in []*messages.ValueStateEntry) []process.Entry {
	out := make([]process.Entry, 0, len(in))
	for _, e := range in {
		out = append(out, process.Entry{Key: e.Key, Count: e.Count, LastAccessMs: e.LastAccessMs})
	}
	return out
}
