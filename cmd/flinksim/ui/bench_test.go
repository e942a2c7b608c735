package ui

import (
	"io"
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
