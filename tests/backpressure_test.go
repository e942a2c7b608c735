package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
)

// lagAt returns the total Kafka lag (end offset - read offset over all
// partitions) logged at virtual second sec.
func lagAt(t *testing.T, evs []logEvent, sec int64) int64 {
	t.Helper()
	for _, e := range eventsOf(evs, "kafka_metrics") {
		if e.num("vt") != sec*1_000_000 {
			continue
		}
		var parts []struct{ Lag int64 }
		raw, _ := json.Marshal(e["partitions"])
		if err := json.Unmarshal(raw, &parts); err != nil {
			t.Fatal(err)
		}
		lag := int64(0)
		for _, p := range parts {
			lag += p.Lag
		}
		return lag
	}
	t.Fatalf("no kafka_metrics at %d s", sec)
	return 0
}

// metricsFrom returns the task_metrics of one subtask from virtual second
// from on.
func metricsFrom(evs []logEvent, task string, from int64) []logEvent {
	var out []logEvent
	for _, e := range eventsOf(evs, "task_metrics") {
		if e.str("actor") == task && e.num("vt") >= from*1_000_000 {
			out = append(out, e)
		}
	}
	return out
}

// The backpressure scenario: 1000 orders/s into 2 window subtasks that each
// need 3 ms per record (capacity 333 records/s each, 667/s together). The
// window subtasks are ~1000 ms/s busy from the start; the network buffers
// take the excess first, and once the sources' output pools are full the
// sources are backpressured and the Kafka lag grows at about input rate -
// drain rate = 333 records/s. With the async variant (0.2 ms per record)
// the backpressure is gone and the lag stays near zero.
func TestBackpressureScenario(t *testing.T) {
	cfg := settings(t, "sim.duration=60 s", "sim.cost.window=3 ms")
	res, log := run(t, cfg, cluster.Options{})
	evs := parseLog(t, log)
	// The keys do not split evenly: the subtask with the larger share of
	// records is the bottleneck and is busy all the time; the other works
	// in proportion to its share, and the sources drain the topic at the
	// bottleneck's pace: 333 records/s divided by its share.
	in0 := metricsFrom(evs, "window-0", 60)[0].num("numRecordsIn")
	in1 := metricsFrom(evs, "window-1", 60)[0].num("numRecordsIn")
	hot, cold, share := "window-0", "window-1", float64(in0)/float64(in0+in1)
	if in1 > in0 {
		hot, cold, share = "window-1", "window-0", float64(in1)/float64(in0+in1)
	}
	if b := mean(metricsFrom(evs, hot, 10), "busyTimeMsPerSecond"); b < 980 {
		t.Fatalf("%s (share %.2f) busy %.0f ms/s on average, want ~1000", hot, share, b)
	}
	wantCold := 1000 * (1 - share) / share
	if b := mean(metricsFrom(evs, cold, 10), "busyTimeMsPerSecond"); b < wantCold*0.9 || b > wantCold*1.1 {
		t.Fatalf("%s busy %.0f ms/s on average, want about %.0f (its share of the bottleneck's pace)", cold, b, wantCold)
	}
	for _, e := range eventsOf(evs, "task_metrics") {
		// the output pool bounds what a backpressured source holds
		if u, ok := e["outPoolUsage"].(json.Number); ok {
			if f, _ := u.Float64(); f > (12+5)/12.0 {
				t.Fatalf("%s at %d µs: outPoolUsage %s above (12 + 5 overdraft) / 12", e.str("actor"), e.num("vt"), u)
			}
		}
	}
	// Backpressure starts when the network buffers between the sources and
	// the windows are full. What they hold is the records the sources
	// emitted less those the windows took in (numRecordsOut - numRecordsIn),
	// and Flink's bounds give its range: each source's output pool holds 2*2
	// + 8 = 12 buffers (a subpartition at max-buffers-per-channel 10 makes
	// it unavailable first), plus at most 5 overdraft ones, and each
	// RemoteInputChannel holds its 2 exclusive and up to the gate's 8
	// floating buffers; a buffer holds 32 KiB / 100 B = 327 records. The
	// pools are full of full buffers once a source is backpressured (it
	// stops only when a subpartition holds 10 buffers or the pool is used
	// up); the receivers' buffers hold what came while they still had
	// credit, flushed slices of ~25 records every 100 ms at first, full
	// buffers later.
	const perBuffer = 327
	full := 2 * 10 * perBuffer                     // at the least: a subpartition of each source at max-buffers-per-channel
	most := 2*(12+5)*perBuffer + 2*(2+8)*perBuffer // pools with overdraft, and both remote channels full
	inFlight := func(sec int64) int64 {
		var out, in int64
		for _, s := range []string{"source-0", "source-1"} {
			out += metricsFrom(evs, s, sec)[0].num("numRecordsOut")
		}
		for _, w := range []string{"window-0", "window-1"} {
			in += metricsFrom(evs, w, sec)[0].num("numRecordsIn")
		}
		return out - in
	}
	for _, s := range []string{"source-0", "source-1"} {
		var first int64 = -1
		for _, m := range metricsFrom(evs, s, 1) {
			if m.num("backPressuredTimeMsPerSecond") > 500 {
				first = m.num("vt") / 1_000_000
				break
			}
		}
		if first < 0 {
			t.Fatalf("%s never backpressured", s)
		}
		if n := inFlight(first); n < int64(full) || n > int64(most) {
			t.Fatalf("%s first backpressured at %d s with %d records in the network, want %d..%d (Flink's buffer bounds)", s, first, n, full, most)
		}
		if bp := mean(metricsFrom(evs, s, 40), "backPressuredTimeMsPerSecond"); bp < 800 {
			t.Fatalf("%s backpressured %.0f ms/s on average from 40 s, want most of the time", s, bp)
		}
	}
	for sec := int64(1); sec <= 60; sec++ {
		if n := inFlight(sec); n > int64(most) {
			t.Fatalf("%d records in the network at %d s, more than Flink's buffers hold (%d)", n, sec, most)
		}
	}
	// from the onset on the topic backs up at the excess of input over drain
	drain := 1000 / 3.0 / share
	growth := float64(lagAt(t, evs, 60)-lagAt(t, evs, 40)) / 20
	want := 1000 - drain
	if growth < want*0.8 || growth > want*1.2 {
		t.Fatalf("lag grows %.0f records/s, want about %.0f (input 1000/s - drain %.0f/s)", growth, want, drain)
	}
	if res.MaxBackPressure < 900 || !strings.HasPrefix(res.MaxBackPressureTask, "source-") {
		t.Errorf("summary: max backpressure %d ms/s at %q", res.MaxBackPressure, res.MaxBackPressureTask)
	}

	cfg = settings(t, "sim.duration=40 s", "sim.cost.window=200 µs")
	res, log = run(t, cfg, cluster.Options{})
	evs = parseLog(t, log)
	for _, s := range []string{"source-0", "source-1"} {
		for _, m := range metricsFrom(evs, s, 1) {
			if bp := m.num("backPressuredTimeMsPerSecond"); bp > 50 {
				t.Fatalf("async variant: %s backpressured %d ms/s at %d µs", s, bp, m.num("vt"))
			}
		}
	}
	if res.MaxBackPressure > 50 {
		t.Fatalf("async variant: summary reports %d ms/s of backpressure at %s", res.MaxBackPressure, res.MaxBackPressureTask)
	}
	if lag := lagAt(t, evs, 40); lag > 100 {
		t.Fatalf("async variant: lag %d at the end, want it drained", lag)
	}
}

// One slow consumer of two: every order has the same key, so window-0
// (the owner of its key group) does all the work. Only the channels into
// window-0 run out of credit: the reading source's output queue toward
// subpartition 0 (window-0) holds buffers while the one toward window-1
// stays empty. The sources are backpressured, and window-1 is idle. With
// the default 2 exclusive buffers per channel no BacklogAnnouncement goes
// out (Flink's needAnnounceBacklog: only for an initial credit of 0).
// The reading source's output pool (12 buffers of 327 records) takes the
// excess of 1000 - 667 records/s for about 12 s before it is full.
func TestOneSlowConsumer(t *testing.T) {
	// key "user-0" is in key group 8 of 128: subtask 0 of 2
	cfg := settings(t, "sim.duration=30 s", "sim.source.keys=1", "sim.cost.window=1500 µs")
	_, log := run(t, cfg, cluster.Options{})
	evs := parseLog(t, log)
	if n := len(eventsOf(evs, "backlog_announcement")); n != 0 {
		t.Fatalf("%d backlog_announcement events with 2 exclusive buffers per channel, want none", n)
	}
	for _, m := range metricsFrom(evs, "window-1", 5) {
		if idle := m.num("idleTimeMsPerSecond"); idle < 950 {
			t.Fatalf("window-1 idle %d ms/s, want ~1000", idle)
		}
	}
	for _, m := range metricsFrom(evs, "window-0", 5) {
		if b := m.num("busyTimeMsPerSecond"); b < 950 {
			t.Fatalf("window-0 busy %d ms/s, want ~1000", b)
		}
	}
	// the one key lives in one Kafka partition: the source reading it is
	// the backpressured producer
	busySources := 0
	for _, s := range []string{"source-0", "source-1"} {
		ms := metricsFrom(evs, s, 5)
		if ms[len(ms)-1].num("numRecordsIn") == 0 {
			continue
		}
		busySources++
		if bp := mean(metricsFrom(evs, s, 15), "backPressuredTimeMsPerSecond"); bp < 800 {
			t.Fatalf("%s backpressured %.0f ms/s on average", s, bp)
		}
		// only the output queue toward the slow consumer fills up
		sum0 := int64(0)
		for _, m := range ms {
			q := outputQueueLengths(t, m)
			if len(q) != 2 {
				t.Fatalf("%s at %d µs: outputQueueLengths %v, want one entry per window subtask", s, m.num("vt"), q)
			}
			if q[1] != 0 {
				t.Fatalf("%s at %d µs: output queue toward window-1 is %d buffers, want 0", s, m.num("vt"), q[1])
			}
			sum0 += q[0]
		}
		if avg := float64(sum0) / float64(len(ms)); avg < 1 {
			t.Fatalf("%s: output queue toward window-0 is %.2f buffers on average, want it backed up", s, avg)
		}
	}
	if busySources != 1 {
		t.Fatalf("%d sources read records, want the one reading the key's partition", busySources)
	}
}

// outputQueueLengths decodes a task_metrics event's outputQueueLengths:
// the data buffers waiting per subpartition.
func outputQueueLengths(t *testing.T, e logEvent) []int64 {
	t.Helper()
	raw, ok := e["outputQueueLengths"]
	if !ok {
		t.Fatalf("task_metrics of %s at %d µs has no outputQueueLengths", e.str("actor"), e.num("vt"))
	}
	b, _ := json.Marshal(raw)
	var out []int64
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("outputQueueLengths %s: %v", b, err)
	}
	return out
}

// With no exclusive buffers (buffers-per-channel=0) every consumer asks for
// its partition with an initial credit of 0, lives on floating buffers, and
// learns of waiting data from BacklogAnnouncements (Flink's
// needAnnounceBacklog): the log has backlog_announcement events, and the
// job still counts every playground window right.
func TestNoExclusiveBuffersAnnounceBacklog(t *testing.T) {
	cfg := settings(t, "taskmanager.network.memory.buffers-per-channel=0", "job.window.size=15 s",
		"job.watermark.out-of-orderness=0 ms", "job.sink.topic=output")
	recs := readEvents(t, dataPath("playground-clicks.jsonl"), cfg)
	res, log := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job status %s, want FINISHED", res.JobStatus)
	}
	rs := sinkResults(t, res)
	if len(rs) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rs {
		if r.Value != 1000 {
			t.Fatalf("page %s window [%d,%d) counted %v clicks, want 1000", r.Key, r.WindowStart, r.WindowEnd, r.Value)
		}
	}
	compareCounts(t, resultCounts(t, rs), oracleCounts(recs, 15000))
	evs := parseLog(t, log)
	anns := eventsOf(evs, "backlog_announcement")
	if len(anns) == 0 {
		t.Fatal("no backlog_announcement events with 0 exclusive buffers per channel")
	}
	for _, e := range anns {
		if !strings.HasPrefix(e.str("actor"), "window-") || e.num("backlog") < 1 {
			t.Fatalf("backlog_announcement %v: want one to a window channel with a backlog of at least 1", e)
		}
	}
}

// mean averages a numeric field over log events.
func mean(evs []logEvent, field string) float64 {
	if len(evs) == 0 {
		return 0
	}
	sum := 0.0
	for _, e := range evs {
		sum += float64(e.num(field))
	}
	return sum / float64(len(evs))
}

// With sim.log.netty-frames every NettyMessage of a remote channel is
// logged with its encoded size: PartitionRequest is 9 + 88 bytes and
// AddCredit 9 + 4 + 16 (NettyMessage's layouts); local channels send none.
func TestNettyFramesOfRemoteChannels(t *testing.T) {
	_, log := run(t, settings(t, "sim.duration=2 s", "sim.log.netty-frames=true"), cluster.Options{})
	evs := parseLog(t, log)
	sizes := map[string]int64{"PartitionRequest": 97, "AddCredit": 29, "BacklogAnnouncement": 29}
	seen := map[string]int{}
	for _, e := range eventsOf(evs, "netty_frame") {
		msg := e.str("message")
		seen[msg]++
		if want, ok := sizes[msg]; ok && e.num("frame_length") != want {
			t.Fatalf("%s frame of %d bytes, want %d", msg, e.num("frame_length"), want)
		}
		if msg == "BufferResponse" && e.num("frame_length") < 9+34 {
			t.Fatalf("BufferResponse frame of %d bytes is shorter than its header", e.num("frame_length"))
		}
		if !strings.Contains(e.str("hex"), "magic=0xBADC0FFE") {
			t.Fatalf("frame without Flink's magic number: %s", e.str("hex"))
		}
	}
	// 2 remote channels (window-0/ch-1, window-1/ch-0) request a partition
	if seen["PartitionRequest"] != 2 || seen["BufferResponse"] == 0 || seen["AddCredit"] == 0 {
		t.Fatalf("frames seen: %v", seen)
	}
	for _, e := range eventsOf(evs, "partition_request") {
		local := e.str("channel") == "LocalInputChannel"
		if local == (e.str("connection_id") != "") {
			t.Fatalf("%s: channel %s with connection %q", e.str("actor"), e.str("channel"), e.str("connection_id"))
		}
	}
}
