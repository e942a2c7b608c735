package tests

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/events"
)

// Over random inputs and cluster shapes, a bounded tumbling-window job
// (1) never breaks an invariant (watermarks never go back at any keyed
// operator, credit never negative, buffer sequence numbers contiguous),
// (2) accounts for every record exactly once: counted in its window's last
// firing, sent to the late side output, or dropped and counted in
// numLateRecordsDropped, and (3) writes the same log when run twice.
func TestPropertyEveryRecordAccountedFor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		partitions := rapid.IntRange(1, 5).Draw(t, "partitions")
		parallelism := rapid.IntRange(1, 4).Draw(t, "parallelism")
		slots := rapid.IntRange(1, 2).Draw(t, "slots")
		tms := (parallelism + slots - 1) / slots
		n := rapid.IntRange(1, 400).Draw(t, "records")
		keys := rapid.IntRange(1, 12).Draw(t, "keys")
		disorder := rapid.Int64Range(0, 8000).Draw(t, "disorder_ms")
		sideOutput := rapid.Bool().Draw(t, "side_output")
		lateness := rapid.SampledFrom([]string{"0 ms", "3 s"}).Draw(t, "lateness")
		bufferRecords := rapid.IntRange(1, 64).Draw(t, "buffer_records")
		parse := rapid.SampledFrom([]string{"20 µs", "500 µs", "20 ms"}).Draw(t, "parse_cost")
		var b strings.Builder
		ts := int64(0)
		for i := 0; i < n; i++ {
			ts += rapid.Int64Range(0, 400).Draw(t, "step")
			at := ts - rapid.Int64Range(0, disorder).Draw(t, "behind")
			fmt.Fprintf(&b, "{\"key\":\"k%d\",\"ts\":%d,\"partition\":%d}\n",
				rapid.IntRange(0, keys-1).Draw(t, "key"), at, rapid.IntRange(0, partitions-1).Draw(t, "partition"))
		}
		recs, err := events.Read(strings.NewReader(b.String()), "random.jsonl", events.Options{KeyField: "key", TimeField: "ts", Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		cfg := settings(t, fmt.Sprintf("job.source.partitions=%d", partitions), fmt.Sprintf("parallelism.default=%d", parallelism),
			fmt.Sprintf("taskmanager.numberOfTaskSlots=%d", slots), fmt.Sprintf("sim.taskmanagers=%d", tms),
			"job.window.size=5 s", "job.watermark.out-of-orderness=2 s", "job.window.allowed-lateness="+lateness,
			fmt.Sprintf("job.window.side-output-late-data=%t", sideOutput), fmt.Sprintf("sim.buffer.records=%d", bufferRecords),
			"sim.cost.parse="+parse)
		res, log := run(t, cfg, cluster.Options{Events: recs})
		if res.JobStatus != "FINISHED" {
			t.Fatalf("job %s", res.JobStatus)
		}
		last := map[windowKey]result{}
		for _, r := range sinkResults(t, res) {
			k := windowKey{r.Key, r.WindowStart}
			if prev, ok := last[k]; ok && r.Firing <= prev.Firing {
				t.Fatalf("window %v fired #%d after #%d", k, r.Firing, prev.Firing)
			}
			last[k] = r
		}
		counted := int64(0)
		for _, r := range last {
			counted += int64(r.Value)
		}
		side := int64(len(eventsOf(parseLog(t, log), "late_side_output")))
		dropped := res.Counters["numLateRecordsDropped"]
		if counted+side+dropped != int64(n) {
			t.Fatalf("counted %d + side output %d + dropped %d != %d records", counted, side, dropped, n)
		}
		if sideOutput && dropped != 0 || !sideOutput && side != 0 {
			t.Fatalf("side output %v: %d to the side, %d dropped", sideOutput, side, dropped)
		}
		_, again := run(t, cfg, cluster.Options{Events: recs})
		if !bytes.Equal(log, again) {
			t.Fatal("the same run wrote a different log")
		}
	})
}
