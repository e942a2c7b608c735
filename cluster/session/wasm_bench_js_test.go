//go:build js

package session

import (
	"testing"
	"time"
)

// BenchmarkWasmSessionMax is the hot path of the page of `flinksim site`:
// the default job as the page opens it (session.DefaultRecipe, the
// components as Hollywood actors), at max speed for 10 s of wall time with
// one reader taking every frame (as the page's worker posts them), built
// for GOOS=js GOARCH=wasm and run by Node's V8 (the engine of Chromium):
//
//	PATH=$PATH:$(go env GOROOT)/lib/wasm GOOS=js GOARCH=wasm go test ./cluster/session -run XXX -bench WasmSessionMax -benchtime 1x
//
// gc=adapt: the scheduler may raise the GC percent while the heap is small
// (cluster.Options.AdaptGC), as the page's module does (157 virtual s per
// wall s without it, 184 with it, one run each at load average 4).
func BenchmarkWasmSessionMax(b *testing.B) {
	for _, bc := range []struct {
		name  string
		adapt bool
	}{{"gc=adapt", true}} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				r, err := DefaultRecipe()
				if err != nil {
					b.Fatal(err)
				}
				r.Options.AdaptGC = bc.adapt
				c, err := NewCore(Config{Recipe: r})
				if err != nil {
					b.Fatal(err)
				}
				fr, err := c.Subscribe("")
				if err != nil {
					b.Fatal(err)
				}
				frames, bytes := 0, 0
				go func() {
					var buf []byte
					for range fr.Ready {
						buf, _ = fr.Next(buf[:0])
						frames++
						bytes += len(buf)
					}
				}()
				if a := c.Call(OpSpeed, "max"); a.Err != nil {
					b.Fatal(a.Err)
				}
				start := time.Now()
				time.Sleep(10 * time.Second)
				st := c.loop.latest.Load().state
				wall := time.Since(start)
				c.Close()
				if st.Ended || st.Job.Status != "RUNNING" {
					b.Fatalf("the job is %s (ended %t) at %v", st.Job.Status, st.Ended, st.VT)
				}
				b.ReportMetric(st.VT.Duration().Seconds()/wall.Seconds(), "virtual-s/wall-s")
				b.ReportMetric(float64(frames)/wall.Seconds(), "frames/s")
				b.ReportMetric(float64(bytes)/float64(max(frames, 1)), "bytes/frame")
			}
		})
	}
}
