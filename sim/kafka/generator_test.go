package kafka

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// refGenerator is the oracle: the generator as it was before GeneratedTopic,
// appending every tick's records as pointers to a plain Topic-like list per
// partition, drawing from one rand.Rand.
type refGenerator struct {
	c     GeneratorConfig
	rng   *rand.Rand
	acc   float64
	seq   int64
	parts [][]*messages.KafkaRecord
}

func newRef(c GeneratorConfig) *refGenerator {
	return &refGenerator{c: c, rng: rand.New(rand.NewPCG(c.Seed, c.Stream)), parts: make([][]*messages.KafkaRecord, c.Partitions)}
}

func (g *refGenerator) tick(now vt.Time) {
	g.acc += g.c.Rate * float64(g.c.TickUs) / 1e6
	n := int(g.acc)
	g.acc -= float64(n)
	nowMs := g.c.EpochMs + vt.Millis(now)
	for i := 0; i < n; i++ {
		key := "user-" + strconv.Itoa(g.rng.IntN(max(1, g.c.Keys)))
		ts := nowMs
		if g.c.DisorderMs > 0 {
			ts -= g.rng.Int64N(g.c.DisorderMs + 1)
		}
		if g.c.LateFraction > 0 && g.rng.Float64() < g.c.LateFraction {
			ts = nowMs - g.c.DisorderMs - g.c.LateMs
		}
		amount := float64(g.rng.IntN(50000)+100) / 100
		val := []byte(`{"order_id":"o-`)
		val = strconv.AppendInt(val, g.seq, 10)
		val = append(val, `","amount":`...)
		val = strconv.AppendFloat(val, amount, 'f', -1, 64)
		val = append(val, '}')
		g.seq++
		p := DefaultPartition([]byte(key), g.c.Partitions)
		g.parts[p] = append(g.parts[p], &messages.KafkaRecord{Partition: int32(p), Offset: int64(len(g.parts[p])), Timestamp: ts, Key: key, Value: val})
	}
}

func sameRecord(a, b *messages.KafkaRecord) bool {
	return a.Partition == b.Partition && a.Offset == b.Offset && a.Timestamp == b.Timestamp && a.Key == b.Key && bytes.Equal(a.Value, b.Value)
}

var genConfigs = []GeneratorConfig{
	{Partitions: 1, Rate: 1000, Keys: 100, DisorderMs: 2000, LateMs: 62000, EpochMs: 1_700_000_000_000, TickUs: 10_000, Seed: 1, Stream: 7},
	{Partitions: 3, Rate: 333.3, Keys: 7, LateFraction: 0.05, DisorderMs: 500, LateMs: 1000, TickUs: 10_000, Seed: 42, Stream: 9},
	{Partitions: 5, Rate: 20000, Keys: 1000000, TickUs: 10_000, FirstTickUs: 1234, Seed: 3, Stream: 3},
	{Partitions: 2, Rate: 0.7, Keys: 0, TickUs: 10_000, Seed: 5, Stream: 1},
	{Partitions: 4, Rate: 0, Keys: 10, TickUs: 10_000, Seed: 5, Stream: 1},
}

// The generated topic holds exactly the records of the plain generator, at
// every tick, read at the head, read again from the start after the cache
// evicted them (recomputed from the seed), and read in odd-sized pieces.
func TestGeneratedTopicMatchesPlainGenerator(t *testing.T) {
	for ci, c := range genConfigs {
		t.Run(strconv.Itoa(ci), func(t *testing.T) {
			ref := newRef(c)
			g := NewGeneratedTopic("orders", c)
			g.blockRecords, g.cacheRecords = 50, 120 // many blocks, a small cache
			read := make([]int64, c.Partitions)      // a consumer at the head
			for k := 0; k < 600; k++ {
				now := c.FirstTickUs + vt.Time(k)*c.TickUs
				ref.tick(now)
				before := g.Total()
				if k%7 == 3 {
					// look ahead first, as a parked fetch does
					g.FirstData(k%c.Partitions, g.EndOffset(k%c.Partitions), now+500_000)
				}
				n := g.AdvanceTo(now)
				if g.Total()-before != n {
					t.Fatalf("tick %d: AdvanceTo returned %d, total grew by %d", k, n, g.Total()-before)
				}
				for p := range c.Partitions {
					if g.EndOffset(p) != int64(len(ref.parts[p])) {
						t.Fatalf("tick %d: EndOffset(%d) = %d, want %d", k, p, g.EndOffset(p), len(ref.parts[p]))
					}
					got := Read(g, p, read[p], 1+k%5)
					for i, r := range got {
						if want := ref.parts[p][read[p]+int64(i)]; !sameRecord(r, want) {
							t.Fatalf("tick %d: head read %v, want %v", k, r, want)
						}
					}
					read[p] += int64(len(got))
				}
			}
			for _, piece := range []int{1, 13, 1 << 20} {
				for p := range c.Partitions {
					var all []*messages.KafkaRecord
					for off := int64(0); ; {
						got := Read(g, p, off, piece)
						if len(got) == 0 {
							break
						}
						all = append(all, got...)
						off += int64(len(got))
					}
					if len(all) != len(ref.parts[p]) {
						t.Fatalf("piece %d partition %d: read %d records, want %d", piece, p, len(all), len(ref.parts[p]))
					}
					for i := range all {
						if !sameRecord(all[i], ref.parts[p][i]) {
							t.Fatalf("piece %d: record %d = %v, want %v", piece, i, all[i], ref.parts[p][i])
						}
					}
				}
			}
			if c.Rate > 1 && g.Regenerated() == 0 {
				t.Errorf("no block was recomputed")
			}
			if g.cached > g.cacheRecords+g.blockRecords*2 && len(g.cache) > 1 {
				t.Errorf("cache holds %d records, budget %d", g.cached, g.cacheRecords)
			}
		})
	}
}

// FirstData names exactly the first tick strictly before the deadline that
// brings partition p past the offset.
func TestGeneratedTopicFirstData(t *testing.T) {
	c := GeneratorConfig{Partitions: 8, Rate: 150, Keys: 1000, TickUs: 10_000, Seed: 11, Stream: 2}
	for k := 0; k < 200; k++ {
		now := vt.Time(k) * c.TickUs
		for _, wait := range []vt.Time{1, 10_000, 10_001, 50_000, 500_000} {
			for p := range c.Partitions {
				g := NewGeneratedTopic("t", c)
				g.AdvanceTo(now)
				off := g.EndOffset(p) + int64(k%3)
				gotAt, got := g.FirstData(p, off, now+wait)
				// the oracle: advance a fresh copy tick by tick
				o := NewGeneratedTopic("t", c)
				o.AdvanceTo(now)
				want, wantAt := false, vt.Time(0)
				for at := now + c.TickUs - now%c.TickUs; at < now+wait; at += c.TickUs {
					o.AdvanceTo(at)
					if o.EndOffset(p) > off {
						want, wantAt = true, at
						break
					}
				}
				if got != want || gotAt != wantAt {
					t.Fatalf("tick %d wait %d partition %d offset %d: FirstData = %d, %v, want %d, %v", k, wait, p, off, gotAt, got, wantAt, want)
				}
				// looking ahead changes nothing that is visible
				g.AdvanceTo(now + wait)
				o.AdvanceTo(now + wait)
				for q := range c.Partitions {
					if g.EndOffset(q) != o.EndOffset(q) {
						t.Fatalf("after FirstData: EndOffset(%d) = %d, want %d", q, g.EndOffset(q), o.EndOffset(q))
					}
				}
			}
		}
	}
}

// Memory stays flat: after the cache is full, more virtual time costs only
// the blocks' headers.
func TestGeneratedTopicMemoryIsFlat(t *testing.T) {
	c := GeneratorConfig{Partitions: 2, Rate: 1000, Keys: 100, TickUs: 10_000, Seed: 1, Stream: 1}
	g := NewGeneratedTopic("t", c)
	end := vt.Time(3600 * 1_000_000) // one virtual hour
	for now := vt.Time(0); now <= end; now += c.TickUs {
		g.AdvanceTo(now)
		// a consumer at the head
		for p := range c.Partitions {
			Read(g, p, max(0, g.EndOffset(p)-5), 5)
		}
	}
	if g.Total() < 3_599_000 {
		t.Fatalf("total %d", g.Total())
	}
	if g.cached > genCacheRecords+genBlockRecords {
		t.Errorf("cache holds %d records, budget %d", g.cached, genCacheRecords)
	}
	if n := len(g.blocks); n > 3_600_000/genBlockRecords+2 {
		t.Errorf("%d blocks", n)
	}
}

func ExampleGeneratedTopic() {
	g := NewGeneratedTopic("orders", GeneratorConfig{Partitions: 1, Rate: 200, Keys: 3, TickUs: 10_000, Seed: 1, Stream: 1})
	g.AdvanceTo(10_000) // the ticks at 0 and 10 ms
	for _, r := range Read(g, 0, 0, 10) {
		fmt.Println(r.Offset, r.Timestamp, r.Key, string(r.Value))
	}
	// Output:
	// 0 0 user-2 {"order_id":"o-0","amount":52.24}
	// 1 0 user-2 {"order_id":"o-1","amount":457.49}
	// 2 10 user-0 {"order_id":"o-2","amount":468.02}
	// 3 10 user-2 {"order_id":"o-3","amount":53.92}
}

// appendCents formats every amount the generator can draw (100 to 50099
// cents) exactly as the float formatting it replaces, and a few beyond.
func TestAppendCentsIsAppendFloat(t *testing.T) {
	for c := int32(0); c < 200_000; c++ {
		want := strconv.AppendFloat(nil, float64(c)/100, 'f', -1, 64)
		if got := appendCents(nil, c); !bytes.Equal(got, want) {
			t.Fatalf("appendCents(%d) = %s, want %s", c, got, want)
		}
	}
}
