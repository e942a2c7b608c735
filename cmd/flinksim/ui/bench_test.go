package ui

import (
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
)

// The default job for 60 s of virtual time: as `flinksim run` runs it
// (cluster.Run writing its log), and as a UI session at max speed with one
// stream client reading every frame. README.md ("Speed") has the figures;
// the session must reach at least 80% of the run's virtual seconds per
// wall second.
const benchDuration = "sim.duration=60 s"

func BenchmarkRunDefaultJob(b *testing.B) {
	r := recipeOf(b, benchDuration)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		opt := r.Options
		opt.Log = io.Discard
		if _, err := cluster.Run(r.Settings, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(60*float64(b.N)/time.Since(start).Seconds(), "vsec/s")
}

func BenchmarkSessionStreamingMaxSpeed(b *testing.B) {
	r := recipeOf(b, benchDuration)
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		ts := newTestServer(b, r)
		stop := readStream(b, ts.http.URL+"/sim/stream")
		start := time.Now()
		ts.mustPost(b, "/sim/speed", "max")
		for !ts.loop.latest.Load().state.Ended {
			time.Sleep(time.Millisecond)
		}
		wall += time.Since(start)
		stop()
	}
	b.ReportMetric(60*float64(b.N)/wall.Seconds(), "vsec/s")
}

// BenchmarkSessionVsRun alternates the two, so that both meet the same
// load on a shared machine, and reports each one's best virtual seconds
// per wall second and the session's share of the run's (the figure the
// README gives; the issue asks for at least 0.8).
func BenchmarkSessionVsRun(b *testing.B) {
	r := recipeOf(b, benchDuration)
	bestRun, bestSession := time.Duration(1<<62), time.Duration(1<<62)
	cpuRun, cpuSession := time.Duration(1<<62), time.Duration(1<<62)
	for i := 0; i < b.N; i++ {
		start, cpu := time.Now(), cpuTime()
		opt := r.Options
		opt.Log = io.Discard
		if _, err := cluster.Run(r.Settings, opt); err != nil {
			b.Fatal(err)
		}
		bestRun, cpuRun = min(bestRun, time.Since(start)), min(cpuRun, cpuTime()-cpu)

		ts := newTestServer(b, r)
		stop := readStream(b, ts.http.URL+"/sim/stream")
		start, cpu = time.Now(), cpuTime()
		ts.mustPost(b, "/sim/speed", "max")
		for !ts.loop.latest.Load().state.Ended {
			time.Sleep(time.Millisecond)
		}
		bestSession, cpuSession = min(bestSession, time.Since(start)), min(cpuSession, cpuTime()-cpu)
		stop()
	}
	b.ReportMetric(60/bestRun.Seconds(), "run-vsec/s")
	b.ReportMetric(60/bestSession.Seconds(), "session-vsec/s")
	b.ReportMetric(bestRun.Seconds()/bestSession.Seconds(), "session/run-wall")
	b.ReportMetric(cpuRun.Seconds()/cpuSession.Seconds(), "session/run-cpu")
}

// cpuTime is the CPU time this process has used (user and system, every
// thread): on a shared machine a steadier measure of cost than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
