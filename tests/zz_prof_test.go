package tests

import (
	"io"
	"testing"

	"github.com/flinksim/flinksim/cluster"
)

func BenchmarkZZHour(b *testing.B) { benchJob(b, 3600, "sim.duration=1 h") }

func BenchmarkZZPlain10(b *testing.B) {
	cfg := settings(b, "sim.duration=10 min")
	for i := 0; i < b.N; i++ {
		if _, err := cluster.RunPlain(cfg, cluster.Options{Log: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}
