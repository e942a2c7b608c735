package vt

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
	"pgregory.net/rapid"
)

func env(at int64, to, from string, seq uint64) *messages.Envelope {
	return &messages.Envelope{DeliverAt: at, To: to, From: from, SenderSeq: seq}
}

func show(e *messages.Envelope) string {
	return fmt.Sprintf("(%d,%q,%q,%d)", e.DeliverAt, e.To, e.From, e.SenderSeq)
}

// naiveCompare is an independent oracle for Less: lexicographic comparison of
// the tuple (deliver_at, to, from, sender_seq), strings by bytes.
func naiveCompare(a, b *messages.Envelope) int {
	if c := cmp.Compare(a.DeliverAt, b.DeliverAt); c != 0 {
		return c
	}
	if c := cmp.Compare(a.To, b.To); c != 0 {
		return c
	}
	if c := cmp.Compare(a.From, b.From); c != 0 {
		return c
	}
	return cmp.Compare(a.SenderSeq, b.SenderSeq)
}

func TestLess(t *testing.T) {
	tests := []struct {
		name string
		a, b *messages.Envelope
		want bool
	}{
		{"earlier time first", env(1, "z", "z", 9), env(2, "a", "a", 0), true},
		{"later time after", env(2, "a", "a", 0), env(1, "z", "z", 9), false},
		{"negative time first", env(-5, "b", "b", 0), env(0, "a", "a", 0), true},
		{"same time: receiver decides", env(1, "tm-1", "z", 9), env(1, "tm-2", "a", 0), true},
		{"receiver by bytes, not length", env(1, "window-10", "a", 0), env(1, "window-2", "a", 0), true},
		{"upper case before lower case", env(1, "Z", "a", 0), env(1, "a", "a", 0), true},
		{"empty receiver first", env(1, "", "a", 0), env(1, "a", "a", 0), true},
		{"same receiver: sender decides", env(1, "a", "jm", 9), env(1, "a", "tm-1", 0), true},
		{"same sender: sequence decides", env(1, "a", "b", 3), env(1, "a", "b", 4), true},
		{"max sequence last", env(1, "a", "b", 1<<63), env(1, "a", "b", 1<<63-1), false},
		{"equal tuples: not less", env(1, "a", "b", 3), env(1, "a", "b", 3), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less(%s, %s) = %v, want %v", show(tt.a), show(tt.b), got, tt.want)
			}
		})
	}
}

func TestLessIgnoresBody(t *testing.T) {
	a := env(1, "a", "b", 3)
	b := env(1, "a", "b", 3)
	b.Body = &messages.Envelope_EndOfRun{EndOfRun: &messages.EndOfRun{}}
	if Less(a, b) || Less(b, a) {
		t.Errorf("envelopes with the same (deliver_at, to, from, sender_seq) must be unordered whatever their body")
	}
}

// genEnvelope draws from small domains so that ties on every prefix of the
// tuple are frequent.
func genEnvelope(t *rapid.T, label string) *messages.Envelope {
	return env(
		rapid.Int64Range(-2, 3).Draw(t, label+".deliverAt"),
		rapid.SampledFrom([]string{"", "a", "b", "tm-1", "tm-10", "tm-2"}).Draw(t, label+".to"),
		rapid.SampledFrom([]string{"", "jm", "scheduler", "window-0"}).Draw(t, label+".from"),
		rapid.Uint64Range(0, 3).Draw(t, label+".seq"),
	)
}

// TestLessStrictTotalOrder checks that Less agrees with the lexicographic
// oracle, hence is irreflexive, asymmetric, transitive and total on distinct
// tuples.
func TestLessStrictTotalOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := genEnvelope(t, "a"), genEnvelope(t, "b"), genEnvelope(t, "c")
		for _, p := range [][2]*messages.Envelope{{a, b}, {b, a}, {a, c}, {b, c}, {a, a}} {
			if got, want := Less(p[0], p[1]), naiveCompare(p[0], p[1]) < 0; got != want {
				t.Fatalf("Less(%s, %s) = %v, want %v", show(p[0]), show(p[1]), got, want)
			}
		}
		if Less(a, a) {
			t.Fatalf("Less not irreflexive at %s", show(a))
		}
		if Less(a, b) && Less(b, a) {
			t.Fatalf("Less not asymmetric at %s, %s", show(a), show(b))
		}
		if naiveCompare(a, b) != 0 && !Less(a, b) && !Less(b, a) {
			t.Fatalf("Less not total at %s, %s", show(a), show(b))
		}
		if Less(a, b) && Less(b, c) && !Less(a, c) {
			t.Fatalf("Less not transitive at %s < %s < %s", show(a), show(b), show(c))
		}
	})
}

func TestQueueEmpty(t *testing.T) {
	var q Queue
	if q.Len() != 0 {
		t.Errorf("Len() = %d, want 0", q.Len())
	}
	if at, ok := q.PeekTime(); ok || at != 0 {
		t.Errorf("PeekTime() = %d, %v, want 0, false", at, ok)
	}
	prefix := []*messages.Envelope{env(7, "x", "y", 1)}
	if got := q.PopStep(prefix); len(got) != 1 || got[0] != prefix[0] {
		t.Errorf("PopStep on an empty queue changed dst: %v", got)
	}
}

func TestQueuePopStepHandChecked(t *testing.T) {
	var q Queue
	in := []*messages.Envelope{
		env(20, "a", "s", 0),
		env(10, "tm-2", "jm", 1),
		env(10, "tm-1", "jm", 2),
		env(10, "tm-1", "jm", 1),
		env(10, "tm-1", "", 5),
		env(30, "a", "s", 1),
	}
	for _, e := range in {
		q.Push(e)
	}
	if q.Len() != len(in) {
		t.Fatalf("Len() = %d, want %d", q.Len(), len(in))
	}
	wantSteps := [][]*messages.Envelope{
		{in[4], in[3], in[2], in[1]},
		{in[0]},
		{in[5]},
	}
	wantTimes := []Time{10, 20, 30}
	for i, want := range wantSteps {
		at, ok := q.PeekTime()
		if !ok || at != wantTimes[i] {
			t.Fatalf("step %d: PeekTime() = %d, %v, want %d, true", i, at, ok, wantTimes[i])
		}
		got := q.PopStep(nil)
		if len(got) != len(want) {
			t.Fatalf("step %d: got %d envelopes, want %d", i, len(got), len(want))
		}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("step %d [%d] = %s, want %s", i, j, show(got[j]), show(want[j]))
			}
		}
	}
	if q.Len() != 0 {
		t.Errorf("Len() = %d after draining, want 0", q.Len())
	}
}

// TestQueueProperty pushes random envelopes in random order (interleaved with
// steps) and checks that every step holds one deliver_at, in Less order,
// steps come in strictly increasing time, and every envelope comes out
// exactly once.
func TestQueueProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q Queue
		pushed := map[*messages.Envelope]bool{}
		var out []*messages.Envelope
		lastStep := int64(-1 << 63)
		haveStep := false
		check := func(step []*messages.Envelope) {
			if len(step) == 0 {
				t.Fatalf("PopStep on a non-empty queue returned nothing")
			}
			at := step[0].DeliverAt
			if haveStep && at <= lastStep {
				t.Fatalf("step at %d after a step at %d: times must increase strictly", at, lastStep)
			}
			for i, e := range step {
				if e.DeliverAt != at {
					t.Fatalf("step at %d holds %s", at, show(e))
				}
				if i > 0 && !Less(step[i-1], e) {
					t.Fatalf("step out of order: %s before %s", show(step[i-1]), show(e))
				}
			}
			lastStep, haveStep = at, true
			out = append(out, step...)
		}
		n := rapid.IntRange(0, 60).Draw(t, "n")
		seq := map[string]uint64{}
		for i := range n {
			e := genEnvelope(t, fmt.Sprint("e", i))
			// Keep tuples distinct as the scheduler does (per-sender counters).
			e.SenderSeq = seq[e.From]
			seq[e.From]++
			if haveStep && e.DeliverAt <= lastStep {
				e.DeliverAt = lastStep + 1 + e.DeliverAt&1 // the scheduler never schedules in the past
			}
			q.Push(e)
			pushed[e] = true
			if rapid.IntRange(0, 4).Draw(t, fmt.Sprint("pop", i)) == 0 && q.Len() > 0 {
				check(q.PopStep(nil))
			}
		}
		for q.Len() > 0 {
			before := q.Len()
			at, _ := q.PeekTime()
			step := q.PopStep(nil)
			if len(step) == 0 || Time(step[0].DeliverAt) != at {
				t.Fatalf("PeekTime() = %d but the step starts with %v", at, step)
			}
			if q.Len() != before-len(step) {
				t.Fatalf("Len() = %d after popping %d of %d", q.Len(), len(step), before)
			}
			check(step)
		}
		if len(out) != len(pushed) {
			t.Fatalf("popped %d envelopes, pushed %d", len(out), len(pushed))
		}
		for _, e := range out {
			if !pushed[e] {
				t.Fatalf("%s popped twice or never pushed", show(e))
			}
			delete(pushed, e)
		}
		for i := 1; i < len(out); i++ {
			if !Less(out[i-1], out[i]) {
				t.Fatalf("concatenated steps not sorted: %s before %s", show(out[i-1]), show(out[i]))
			}
		}
	})
}

// TestQueueDrainSorted pushes a random multiset (duplicates of the same tuple
// allowed) without interleaved pops and checks the concatenation of the steps
// is sorted by the oracle and loses nothing.
func TestQueueDrainSorted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q Queue
		n := rapid.IntRange(0, 80).Draw(t, "n")
		count := map[*messages.Envelope]int{}
		for i := range n {
			e := genEnvelope(t, fmt.Sprint("e", i))
			q.Push(e)
			count[e]++
		}
		var out []*messages.Envelope
		for q.Len() > 0 {
			out = q.PopStep(out)
		}
		if len(out) != n {
			t.Fatalf("popped %d, pushed %d", len(out), n)
		}
		for _, e := range out {
			if count[e] != 1 {
				t.Fatalf("%s popped more than once", show(e))
			}
			count[e]--
		}
		for i := 1; i < len(out); i++ {
			if naiveCompare(out[i-1], out[i]) > 0 {
				t.Fatalf("not sorted: %s before %s", show(out[i-1]), show(out[i]))
			}
		}
	})
}

func TestTimeConversions(t *testing.T) {
	durations := []struct {
		give time.Duration
		want Time
	}{
		{0, 0},
		{time.Microsecond, 1},
		{999 * time.Nanosecond, 0},
		{1500 * time.Nanosecond, 1},
		{time.Millisecond, 1000},
		{time.Minute, 60_000_000},
		{-time.Millisecond, -1000},
	}
	for _, tt := range durations {
		if got := FromDuration(tt.give); got != tt.want {
			t.Errorf("FromDuration(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
	millis := []struct {
		give int64
		want Time
	}{{0, 0}, {1, 1000}, {60_000, 60_000_000}, {-1, -1000}}
	for _, tt := range millis {
		if got := FromMillis(tt.give); got != tt.want {
			t.Errorf("FromMillis(%d) = %d, want %d", tt.give, got, tt.want)
		}
		if got := Millis(tt.want); got != tt.give {
			t.Errorf("Millis(%d) = %d, want %d", tt.want, got, tt.give)
		}
	}
	floors := []struct {
		give Time
		want int64
	}{{999, 0}, {1000, 1}, {1999, 1}, {60_000_999, 60_000}}
	for _, tt := range floors {
		if got := Millis(tt.give); got != tt.want {
			t.Errorf("Millis(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

func draws(seed uint64, name string, n int) []uint64 {
	r := NewRand(seed, name)
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNewRandDeterministic(t *testing.T) {
	for _, name := range []string{"", "tm-1", "window-0", "source-1#2"} {
		for _, seed := range []uint64{0, 1, 42, 1<<64 - 1} {
			if a, b := draws(seed, name, 32), draws(seed, name, 32); !equal(a, b) {
				t.Errorf("NewRand(%d, %q) gave two different sequences", seed, name)
			}
		}
	}
}

func TestNewRandIndependentStreams(t *testing.T) {
	names := []string{"", "tm-1", "tm-2", "tm-10", "window-0", "window-1", "source-0", "jm", "scheduler", "a", "b"}
	for _, seed := range []uint64{0, 1, 42} {
		seen := map[string]string{}
		for _, name := range names {
			key := fmt.Sprint(draws(seed, name, 4))
			if other, dup := seen[key]; dup {
				t.Errorf("seed %d: %q and %q draw the same sequence", seed, other, name)
			}
			seen[key] = name
		}
	}
	for _, name := range names {
		if equal(draws(1, name, 4), draws(2, name, 4)) {
			t.Errorf("%q draws the same sequence under seeds 1 and 2", name)
		}
	}
	// Interleaving draws of another generator does not change a generator's
	// sequence: each stream depends only on (seed, name).
	a, b := NewRand(7, "tm-1"), NewRand(7, "tm-2")
	var got []uint64
	for range 8 {
		got = append(got, a.Uint64())
		b.Uint64()
		b.Uint64()
	}
	if want := draws(7, "tm-1", 8); !equal(got, want) {
		t.Errorf("interleaved draws changed tm-1's sequence: %v, want %v", got, want)
	}
}

// TestSortStepAgreesWithOracle sorts wide steps (up to a few thousand
// envelopes, many to the same receiver, as a keyBy edge's step is; receiver
// names shorter and longer than the 16 bytes sortStep keys on, sharing long
// prefixes) with sortStep and with insertionStep, and checks both against
// the naive lexicographic oracle.
func TestSortStepAgreesWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3000).Draw(t, "n")
		receivers := rapid.IntRange(1, 70).Draw(t, "receivers")
		format := rapid.SampledFrom([]string{"window-%d/ch-%d", "w%d-%d", "a-very-long-task-name-%d/ch-%d", "window-1%d/c%d"}).Draw(t, "format")
		seed := rapid.Uint64().Draw(t, "seed")
		r := NewRand(seed, "sortStep")
		seq := map[string]uint64{}
		var s []*messages.Envelope
		for range n {
			from := fmt.Sprint("source-", r.IntN(5))
			seq[from]++
			s = append(s, env(7, fmt.Sprintf(format, r.IntN(receivers), r.IntN(3)), from, seq[from]))
		}
		want := slices.Clone(s)
		slices.SortFunc(want, naiveCompare)
		var q Queue
		got := slices.Clone(s)
		q.sortStep(got)
		short := slices.Clone(s[:min(len(s), 200)])
		insertionStep(short)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("sortStep: at %d %s, want %s", i, show(got[i]), show(want[i]))
			}
		}
		wantShort := slices.Clone(s[:len(short)])
		slices.SortFunc(wantShort, naiveCompare)
		for i := range wantShort {
			if short[i] != wantShort[i] {
				t.Fatalf("insertionStep: at %d %s, want %s", i, show(short[i]), show(wantShort[i]))
			}
		}
	})
}

// BenchmarkQueueWide is the queue of a wide run: 4,096 envelopes in flight
// (parallelism 64's keyBy edge), each step popping the earliest time's
// envelopes and pushing as many, due a little later.
func BenchmarkQueueWide(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q Queue
	envs := make([]*messages.Envelope, 4096)
	for i := range envs {
		envs[i] = &messages.Envelope{DeliverAt: rng.Int64N(10_000), To: "window-" + strconv.Itoa(i%64) + "/ch-" + strconv.Itoa(i/64), From: "source-" + strconv.Itoa(i/64), SenderSeq: uint64(i)}
		q.Push(envs[i])
	}
	var step []*messages.Envelope
	b.ResetTimer()
	for range b.N {
		step = q.PopStep(step[:0])
		for _, e := range step {
			e.DeliverAt += 1 + rng.Int64N(10_000)
			q.Push(e)
		}
	}
}
