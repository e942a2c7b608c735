package tests

import (
	"bytes"
	"testing"

	"github.com/flinksim/flinksim/cluster"
)

// The built-in job with sink.delivery-guarantee=none writes every result
// outside any transaction: whatever the consumer's isolation level it sees
// each result written, once, and nothing is left uncommitted. The summary
// line and the broker's final counters say so.
func TestSinkViewWithoutTransactions(t *testing.T) {
	var first *cluster.Result
	for _, isolation := range []string{"read_uncommitted", "read_committed"} {
		cfg := settings(t, "sim.duration=70 s", "sink.delivery-guarantee=none", "sim.output.isolation-level="+isolation)
		res, log := run(t, cfg, cluster.Options{})
		written := res.Counters["results_written"]
		if written == 0 {
			t.Fatalf("%s: the built-in job wrote no result in 70 s", isolation)
		}
		if int64(len(res.Sink)) != written || res.Uncommitted != 0 || res.Duplicates != 0 {
			t.Errorf("%s: %d results visible, %d uncommitted, %d duplicates; want %d, 0, 0",
				isolation, len(res.Sink), res.Uncommitted, res.Duplicates, written)
		}
		evs := parseLog(t, log)
		sum := eventsOf(evs, "summary")
		if len(sum) != 1 || sum[0].num("results_written") != written || sum[0].num("results_visible") != written ||
			sum[0].num("results_uncommitted") != 0 || sum[0].num("duplicates") != 0 {
			t.Errorf("%s: summary line %v", isolation, sum)
		}
		brokers := 0
		for _, f := range eventsOf(evs, "final_counters") {
			if f.str("actor") != "kafka" {
				continue
			}
			brokers++
			if f.num("sink_plain") != written || f.num("sink_open")+f.num("sink_pre_committed")+f.num("sink_committed")+f.num("sink_aborted") != 0 ||
				f.num("produce_rejected") != 0 || f.num("txn_errors") != 0 || f.num("last_stable_offset") != written {
				t.Errorf("%s: broker final counters %v", isolation, f)
			}
		}
		if brokers != 1 {
			t.Errorf("%s: %d final_counters events of the broker, want 1", isolation, brokers)
		}
		if len(eventsOf(evs, "transaction"))+len(eventsOf(evs, "kafka_error")) != 0 {
			t.Errorf("%s: transaction or kafka_error events without transactions", isolation)
		}
		// the log differs only by the isolation setting; the view is the same
		if first == nil {
			first = res
			continue
		}
		if len(first.Sink) != len(res.Sink) {
			t.Fatalf("read_committed sees %d results, read_uncommitted %d", len(res.Sink), len(first.Sink))
		}
		for i := range res.Sink {
			if !bytes.Equal(first.Sink[i].Value, res.Sink[i].Value) {
				t.Fatalf("result %d differs between the isolation levels", i)
			}
		}
	}
}
