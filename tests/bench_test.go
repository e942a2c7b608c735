package tests

import (
	"io"
	"testing"

	"github.com/flinksim/flinksim/cluster"
)

// benchJob runs the job of the settings kv b.N times and reports simulated
// records per wall second and virtual seconds per wall second.
func benchJob(b *testing.B, virtualSeconds float64, kv ...string) {
	cfg := settings(b, kv...)
	var records int64
	for i := 0; i < b.N; i++ {
		res, err := cluster.Run(cfg, cluster.Options{Log: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		records += res.Counters["records_read"]
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(records)/sec, "records/s")
	b.ReportMetric(virtualSeconds*float64(b.N)/sec, "virtual-s/s")
}

// BenchmarkBuiltinJob runs the built-in orders-per-minute job for 60 s of
// virtual time (60,000 records through source, keyBy exchange, window and
// sink, every delivery through the scheduler).
func BenchmarkBuiltinJob(b *testing.B) { benchJob(b, 60, "sim.duration=60 s") }

// BenchmarkHighRate is the built-in job at 20,000 records per virtual
// second: the per-record path dominates.
func BenchmarkHighRate(b *testing.B) { benchJob(b, 20, "sim.duration=20 s", "sim.source.rate=20000") }

// BenchmarkExactlyOnceCheckpoints is the built-in job for 60 s of virtual
// time with a checkpoint every 5 s and the exactly-once sink: barriers,
// snapshots, acknowledgements and Kafka transactions on top of the data path.
func BenchmarkExactlyOnceCheckpoints(b *testing.B) {
	benchJob(b, 60, "sim.duration=60 s", "execution.checkpointing.interval=5 s", "sink.delivery-guarantee=exactly-once")
}
