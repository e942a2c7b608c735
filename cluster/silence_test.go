package cluster

import (
	"io"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
)

// Each silent run of issue 29, run for real on the plain driver, gets the
// reason and the fix; a run with results gets none.
func TestSilence(t *testing.T) {
	recs, err := events.Parse([]byte("{\"key\":\"a\",\"ts\":1000,\"amount\":5}\n{\"key\":\"b\",\"ts\":2000,\"amount\":7}\n"), "e.jsonl", events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		sets   []string
		events bool
		want   []string // "" wants no warning
	}{
		{"--duration 5 is 5 ms", []string{"sim.duration=5"}, false,
			[]string{"no record was read: sim.duration is 5 ms", "did you mean 5s? --duration 5s"}},
		{"too few slots within the run's time", []string{"sim.duration=8s", "parallelism.default=4"}, false,
			[]string{"no record was read: the job needs 4 slots (its widest operator's parallelism) and the cluster has 2 (sim.taskmanagers 2 x taskmanager.numberOfTaskSlots 1), so its tasks waited for slots for the whole run (8 s; after slot.request.timeout 10 s",
				"--set sim.taskmanagers=4, or --set taskmanager.numberOfTaskSlots=2, or a parallelism of at most 2 (--set parallelism.default=2)"}},
		{"a filter on a field no generated record has", []string{"sim.duration=3s", "job.filter=userId == user-1"}, false,
			[]string{`job.filter "userId == user-1" passed none of the 3000 records read: no record has a field "userId"; a record's fields are key, order_id, amount (key is the record's key, job.key-field of the input). Fix: compare one of them, e.g. --set 'job.filter=key == user-1'`}},
		{"a filter on a field of the events file", []string{"job.filter=amount > 100"}, true,
			[]string{`job.filter "amount > 100" passed none of the 2 records read (a record's fields are key, ts, amount): no value of amount is > 100`}},
		{"latest offsets of a written topic", []string{"job.source.starting-offsets=latest"}, true,
			[]string{"job.source.starting-offsets is latest", "the 2 records of the topic were there before", "--set job.source.starting-offsets=earliest"}},
		{"no record generated", []string{"sim.duration=2s", "sim.source.rate=0"}, false,
			[]string{"sim.source.rate is 0"}},
		{"a run shorter than the first window", []string{"sim.duration=30s"}, false,
			[]string{"no window fired: an event-time window fires when the watermark", "the windows are 1 min long, and the run ended at 30 s", "Fix: --duration 3 min"}},
		{"processing-time windows", []string{"sim.duration=30s", "job.time-characteristic=processing-time"}, false,
			[]string{"processing-time windows fire on the processing-time clock at their end, the windows are 1 min long", "Fix: --duration 2 min"}},
		{"sliding windows", []string{"sim.duration=3s", "job.window.type=sliding", "job.window.slide=30s"}, false,
			[]string{"windows of 1 min start every 30 s, and the run ended at 3 s", "Fix: --duration 2 min"}},
		{"session windows", []string{"sim.duration=4s", "job.window.type=session", "job.window.gap=30s"}, false,
			[]string{"a session ends after a gap of 30 s", "Fix: --duration 2 min"}},
		{"results", []string{"sim.duration=3min"}, false, []string{""}},
		{"a bounded file with results", nil, true, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			for _, kv := range tt.sets {
				k, v, _ := strings.Cut(kv, "=")
				if err := cfg.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			opt := Options{Log: io.Discard}
			if tt.events {
				opt.Events, opt.EventsFile = recs, "e.jsonl"
			}
			res, err := RunPlain(cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			got := Silence(cfg, opt, res)
			for _, w := range tt.want {
				if (w == "" && got != "") || !strings.Contains(got, w) {
					t.Errorf("Silence =\n  %s\nwant it to hold %q (read %d, results %d)", got, w, res.Counters["records_read"], res.Counters["results_written"])
				}
			}
		})
	}
}
