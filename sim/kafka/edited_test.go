package kafka

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

func genConfig() GeneratorConfig {
	return GeneratorConfig{Partitions: 3, Rate: 3000, Keys: 50, DisorderMs: 20, EpochMs: 1_700_000_000_000,
		TickUs: 10 * vt.Millisecond, Seed: 7, Stream: 11}
}

func readAll(l Log, p int) []*messages.KafkaRecord {
	n := l.EndOffset(p)
	recs := NewRecords(int(n))
	var vals []byte
	l.ReadInto(recs, p, 0, &vals)
	return recs
}

// TestEditedTopicMatchesAStoredOracle plays random edits over the
// generator's ticks, and the same story on a stored topic written the way a
// producer would: each tick's records appended except to a paused
// partition, records sent by hand appended when sent. Both topics read the
// same, record for record, offsets included.
func TestEditedTopicMatchesAStoredOracle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := genConfig()
		e := Edit(NewGeneratedTopic("t", c))
		ref := NewGeneratedTopic("t", c) // the same draws, read tick by tick
		oracle := NewTopic("t", c.Partitions)
		paused := make([]bool, c.Partitions)
		seen := make([]int64, c.Partitions) // generated offsets copied so far
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			now := vt.Time(i) * c.TickUs
			e.Generated().AdvanceTo(now)
			ref.AdvanceTo(now)
			for p := range c.Partitions {
				if n := ref.EndOffset(p) - seen[p]; n > 0 {
					recs := NewRecords(int(n))
					var vals []byte
					ref.ReadInto(recs, p, seen[p], &vals)
					seen[p] += n
					if !paused[p] {
						for _, r := range recs {
							oracle.AppendRecord(p, r.Timestamp, r.Key, r.Value)
						}
					}
				}
			}
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0:
				p := rapid.IntRange(0, c.Partitions-1).Draw(rt, "p")
				if e.Pause(p) == paused[p] {
					rt.Fatalf("Pause(%d) reported %v with paused %v", p, !paused[p], paused[p])
				}
				paused[p] = true
			case 1:
				p := rapid.IntRange(0, c.Partitions-1).Draw(rt, "p")
				if e.Resume(p) != paused[p] {
					rt.Fatalf("Resume(%d) with paused %v", p, paused[p])
				}
				paused[p] = false
			case 2:
				p := rapid.IntRange(0, c.Partitions-1).Draw(rt, "p")
				off := e.Append(p, &messages.KafkaRecord{Timestamp: int64(i), Key: "manual", Value: []byte(`{"n":1}`)})
				if want := oracle.AppendRecord(p, int64(i), "manual", []byte(`{"n":1}`)); off != want {
					rt.Fatalf("appended at %d, oracle at %d", off, want)
				}
			}
		}
		var total int64
		for p := range c.Partitions {
			if e.EndOffset(p) != oracle.EndOffset(p) {
				rt.Fatalf("partition %d ends at %d, oracle at %d", p, e.EndOffset(p), oracle.EndOffset(p))
			}
			got, want := readAll(e, p), readAll(oracle, p)
			for k := range got {
				g, w := got[k], want[k]
				if g.Offset != w.Offset || g.Timestamp != w.Timestamp || g.Key != w.Key || !bytes.Equal(g.Value, w.Value) {
					rt.Fatalf("partition %d offset %d: %v, oracle %v", p, k, g, w)
				}
			}
			total += e.EndOffset(p)
		}
		if e.Total() != total {
			rt.Fatalf("Total %d, partitions hold %d", e.Total(), total)
		}
	})
}
