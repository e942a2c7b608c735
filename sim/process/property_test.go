package process

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// element is one generated input.
type element struct {
	key     string
	eventTs int64
	now     int64
}

// genElements draws up to 200 elements over a few keys with non-decreasing
// processing time (steps of 0..maxStep ms), as a real processing-time clock
// gives them.
func genElements(t *rapid.T, maxStep int64) []element {
	keys := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-e]{1,2}`), 1, 6, rapid.ID[string]).Draw(t, "keys")
	n := rapid.IntRange(0, 200).Draw(t, "n")
	now := rapid.Int64Range(-1_000, 1_000).Draw(t, "start")
	out := make([]element, n)
	for i := range out {
		now += rapid.Int64Range(0, maxStep).Draw(t, "step")
		out[i] = element{
			key:     rapid.SampledFrom(keys).Draw(t, "key"),
			eventTs: rapid.Int64().Draw(t, "eventTs"),
			now:     now,
		}
	}
	return out
}

// With no TTL the function is a plain per-key counter: each output is the
// number of elements of its key so far, nothing expires, every key seen is
// held, and a snapshot at any time holds the naive counts.
func TestPropertyNoTTLCountsLikeNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		elems := genElements(t, 1_000_000)
		f, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		naive := map[string]int64{}
		for i, e := range elems {
			naive[e.key]++
			got := f.ProcessElement(e.key, e.eventTs, e.now)
			want := Output{Key: e.key, Count: naive[e.key], Timestamp: e.eventTs}
			if got != want {
				t.Fatalf("element %d %+v: got %+v, want %+v", i, e, got, want)
			}
		}
		if f.ExpiredStateCount() != 0 {
			t.Fatalf("ExpiredStateCount = %d without a TTL", f.ExpiredStateCount())
		}
		if f.NumKeys() != len(naive) {
			t.Fatalf("NumKeys = %d, want %d", f.NumKeys(), len(naive))
		}
		keys := make([]string, 0, len(naive))
		for k := range naive {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		snap := f.Snapshot(rapid.Int64().Draw(t, "snapshotAt"))
		if len(snap) != len(keys) {
			t.Fatalf("snapshot has %d entries, want %d", len(snap), len(keys))
		}
		for i, k := range keys {
			if snap[i].Key != k || snap[i].Count != naive[k] {
				t.Fatalf("snapshot[%d] = %+v, want %s=%d", i, snap[i], k, naive[k])
			}
		}
	})
}

// With a TTL and a clock that never goes back, a key's count restarts
// exactly when the gap since its previous element is at least the TTL
// (written as a subtraction over small numbers, not TtlUtils' clamped sum),
// and each restart is one expired read.
func TestPropertyTTLRestartsAfterGap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ttl := rapid.Int64Range(1, 5_000).Draw(t, "ttl")
		elems := genElements(t, 3_000)
		f, err := New(Config{TTLMs: ttl})
		if err != nil {
			t.Fatal(err)
		}
		type seen struct{ count, last int64 }
		oracle := map[string]seen{}
		var wantExpired int64
		for i, e := range elems {
			s, ok := oracle[e.key]
			expired := ok && e.now-s.last >= ttl
			switch {
			case !ok || expired:
				s.count = 1
			default:
				s.count++
			}
			if expired {
				wantExpired++
			}
			s.last = e.now
			oracle[e.key] = s
			got := f.ProcessElement(e.key, e.eventTs, e.now)
			want := Output{Key: e.key, Count: s.count, Timestamp: e.eventTs, ExpiredRead: expired}
			if got != want {
				t.Fatalf("element %d %+v (ttl %d): got %+v, want %+v", i, e, ttl, got, want)
			}
		}
		if f.ExpiredStateCount() != wantExpired {
			t.Fatalf("ExpiredStateCount = %d, want %d", f.ExpiredStateCount(), wantExpired)
		}
		if f.NumKeys() != len(oracle) {
			t.Fatalf("NumKeys = %d, want %d (expired entries stay held)", f.NumKeys(), len(oracle))
		}
	})
}

// Snapshotting at the current processing time and restoring into a fresh
// Function changes no output: the entries a full snapshot leaves out are the
// expired ones, which would have read as absent anyway. Only the expired-read
// counter can differ (a left-out entry is absent, not expired, after restore).
func TestPropertySnapshotRestoreInvisible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ttl := rapid.Int64Range(0, 5_000).Draw(t, "ttl")
		elems := genElements(t, 3_000)
		ref, _ := New(Config{TTLMs: ttl})
		f, _ := New(Config{TTLMs: ttl})
		for i, e := range elems {
			if rapid.Bool().Draw(t, "restart") {
				snap := f.Snapshot(e.now)
				if !slices.IsSortedFunc(snap, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) }) {
					t.Fatalf("snapshot not sorted: %v", snap)
				}
				g, _ := New(Config{TTLMs: ttl})
				if err := g.Restore(snap); err != nil {
					t.Fatal(err)
				}
				f = g
			}
			want := ref.ProcessElement(e.key, e.eventTs, e.now)
			got := f.ProcessElement(e.key, e.eventTs, e.now)
			if got.Count != want.Count || got.Key != want.Key || got.Timestamp != want.Timestamp {
				t.Fatalf("element %d %+v: after restores got %+v, without %+v", i, e, got, want)
			}
		}
	})
}
