package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/events"
)

// Watermark alignment (FLIP-182): partition 0 is ten minutes ahead in event
// time; with a 30 s max drift its split is paused once its watermark passes
// the group minimum + 30 s, and resumed once the slower splits are done.
// Alignment never drops data: every record is counted, none is late.
func TestWatermarkAlignmentPausesSplitAhead(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 4000; i++ {
		for p := 0; p < 4; p++ {
			ts := int64(i) * 25
			if p == 0 {
				ts += 600_000
			}
			fmt.Fprintf(&b, "{\"key\":\"k%d\",\"ts\":%d,\"partition\":%d}\n", i%7, ts, p)
		}
	}
	recs, err := events.Parse([]byte(b.String()), "ahead.jsonl", events.Options{KeyField: "key", TimeField: "ts", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	cfg := settings(t, "parallelism.default=1", "sim.taskmanagers=1", "job.window.size=10 s",
		"job.watermark.alignment.group=g", "job.watermark.alignment.max-drift=30 s", "sim.cost.parse=1 ms")
	res, log := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	evs := parseLog(t, log)
	paused := eventsOf(evs, "split_paused")
	resumed := eventsOf(evs, "split_resumed")
	if len(paused) == 0 || paused[0].str("split") != "orders-0" {
		t.Fatalf("split_paused events %v, want orders-0 paused", paused)
	}
	if p := paused[0]; p.num("split_watermark") <= p.num("max_allowed_watermark") {
		t.Errorf("paused a split at %d not ahead of the max allowed %d", p.num("split_watermark"), p.num("max_allowed_watermark"))
	}
	if len(resumed) == 0 || resumed[0].str("split") != "orders-0" || resumed[0].num("vt") <= paused[0].num("vt") {
		t.Fatalf("split_resumed events %v, want orders-0 resumed after the pause", resumed)
	}
	counted := int64(0)
	for _, r := range sinkResults(t, res) {
		counted += int64(r.Value)
	}
	if counted != int64(len(recs)) || res.Counters["numLateRecordsDropped"] != 0 {
		t.Fatalf("counted %d of %d records, %d dropped", counted, len(recs), res.Counters["numLateRecordsDropped"])
	}
	if len(eventsOf(evs, "watermark_alignment")) == 0 {
		t.Error("the coordinator's announcements are not in the log")
	}
}
