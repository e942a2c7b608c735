package kafka

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// refBrokerRecords is the generator as the broker ran it before
// GeneratedTopic: drawing from the broker's own random generator
// (vt.NewRand(seed, jobgraph.KafkaName)) at every tick, from virtual time 0.
func refBrokerRecords(cfg *config.Config, ticks int) [][]*messages.KafkaRecord {
	rng := vt.NewRand(cfg.Seed, jobgraph.KafkaName)
	parts := make([][]*messages.KafkaRecord, cfg.SourcePartitions)
	var acc float64
	var seq int64
	disorder := cfg.SourceDisorder.Milliseconds()
	late := cfg.OutOfOrderness.Milliseconds() + cfg.WindowSize.Milliseconds() + cfg.AllowedLateness.Milliseconds()
	for k := 0; k < ticks; k++ {
		acc += cfg.SourceRate * generatorTick / 1e6
		n := int(acc)
		acc -= float64(n)
		nowMs := GeneratorEpochMillis + vt.Millis(vt.Time(k)*generatorTick)
		for i := 0; i < n; i++ {
			key := "user-" + strconv.Itoa(rng.IntN(max(1, cfg.SourceKeys)))
			ts := nowMs
			if disorder > 0 {
				ts -= rng.Int64N(disorder + 1)
			}
			if cfg.SourceLateFraction > 0 && rng.Float64() < cfg.SourceLateFraction {
				ts = nowMs - disorder - late
			}
			amount := float64(rng.IntN(50000)+100) / 100
			val := []byte(`{"order_id":"o-`)
			val = strconv.AppendInt(val, seq, 10)
			val = append(val, `","amount":`...)
			val = strconv.AppendFloat(val, amount, 'f', -1, 64)
			val = append(val, '}')
			seq++
			p := DefaultPartition([]byte(key), cfg.SourcePartitions)
			parts[p] = append(parts[p], &messages.KafkaRecord{Partition: int32(p), Offset: int64(len(parts[p])), Timestamp: ts, Key: key, Value: val})
		}
	}
	return parts
}

// The broker's generated source topic holds the records the broker's own
// seeded generator drew before (the same PCG stream as vt.NewRand), and a
// fetch returns them with fair shares per partition.
func TestBrokerGeneratorKeepsTheDraws(t *testing.T) {
	for _, seed := range []uint64{1, 7, 12345} {
		cfg := config.Default()
		cfg.Seed, cfg.SourcePartitions, cfg.SourceRate, cfg.SourceLateFraction = seed, 3, 2500, 0.02
		const ticks = 300
		want := refBrokerRecords(&cfg, ticks)
		k := NewBroker(&cfg, nil)
		o := kernel.NewOut(jobgraph.KafkaName, seed, nil)
		kernel.Deliver(k, o, 1, 0, []*messages.Envelope{{To: jobgraph.KafkaName, From: kernel.SchedulerName, Body: &messages.Envelope_Start{Start: &messages.Start{}}}})
		for i := 0; i < ticks; i++ {
			now := vt.Time(i) * generatorTick
			kernel.Deliver(k, o, uint64(2+i), now, []*messages.Envelope{{DeliverAt: now.Micros(), To: jobgraph.KafkaName, From: jobgraph.KafkaName,
				Body: &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerGenerate}}}})
		}
		req := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 1 << 30, RequestId: 1}
		for p := range cfg.SourcePartitions {
			req.Partitions = append(req.Partitions, &messages.FetchPartition{Partition: int32(p)})
		}
		now := vt.Time(ticks) * generatorTick
		d := kernel.Deliver(k, o, 1000, now, []*messages.Envelope{{DeliverAt: now.Micros(), To: jobgraph.KafkaName, From: "reader", Body: &messages.Envelope_Fetch{Fetch: req}}})
		var res *messages.FetchResponse
		for _, e := range d.Out {
			if f, ok := e.Body.(*messages.Envelope_FetchResponse); ok {
				res = f.FetchResponse
			}
		}
		if res == nil {
			t.Fatalf("seed %d: no fetch response", seed)
		}
		for p, pr := range res.Partitions {
			if len(pr.Records) != len(want[p]) || pr.HighWatermark != int64(len(want[p])) {
				t.Fatalf("seed %d partition %d: %d records, high watermark %d, want %d", seed, p, len(pr.Records), pr.HighWatermark, len(want[p]))
			}
			for i, r := range pr.Records {
				w := want[p][i]
				if r.Partition != w.Partition || r.Offset != w.Offset || r.Timestamp != w.Timestamp || r.Key != w.Key || !bytes.Equal(r.Value, w.Value) {
					t.Fatalf("seed %d partition %d record %d = %v, want %v", seed, p, i, r, w)
				}
			}
		}
	}
}

// A fetch that parks sets its fetch.max.wait.ms timer only when no data is
// due before the timer would fire.
func TestParkedFetchTimerOnlyWithoutDataDue(t *testing.T) {
	for _, tt := range []struct {
		rate      float64
		wantTimer bool
	}{
		{1000, false}, // the next tick brings records
		{4, false},    // the first record after about 25 ticks: within 500 ms
		{1, true},     // the first record after about 100 ticks: not within 500 ms
		{0, true},     // never
	} {
		cfg := config.Default()
		cfg.SourcePartitions, cfg.SourceRate = 1, tt.rate
		k := NewBroker(&cfg, nil)
		o := kernel.NewOut(jobgraph.KafkaName, 1, nil)
		kernel.Deliver(k, o, 1, 0, []*messages.Envelope{{To: jobgraph.KafkaName, From: kernel.SchedulerName, Body: &messages.Envelope_Start{Start: &messages.Start{}}}})
		kernel.Deliver(k, o, 2, 0, []*messages.Envelope{{To: jobgraph.KafkaName, From: jobgraph.KafkaName, Body: &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerGenerate}}}})
		req := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 500, RequestId: 1,
			Partitions: []*messages.FetchPartition{{Partition: 0, Offset: k.SourceTopic().EndOffset(0)}}}
		d := kernel.Deliver(k, o, 3, 1500, []*messages.Envelope{{DeliverAt: 1500, To: jobgraph.KafkaName, From: "reader", Body: &messages.Envelope_Fetch{Fetch: req}}})
		timer := false
		for _, e := range d.Out {
			if tm, ok := e.Body.(*messages.Envelope_Timer); ok && tm.Timer.Kind == timerFetchWait {
				timer = true
			}
			if _, ok := e.Body.(*messages.Envelope_FetchResponse); ok {
				t.Fatalf("rate %v: the fetch was answered at once", tt.rate)
			}
		}
		if timer != tt.wantTimer {
			t.Errorf("rate %v: fetch.max.wait timer set = %v, want %v", tt.rate, timer, tt.wantTimer)
		}
	}
}
