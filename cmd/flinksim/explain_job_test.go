package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster/explain"
)

// TestExplainJob checks explain job on source 2 / window 3 / sink 1 against
// values worked out by hand: keyBy is HASH (2 x 3 = 6 channels), window 3 ->
// sink 1 REBALANCE (3 channels); the key-group ranges of 128 key groups over 3
// subtasks are KeyGroupRangeAssignment's start = ceil(i*128/3), end =
// floor(((i+1)*128-1)/3): [0,42], [43,85], [86,127]; "orders" starts its
// splits at ((-1008770331 * 31) & 0x7FFFFFFF) % 2 = 1, so partitions 0..3 go
// to readers 1, 0, 1, 0; the job needs 3 slots, slot 2 holding window-2 alone.
func TestExplainJob(t *testing.T) {
	args := []string{"job", "--set", "job.source.parallelism=2", "--set", "job.window.parallelism=3", "--set", "job.sink.parallelism=1"}
	var got explain.Job
	runExplainJSON(t, &got, args...)
	var verts, edges, groups []string
	for _, v := range got.Vertices {
		verts = append(verts, fmt.Sprintf("%s/%d", v.ID, v.Parallelism))
	}
	for _, e := range got.Edges {
		edges = append(edges, fmt.Sprintf("%s->%s %s %d", e.From, e.To, e.ShipStrategy, e.Channels))
	}
	for _, k := range got.KeyGroups {
		groups = append(groups, fmt.Sprintf("%s[%d,%d]", k.Subtask, k.Start, k.End))
	}
	checks := []struct{ what, got, want string }{
		{"vertices", fmt.Sprint(verts), "[source/2 window/3 sink/1]"},
		{"edges", fmt.Sprint(edges), "[source->window HASH 6 window->sink REBALANCE 3]"},
		{"key groups", fmt.Sprint(groups), "[window-0[0,42] window-1[43,85] window-2[86,127]]"},
		{"slots", fmt.Sprint(got.Slots), "[[source-0 window-0 sink-0] [source-1 window-1] [window-2]]"},
		{"splits", fmt.Sprint(got.Splits), "[[1 3] [0 2]]"},
		{"slots needed", strconv.Itoa(got.SlotsNeeded), "3"},
		{"slots offered", strconv.Itoa(got.SlotsOffered), "2"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}

	// The default job: keyBy is never chainable, so two vertices, the sink
	// chained to the window at parallelism 2.
	runExplainJSON(t, &got, "job")
	verts = verts[:0]
	for _, v := range got.Vertices {
		verts = append(verts, fmt.Sprintf("%s/%d", v.ID, v.Parallelism))
	}
	if fmt.Sprint(verts) != "[source/2 window/2]" || len(got.Edges) != 1 || got.Edges[0].ShipStrategy != "HASH" {
		t.Errorf("default job graph: vertices %v edges %+v", verts, got.Edges)
	}

	out, err := runExplain(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"window -> sink    REBALANCE", "the cluster offers only 2 slots", "--set sim.taskmanagers=3", "window-2  [86, 127]", "2     window-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// run's refusals, with Flink's message and the bad-input exit code.
	_, err = runExplain(t, "job", "--set", "job.sink.parallelism=0")
	if err == nil || !strings.Contains(err.Error(), "The parallelism of an operator must be at least 1") || errors.As(err, new(exitError)) {
		t.Errorf("job.sink.parallelism=0: %v, want a bad-input error (exit 2)", err)
	}
}

// More sliding windows per record than the simulator holds are refused
// before any is made, as run refuses them (config.MaxSlidingWindowsPerRecord):
// 1 d sliding every 1 ms would be 86.4 million windows.
func TestExplainWindowRefusesTooManySlidingWindows(t *testing.T) {
	_, err := runExplain(t, "window", "--ts", "5", "--size", "10001ms", "--slide", "1ms")
	if !errors.As(err, new(usageError)) || err.Error() != "--size 10001 ms, --slide 1 ms: the record would belong to 10001 windows, more than the simulator holds (10000 per record)" {
		t.Errorf("10001 windows: %v (%T)", err, err)
	}
	out, err := runExplain(t, "window", "--ts", "5", "--size", "10000ms", "--slide", "1ms", "--json")
	if err != nil || strings.Count(out, `"start"`) != 10000 {
		t.Errorf("10000 windows: %v, %d windows", err, strings.Count(out, `"start"`))
	}
}

// explain netty decodes a frame given in hex (a golden vector of
// sim/netty, written by hand from NettyMessage.AddCredit's write), and the
// log's own dump of a frame; a bad frame exits 2 naming the byte at fault.
func TestExplainNetty(t *testing.T) {
	out, errOut, code := cli(t, "explain", "netty", "0000001d", "badc0ffe", "06", "00000003", "0102030405060708", "1112131415161718")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"frame 1 at byte 0: AddCredit (id 6), 29 bytes",
		"AddCredit(01020304050607081112131415161718 : 3)",
		"9       4     credit       3",
		"13      16    receiverId   01020304050607081112131415161718",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var doc struct {
		Bytes  int `json:"bytes"`
		Frames []struct {
			Offset, Length, ID int
			Message            string
			Fields             []struct {
				Offset, Size int
				Name, Value  string
			}
		} `json:"frames"`
	}
	runExplainJSON(t, &doc, "netty", "00000009badc0ffe05 0000001d badc0ffe 09 00000007 0102030405060708 1112131415161718")
	if doc.Bytes != 38 || len(doc.Frames) != 2 || doc.Frames[0].Message != "CloseRequest" || doc.Frames[1].Offset != 9 ||
		doc.Frames[1].Message != "BacklogAnnouncement" || doc.Frames[1].Fields[3].Name != "backlog" || doc.Frames[1].Fields[3].Value != "7" {
		t.Errorf("--json: %+v", doc)
	}
	out, errOut, code = cli(t, "explain", "netty", "len=29 magic=0xBADC0FFE id=6(AddCredit) body[20]=00000003 01020304 05060708 11121314 15161718")
	if code != 0 || !strings.Contains(out, "AddCredit(01020304050607081112131415161718 : 3)") {
		t.Errorf("the log's dump: exit %d, %s%s", code, out, errOut)
	}
	for _, c := range []struct{ give, want string }{
		{"0000001d badc0ffe 06 00000000 0102030405060708 1112131415161718", "explain netty: byte 9: The announced credit should be greater than 0"},
		{"00000009 deadbeef 05", "explain netty: byte 4: Network stream corrupted: received incorrect magic number."},
		{"00000009badc0ffe05 0000001d badc0ffe 06", "explain netty: byte 18 (frame 2, from byte 9): netty: incomplete frame"},
		{"0000 00x9", "explain netty: hex: character 8 ('x') is not a hex digit"},
	} {
		_, errOut, code := cli(t, "explain", "netty", c.give)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("explain netty %s: exit %d, %q; want 2 and %q", c.give, code, errOut, c.want)
		}
	}
}
