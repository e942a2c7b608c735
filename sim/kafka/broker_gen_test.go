package kafka

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
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
		req := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 1 << 30, RequestId: 1}
		for p := range cfg.SourcePartitions {
			req.Partitions = append(req.Partitions, &messages.FetchPartition{Partition: int32(p)})
		}
		// just before tick number ticks: ticks 0 ... ticks-1 are visible
		now := vt.Time(ticks)*generatorTick - 1
		d := kernel.Deliver(k, o, 2, now, []*messages.Envelope{{DeliverAt: now.Micros(), To: jobgraph.KafkaName, From: "reader", Body: &messages.Envelope_Fetch{Fetch: req}}})
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

// A fetch that parks is answered ahead, as of the tick that brings its data,
// when one does before fetch.max.wait.ms; otherwise it gets the timer.
func TestParkedFetchAnsweredAheadOrTimer(t *testing.T) {
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
		// the oracle: the first tick after tick 0 whose records reach
		// beyond tick 0's, from the reference generator
		atTick0 := len(refBrokerRecords(&cfg, 1)[0])
		wantTick := -1
		for n := 1; n < 50; n++ {
			if len(refBrokerRecords(&cfg, n+1)[0]) > atTick0 {
				wantTick = n
				break
			}
		}
		k := NewBroker(&cfg, nil)
		o := kernel.NewOut(jobgraph.KafkaName, 1, nil)
		kernel.Deliver(k, o, 1, 0, []*messages.Envelope{{To: jobgraph.KafkaName, From: kernel.SchedulerName, Body: &messages.Envelope_Start{Start: &messages.Start{}}}})
		req := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 500, RequestId: 1,
			Partitions: []*messages.FetchPartition{{Partition: 0, Offset: int64(atTick0)}}}
		d := kernel.Deliver(k, o, 2, 1500, []*messages.Envelope{{DeliverAt: 1500, SentAt: 1000, To: jobgraph.KafkaName, From: "reader", Body: &messages.Envelope_Fetch{Fetch: req}}})
		timer := false
		var res *messages.Envelope
		for _, e := range d.Out {
			if tm, ok := e.Body.(*messages.Envelope_Timer); ok && tm.Timer.Kind == timerFetchWait {
				timer = true
			}
			if _, ok := e.Body.(*messages.Envelope_FetchResponse); ok {
				res = e
			}
		}
		if timer != tt.wantTimer {
			t.Errorf("rate %v: fetch.max.wait timer set = %v, want %v", tt.rate, timer, tt.wantTimer)
		}
		switch {
		case tt.wantTimer && res != nil:
			t.Errorf("rate %v: answered although no record is due", tt.rate)
		case !tt.wantTimer && res == nil:
			t.Errorf("rate %v: not answered ahead", tt.rate)
		case !tt.wantTimer:
			sent := int64(wantTick) * generatorTick
			if res.SentAt != sent || res.DeliverAt != sent+vt.FromDuration(cfg.KafkaLatency()).Micros() {
				t.Errorf("rate %v: response sent at %d for %d, want the tick at %d", tt.rate, res.SentAt, res.DeliverAt, sent)
			}
			recs := res.Body.(*messages.Envelope_FetchResponse).FetchResponse.Partitions[0].Records
			if want := len(refBrokerRecords(&cfg, wantTick+1)[0]) - atTick0; len(recs) != want || recs[0].Offset != int64(atTick0) {
				t.Errorf("rate %v: %d records from offset %d, want %d from %d", tt.rate, len(recs), recs[0].Offset, want, atTick0)
			}
		}
	}
}

// A response answered ahead is withdrawn when a user edits the topic
// before its tick, and the fetch is answered again from the edited topic:
// pausing the partition takes its records away (no response until the
// producer resumes), resuming brings the generator's records from the next
// tick on, and a record sent by hand answers the fetch at once.
func TestAnsweredAheadWithdrawnByEdits(t *testing.T) {
	cfg := config.Default()
	cfg.SourcePartitions, cfg.SourceRate = 1, 1000 // 10 records a tick
	k := NewBroker(&cfg, nil)
	o := kernel.NewOut(jobgraph.KafkaName, 1, nil)
	step := uint64(0)
	deliver := func(at vt.Time, from string, body messages.Body) *kernel.Done {
		step++
		return kernel.Deliver(k, o, step, at, []*messages.Envelope{{DeliverAt: at.Micros(), SentAt: at.Micros() - 1, To: jobgraph.KafkaName, From: from, Body: body}})
	}
	act := func(at vt.Time, text string) *kernel.Done {
		return deliver(at, kernel.UserName, &messages.Envelope_Action{Action: parseAction(t, text)})
	}
	// responses the delivery sent: "sent T from OFFSET xN", and what it withdrew
	answers := func(d *kernel.Done) (out []string) {
		for _, e := range d.Out {
			if f, ok := e.Body.(*messages.Envelope_FetchResponse); ok {
				recs := f.FetchResponse.Partitions[0].Records
				out = append(out, fmt.Sprintf("sent %d from %d x%d", e.SentAt, recs[0].Offset, len(recs)))
			}
		}
		for _, seq := range d.Cancelled {
			out = append(out, fmt.Sprintf("withdrew %d", seq))
		}
		return out
	}
	check := func(what string, d *kernel.Done, want ...string) {
		t.Helper()
		if got := answers(d); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	deliver(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	// at 1.5 ms the tick at 0 is visible (10 records): a fetch from 10
	// waits for the tick at 10 ms, answered ahead
	fetch := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 500, RequestId: 1, Partitions: []*messages.FetchPartition{{Partition: 0, Offset: 10}}}
	d := deliver(1500, "reader", &messages.Envelope_Fetch{Fetch: fetch})
	check("fetch", d, "sent 10000 from 10 x10")
	ahead := d.Out[0].SenderSeq
	// the producer stalls at 5 ms: withdrawn, nothing comes while paused
	check("pause", act(5000, "at=5ms pause-partition 0"), fmt.Sprintf("withdrew %d", ahead))
	// resumed at 20 ms, after the tick at 20 ms (a user's envelope comes
	// after the broker's timer): the ticks at 10 and 20 ms were never
	// produced, the one at 30 ms brings offsets 10-19
	check("resume", act(20_000, "at=20ms resume-partition 0"), "sent 30000 from 10 x10")
	ahead = o.Sent()
	// a record by hand at 25 ms is offset 10: the fetch is answered at
	// once with it
	check("send-event", act(25_000, "at=25ms send-event key=k ts=1 partition=0"), "sent 25000 from 10 x1", fmt.Sprintf("withdrew %d", ahead))
	if pos := k.position[0]; pos != 11 {
		t.Errorf("consumer position %d, want 11", pos)
	}
}

// The timer's order, kept where answering ahead cannot: an envelope in the
// same step as Start comes before the first tick; with a Kafka latency of
// 0 the generator keeps its timer (its responses were due in a step after
// the tick's) and nothing is answered ahead; and at every tick that brings
// records a fetch still parked sets its partitions' positions back to its
// offsets, as the timer's look at it did (a reader gone, its fetch still
// parked, and a new reader of the partition).
func TestAheadKeepsTheTimersOrder(t *testing.T) {
	start := &messages.Envelope{To: jobgraph.KafkaName, From: kernel.SchedulerName, Body: &messages.Envelope_Start{Start: &messages.Start{}}}
	act := func(at vt.Time, text string) *messages.Envelope {
		return &messages.Envelope{DeliverAt: at.Micros(), SentAt: at.Micros(), To: jobgraph.KafkaName, From: kernel.UserName,
			Body: &messages.Envelope_Action{Action: parseAction(t, text)}}
	}
	sentOffset := func(d *kernel.Done) int64 {
		for _, ev := range d.Events {
			if string(ev.Kind()) == string(eventlog.KindEventSent) {
				for _, f := range eventlog.FieldsOf(&ev) {
					if f.Key == "offset" {
						return f.GetInt()
					}
				}
			}
		}
		return -1
	}
	cfg := config.Default()
	cfg.SourcePartitions, cfg.SourceRate = 1, 1000
	// with Start in step 1 the tick at 0 is not visible yet: offset 0
	k, o := NewBroker(&cfg, nil), kernel.NewOut(jobgraph.KafkaName, 1, nil)
	if off := sentOffset(kernel.Deliver(k, o, 1, 0, []*messages.Envelope{start, act(0, "at=0s send-event key=k ts=1")})); off != 0 {
		t.Errorf("send-event in Start's step: offset %d, want 0", off)
	}
	// in the step after, it is: offset 10
	k, o = NewBroker(&cfg, nil), kernel.NewOut(jobgraph.KafkaName, 1, nil)
	kernel.Deliver(k, o, 1, 0, []*messages.Envelope{start})
	if off := sentOffset(kernel.Deliver(k, o, 2, 0, []*messages.Envelope{act(0, "at=0s send-event key=k ts=1")})); off != 10 {
		t.Errorf("send-event after Start's step: offset %d, want 10", off)
	}

	// latency 0: the timer, and a parked fetch waits for it
	zero := cfg
	zero.NetworkLatency = 0
	k, o = NewBroker(&zero, nil), kernel.NewOut(jobgraph.KafkaName, 1, nil)
	d := kernel.Deliver(k, o, 1, 0, []*messages.Envelope{start})
	if len(d.Out) != 2 || d.Out[1].Body.(*messages.Envelope_Timer).Timer.Kind != timerGenerate {
		t.Fatalf("latency 0: Start sent %v, want the metrics and the generator's timers", d.Out)
	}
	kernel.Deliver(k, o, 2, 0, d.Out[1:2])
	fetch := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 500, RequestId: 1, Partitions: []*messages.FetchPartition{{Partition: 0, Offset: 10}}}
	if d := kernel.Deliver(k, o, 3, 1500, []*messages.Envelope{{DeliverAt: 1500, To: jobgraph.KafkaName, From: "reader", Body: &messages.Envelope_Fetch{Fetch: fetch}}}); len(d.Out) != 0 {
		t.Errorf("latency 0: the parked fetch sent %v, want nothing before the tick", d.Out)
	}

	// one key: every record goes to one partition, the other (q) gets
	// only what is sent by hand
	cfg.SourcePartitions, cfg.SourceKeys = 2, 1
	q := int32(1 - DefaultPartition([]byte("user-0"), 2))
	k, o = NewBroker(&cfg, nil), kernel.NewOut(jobgraph.KafkaName, 1, nil)
	kernel.Deliver(k, o, 1, 0, []*messages.Envelope{start})
	fetchP := func(from string, at vt.Time, part int32, off int64) *kernel.Done {
		f := &messages.Fetch{Topic: cfg.SourceTopic, MaxRecords: 500, RequestId: 1, Partitions: []*messages.FetchPartition{{Partition: part, Offset: off}}}
		return kernel.Deliver(k, o, uint64(at), at, []*messages.Envelope{{DeliverAt: at.Micros(), SentAt: at.Micros() - 1, To: jobgraph.KafkaName, From: from, Body: &messages.Envelope_Fetch{Fetch: f}}})
	}
	fetchP("old-reader", 1000, q, 5) // parks (with its timer): q gets no generated record
	kernel.Deliver(k, o, 2000, 2000, []*messages.Envelope{act(2000, "at=2ms send-event key=x ts=1 partition="+strconv.Itoa(int(q)))})
	if d := fetchP("new-reader", 3000, q, 0); len(d.Out) != 1 || k.position[q] != 1 {
		t.Fatalf("the new reader's fetch of partition %d: %d sent, position %d, want an answer and 1", q, len(d.Out), k.position[q])
	}
	// a fetch of the other partition at 15 ms reveals the tick at 10 ms,
	// which brought records: the old reader's fetch, still parked, was
	// looked at then and set q's position back to its offset
	fetchP("new-reader", 15_000, 1-q, 0)
	if k.position[q] != 5 {
		t.Errorf("position of partition %d after the tick at 10 ms: %d, want 5", q, k.position[q])
	}
}

// parseAction is the action text on the wire, as the header's actions go.
func parseAction(t *testing.T, text string) *messages.Action {
	t.Helper()
	a, err := action.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return a.Message(false)
}
