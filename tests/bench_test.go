package tests

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flinksim/flinksim/cluster"
)

// benchJob runs the job of the settings kv b.N times and reports simulated
// records per wall second, virtual seconds per wall second, and records per
// second of CPU time of the whole process (user + system, all threads: on a
// shared machine it moves less with the load than wall time does). It runs
// as `flinksim run` does: the scheduler picks the Ps and the GC percent
// (cluster.Options AdaptProcs: one P for the narrow steps of a small job,
// every P for wide ones; AdaptGC: 200 while the live heap is small), so the
// -2 of a benchmark's name is the Ps the process may use.
func benchJob(b *testing.B, virtualSeconds float64, kv ...string) {
	cfg := settings(b, kv...)
	var records int64
	var steps uint64
	cpu0 := cpuSeconds(b)
	for i := 0; i < b.N; i++ {
		res, err := cluster.Run(cfg, cluster.Options{Log: io.Discard, AdaptProcs: true, AdaptGC: true})
		if err != nil {
			b.Fatal(err)
		}
		records += res.Counters["records_read"]
		steps += res.Steps
	}
	cpu := cpuSeconds(b) - cpu0
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec*1e9/float64(steps), "ns/step")
	b.ReportMetric(float64(records)/sec, "records/s")
	b.ReportMetric(virtualSeconds*float64(b.N)/sec, "virtual-s/s")
	b.ReportMetric(float64(records)/cpu, "records/cpu-s")
}

// cpuSeconds is the CPU time the process has used so far (getrusage).
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkBuiltinJob runs the built-in orders-per-minute job for 60 s of
// virtual time (60,000 records through source, keyBy exchange, window and
// sink, every delivery through the scheduler).
func BenchmarkBuiltinJob(b *testing.B) { benchJob(b, 60, "sim.duration=60 s") }

// BenchmarkBuiltinJobHour is the built-in job for one virtual hour
// (3,600,000 records; about 1.33 million scheduler steps): the speed of a
// long run of the default job, the figure issue 30's target is set in.
func BenchmarkBuiltinJobHour(b *testing.B) { benchJob(b, 3600, "sim.duration=1 h") }

// BenchmarkBuiltinJobPlain is BenchmarkBuiltinJob on the plain driver
// (kernel.Loop: every component called in one goroutine, no Hollywood): the
// simulation's own cost of a step, the rest of BenchmarkBuiltinJob's being
// the actors' round trips.
func BenchmarkBuiltinJobPlain(b *testing.B) {
	cfg := settings(b, "sim.duration=60 s")
	var steps uint64
	for i := 0; i < b.N; i++ {
		res, err := cluster.RunPlain(cfg, cluster.Options{Log: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if res.Counters["records_read"] != 60000 {
			b.Fatalf("records_read %d, want 60000", res.Counters["records_read"])
		}
		steps += res.Steps
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(steps), "ns/step")
	b.ReportMetric(60000*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkHighRate is the built-in job at 20,000 records per virtual
// second: the per-record path dominates.
func BenchmarkHighRate(b *testing.B) { benchJob(b, 20, "sim.duration=20 s", "sim.source.rate=20000") }

// BenchmarkExactlyOnceCheckpoints is the built-in job for 60 s of virtual
// time with a checkpoint every 5 s and the exactly-once sink: barriers,
// snapshots, acknowledgements and Kafka transactions on top of the data path.
func BenchmarkExactlyOnceCheckpoints(b *testing.B) {
	benchJob(b, 60, "sim.duration=60 s", "execution.checkpointing.interval=5 s", "sink.delivery-guarantee=exactly-once")
}

// BenchmarkManyKeys is the built-in job at 20,000 records per virtual
// second over 1,000,000 keys for 20 s of virtual time: almost every record
// opens a new (key, window) state, and the per-second windows gauge must
// not scan them.
func BenchmarkManyKeys(b *testing.B) {
	benchJob(b, 20, "sim.duration=20 s", "sim.source.rate=20000", "sim.source.keys=1000000")
}

// BenchmarkManyKeysMinute is 1,000,000 keys at 20,000 records per virtual
// second for 60 s (1.2 million records; one watermark fires ~560,000
// windows in one step) and reports the process's peak RSS (VmHWM): run it
// alone (-bench ManyKeysMinute -benchtime 1x) for the figure to be this
// run's.
func BenchmarkManyKeysMinute(b *testing.B) {
	benchJob(b, 60, "sim.duration=60 s", "sim.source.rate=20000", "sim.source.keys=1000000")
	b.ReportMetric(peakRSSMiB(b), "peak-RSS-MiB")
}

// peakRSSMiB is the process's peak resident set size so far (VmHWM of
// /proc/self/status), in MiB.
func peakRSSMiB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", f[1], err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkHeapPerVirtualMinute runs the built-in job for 16 minutes of
// virtual time and reports the live heap (after a forced collection) at the
// last progress report (every 65,536 scheduler steps, about every 2.3
// virtual minutes), and how much it grew per virtual minute since the first
// report after 6 virtual minutes (when the generator's cache of recent
// records is full): memory over virtual time, not speed.
func BenchmarkHeapPerVirtualMinute(b *testing.B) {
	cfg := settings(b, "sim.duration=16 min")
	var growth, live float64
	for i := 0; i < b.N; i++ {
		var firstVT, lastVT int64
		var firstHeap, lastHeap uint64
		progress := func(vtUs int64) {
			if vtUs < 6*60_000_000 {
				return
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if firstVT == 0 {
				firstVT, firstHeap = vtUs, ms.HeapAlloc
			}
			lastVT, lastHeap = vtUs, ms.HeapAlloc
		}
		if _, err := cluster.Run(cfg, cluster.Options{Log: io.Discard, Progress: progress}); err != nil {
			b.Fatal(err)
		}
		if lastVT <= firstVT {
			b.Fatalf("progress reported at %d and %d µs only", firstVT, lastVT)
		}
		growth += (float64(lastHeap) - float64(firstHeap)) / (float64(lastVT-firstVT) / 60e6)
		live += float64(lastHeap)
	}
	b.ReportMetric(growth/float64(b.N), "heap-B/virtual-min")
	b.ReportMetric(live/float64(b.N)/(1<<20), "live-heap-MB")
}

// BenchmarkParallelism64 runs the built-in job at parallelism 64 on 64
// TaskManagers of one slot (64 partitions; 4,096 input channels on the keyBy
// edge) for 60 s of virtual time.
func BenchmarkParallelism64(b *testing.B) {
	benchJob(b, 60, "sim.duration=60 s", "parallelism.default=64", "sim.taskmanagers=64", "job.source.partitions=64")
}
