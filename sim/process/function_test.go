package process

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// step is one element and what the function must do with it. The wanted
// values are worked out by hand from Flink's rules (see the package doc):
// expired at now  <=>  lastAccess + ttl <= now (saturating at
// Long.MAX_VALUE when lastAccess > 0); an expired read is cleared and reads
// as absent; every write stamps the entry with now.
type step struct {
	key         string
	now         int64
	wantCount   int64
	wantExpired bool // the read found an expired value
}

func TestProcessElementHandChecked(t *testing.T) {
	tests := []struct {
		name        string
		ttl         int64
		steps       []step
		wantExpired int64 // ExpiredStateCount at the end
		wantKeys    int
	}{
		{
			// The brief's example, TTL 10 s:
			//   t=0:     absent -> 1, lastAccess=0.
			//   t=5000:  0+10000=10000 <= 5000? no: live, 1 -> 2, lastAccess=5000.
			//   t=16000: 5000+10000=15000 <= 16000: expired, cleared, absent -> 1.
			name: "ttl 10s at 0, 5s, 16s",
			ttl:  10_000,
			steps: []step{
				{"a", 0, 1, false},
				{"a", 5_000, 2, false},
				{"a", 16_000, 1, true},
			},
			wantExpired: 1,
			wantKeys:    1,
		},
		{
			// One millisecond before expiry the value is live:
			//   t=0: 1 (lastAccess 0); t=9999: 10000 <= 9999? no -> 2.
			name:     "read 1 ms before expiry is live",
			ttl:      10_000,
			steps:    []step{{"a", 0, 1, false}, {"a", 9_999, 2, false}},
			wantKeys: 1,
		},
		{
			// Exactly at lastAccess + ttl the value is expired (<=):
			//   t=0: 1; t=10000: 10000 <= 10000 -> expired, absent -> 1.
			name:        "read exactly at expiry is expired",
			ttl:         10_000,
			steps:       []step{{"a", 0, 1, false}, {"a", 10_000, 1, true}},
			wantExpired: 1,
			wantKeys:    1,
		},
		{
			// Every write refreshes the timestamp (OnCreateAndWrite), so a key
			// seen every 9 s with a 10 s TTL never expires:
			//   0 -> 1 (la 0); 9000: 10000 > 9000 -> 2 (la 9000);
			//   18000: 19000 > 18000 -> 3 (la 18000); 27000: 28000 > 27000 -> 4.
			name: "writes refresh the timestamp",
			ttl:  10_000,
			steps: []step{
				{"a", 0, 1, false}, {"a", 9_000, 2, false},
				{"a", 18_000, 3, false}, {"a", 27_000, 4, false},
			},
			wantKeys: 1,
		},
		{
			// Keys expire independently, TTL 1 s:
			//   a@0 -> 1 (la 0); b@500 -> 1 (la 500);
			//   a@1000: 0+1000 <= 1000 expired -> 1 (la 1000);
			//   b@1400: 500+1000=1500 > 1400 live -> 2 (la 1400);
			//   a@1999: 1000+1000=2000 > 1999 live -> 2 (la 1999);
			//   b@2400: 1400+1000 <= 2400 expired -> 1 (la 2400);
			//   a@2999: 1999+1000 <= 2999 expired -> 1.
			name: "keys expire independently",
			ttl:  1_000,
			steps: []step{
				{"a", 0, 1, false}, {"b", 500, 1, false},
				{"a", 1_000, 1, true}, {"b", 1_400, 2, false},
				{"a", 1_999, 2, false}, {"b", 2_400, 1, true},
				{"a", 2_999, 1, true},
			},
			wantExpired: 3,
			wantKeys:    2,
		},
		{
			// After an expired read the count starts again and builds up:
			//   0 -> 1; 100: 0+100 <= 100 expired -> 1 (la 100);
			//   150: 200 > 150 -> 2 (la 150); 249: 250 > 249 -> 3 (la 249);
			//   349: 349 <= 349 expired -> 1.
			name: "count restarts after expiry",
			ttl:  100,
			steps: []step{
				{"a", 0, 1, false}, {"a", 100, 1, true}, {"a", 150, 2, false},
				{"a", 249, 3, false}, {"a", 349, 1, true},
			},
			wantExpired: 2,
			wantKeys:    1,
		},
		{
			// TTL 1 ms, the smallest: a read in the same millisecond is live
			// (0+1 <= 0? no), the next millisecond is expired (1 <= 1).
			name:        "ttl 1ms",
			ttl:         1,
			steps:       []step{{"a", 0, 1, false}, {"a", 0, 2, false}, {"a", 1, 1, true}},
			wantExpired: 1,
			wantKeys:    1,
		},
		{
			// No TTL: nothing ever expires, however far apart.
			//   a@0 -> 1; a@10^12 -> 2; a@MaxInt64 -> 3; b@-5 -> 1.
			name: "no ttl never expires",
			ttl:  0,
			steps: []step{
				{"a", 0, 1, false}, {"a", 1_000_000_000_000, 2, false},
				{"a", math.MaxInt64, 3, false}, {"b", -5, 1, false},
			},
			wantKeys: 2,
		},
		{
			// Overflow clamp: lastAccess = MaxInt64-5 > 0, ttl 10:
			// expiration = lastAccess + min(MaxInt64-lastAccess=5, 10) = MaxInt64,
			// so it is live at MaxInt64-1 and expired only at MaxInt64 (a
			// wrapping sum would have made it expired at once).
			//   MaxInt64-5 -> 1 (la MaxInt64-5); MaxInt64-1: live -> 2
			//   (la MaxInt64-1, expiration clamps to MaxInt64); MaxInt64: expired -> 1.
			name: "expiration clamps at Long.MAX_VALUE",
			ttl:  10,
			steps: []step{
				{"a", math.MaxInt64 - 5, 1, false},
				{"a", math.MaxInt64 - 1, 2, false},
				{"a", math.MaxInt64, 1, true},
			},
			wantExpired: 1,
			wantKeys:    1,
		},
		{
			// The largest TTL from a positive timestamp: la=1, ttl=MaxInt64:
			// 1 + min(MaxInt64-1, MaxInt64) = MaxInt64; live at MaxInt64-1.
			name: "huge ttl positive timestamp",
			ttl:  math.MaxInt64,
			steps: []step{
				{"a", 1, 1, false}, {"a", math.MaxInt64 - 1, 2, false},
			},
			wantKeys: 1,
		},
		{
			// lastAccess <= 0 adds ttl unclamped (cannot overflow): la=-10,
			// ttl=MaxInt64 -> expiration MaxInt64-10; live at MaxInt64-11,
			// expired at MaxInt64-10.
			//   -10 -> 1; MaxInt64-11: live -> 2 (la MaxInt64-11);
			//   then la > 0: expiration clamps to MaxInt64, so MaxInt64-10 is live -> 3.
			name: "huge ttl negative timestamp",
			ttl:  math.MaxInt64,
			steps: []step{
				{"a", -10, 1, false}, {"a", math.MaxInt64 - 11, 2, false},
				{"a", math.MaxInt64 - 10, 3, false},
			},
			wantKeys: 1,
		},
		{
			// Same, but the second element comes exactly at the unclamped
			// expiration: -10 + MaxInt64 <= MaxInt64-10 -> expired -> 1.
			name: "huge ttl negative timestamp at expiry",
			ttl:  math.MaxInt64,
			steps: []step{
				{"a", -10, 1, false}, {"a", math.MaxInt64 - 10, 1, true},
			},
			wantExpired: 1,
			wantKeys:    1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(Config{TTLMs: tt.ttl})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				eventTs := int64(1000 + i) // any value: passed through untouched
				got := f.ProcessElement(s.key, eventTs, s.now)
				want := Output{Key: s.key, Count: s.wantCount, Timestamp: eventTs, ExpiredRead: s.wantExpired}
				if got != want {
					t.Errorf("step %d (%s at %d): got %+v, want %+v", i, s.key, s.now, got, want)
				}
			}
			if got := f.ExpiredStateCount(); got != tt.wantExpired {
				t.Errorf("ExpiredStateCount = %d, want %d", got, tt.wantExpired)
			}
			if got := f.NumKeys(); got != tt.wantKeys {
				t.Errorf("NumKeys = %d, want %d", got, tt.wantKeys)
			}
		})
	}
}

func TestIsExpired(t *testing.T) {
	// give: lastAccess, ttl, now; want: TtlUtils.expired.
	tests := []struct {
		lastAccess, ttl, now int64
		want                 bool
	}{
		{0, 10_000, 9_999, false},
		{0, 10_000, 10_000, true},
		{0, 10_000, 10_001, true},
		{5_000, 10_000, 14_999, false},
		{5_000, 10_000, 15_000, true},
		{-3, 5, 1, false}, // -3+5 = 2 > 1
		{-3, 5, 2, true},
		{math.MaxInt64 - 5, 10, math.MaxInt64 - 1, false}, // clamps to MaxInt64
		{math.MaxInt64 - 5, 10, math.MaxInt64, true},
		{math.MaxInt64, 1, math.MaxInt64, true}, // add = min(0, 1) = 0
		{math.MaxInt64, 1, math.MaxInt64 - 1, false},
		{1, math.MaxInt64, math.MaxInt64, true},
		{1, math.MaxInt64, math.MaxInt64 - 1, false},
		{0, math.MaxInt64, math.MaxInt64, true}, // lastAccess 0 is not > 0: plain sum
		{math.MinInt64, math.MaxInt64, -1, true},
		{math.MinInt64, math.MaxInt64, -2, false},
	}
	for _, tt := range tests {
		if got := isExpired(tt.lastAccess, tt.ttl, tt.now); got != tt.want {
			t.Errorf("isExpired(%d, %d, %d) = %v, want %v", tt.lastAccess, tt.ttl, tt.now, got, tt.want)
		}
	}
}

func TestNewRefusesNegativeTTL(t *testing.T) {
	tests := []struct {
		give    int64
		wantErr error
	}{
		{-1, ErrNegativeTTL},
		{math.MinInt64, ErrNegativeTTL},
		{0, nil},
		{1, nil},
		{math.MaxInt64, nil},
	}
	for _, tt := range tests {
		f, err := New(Config{TTLMs: tt.give})
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("New(TTLMs=%d) error = %v, want %v", tt.give, err, tt.wantErr)
		}
		if (f == nil) != (tt.wantErr != nil) {
			t.Errorf("New(TTLMs=%d) = %v with error %v", tt.give, f, err)
		}
	}
	if got, want := ErrNegativeTTL.Error(), "TTL is expected to be positive."; got != want {
		t.Errorf("message %q, want Flink's %q", got, want)
	}
}

// An expired read clears the entry and the write puts it back: the key count
// does not change, and before the read the expired entry is still held.
func TestExpiredEntriesStayHeldUntilRead(t *testing.T) {
	f, _ := New(Config{TTLMs: 1_000})
	f.ProcessElement("a", 0, 0)
	f.ProcessElement("b", 0, 0)
	f.ProcessElement("c", 0, 500)
	// At 5000 all three are expired, but nothing read them: all held.
	if got := f.NumKeys(); got != 3 {
		t.Fatalf("NumKeys = %d, want 3", got)
	}
	want := []Entry{{"a", 1, 0}, {"b", 1, 0}, {"c", 1, 500}}
	if got := f.Entries(); !slices.Equal(got, want) {
		t.Fatalf("Entries = %v, want %v", got, want)
	}
	f.ProcessElement("b", 0, 5_000)
	want = []Entry{{"a", 1, 0}, {"b", 1, 5_000}, {"c", 1, 500}}
	if got := f.Entries(); !slices.Equal(got, want) {
		t.Fatalf("Entries after reading b = %v, want %v", got, want)
	}
	if got := f.ExpiredStateCount(); got != 1 {
		t.Fatalf("ExpiredStateCount = %d, want 1", got)
	}
}

func TestSnapshot(t *testing.T) {
	// TTL 10 s; a written at 0, b at 8000, c at 2000 then 9000 (count 2).
	// At snapshot time 10000: a: 0+10000 <= 10000 expired, left out;
	// b: 18000 > 10000 kept; c: 19000 > 10000 kept.
	// At 18000: b expired (18000 <= 18000); c kept (19000 > 18000).
	// At 19000: nothing left.
	f, _ := New(Config{TTLMs: 10_000})
	f.ProcessElement("b", 0, 8_000)
	f.ProcessElement("a", 0, 0)
	f.ProcessElement("c", 0, 2_000)
	f.ProcessElement("c", 0, 9_000)
	tests := []struct {
		give int64
		want []Entry
	}{
		{9_999, []Entry{{"a", 1, 0}, {"b", 1, 8_000}, {"c", 2, 9_000}}},
		{10_000, []Entry{{"b", 1, 8_000}, {"c", 2, 9_000}}},
		{17_999, []Entry{{"b", 1, 8_000}, {"c", 2, 9_000}}},
		{18_000, []Entry{{"c", 2, 9_000}}},
		{19_000, []Entry{}},
	}
	for _, tt := range tests {
		if got := f.Snapshot(tt.give); !slices.Equal(got, tt.want) {
			t.Errorf("Snapshot(%d) = %v, want %v", tt.give, got, tt.want)
		}
	}
	// Snapshots leave the live state alone.
	if got := f.NumKeys(); got != 3 {
		t.Errorf("NumKeys after snapshots = %d, want 3", got)
	}
	if got := f.ExpiredStateCount(); got != 0 {
		t.Errorf("ExpiredStateCount after snapshots = %d, want 0", got)
	}
}

func TestSnapshotWithoutTTLKeepsAll(t *testing.T) {
	f, _ := New(Config{})
	f.ProcessElement("z", 0, 0)
	f.ProcessElement("a", 0, 1)
	f.ProcessElement("z", 0, 2)
	want := []Entry{{"a", 1, 1}, {"z", 2, 2}}
	if got := f.Snapshot(math.MaxInt64); !slices.Equal(got, want) {
		t.Errorf("Snapshot = %v, want %v", got, want)
	}
}

func TestRestoreContinuesCounts(t *testing.T) {
	// TTL 10 s. Before the snapshot: a@0 (1), b@8000 (1), b@9000 (2).
	// Snapshot at 10000 leaves a out (0+10000 <= 10000) and keeps b (2, la 9000).
	// After restore:
	//   b@12000: 19000 > 12000 live -> 3 (la 12000);
	//   a@12000: absent (not restored) -> 1, and no expired read;
	//   b@22000: 22000 <= 22000 expired -> 1.
	f, _ := New(Config{TTLMs: 10_000})
	f.ProcessElement("a", 0, 0)
	f.ProcessElement("b", 0, 8_000)
	f.ProcessElement("b", 0, 9_000)
	snap := f.Snapshot(10_000)

	g, _ := New(Config{TTLMs: 10_000})
	if err := g.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got := g.NumKeys(); got != 1 {
		t.Fatalf("NumKeys after restore = %d, want 1", got)
	}
	steps := []step{
		{"b", 12_000, 3, false},
		{"a", 12_000, 1, false},
		{"b", 22_000, 1, true},
	}
	for i, s := range steps {
		got := g.ProcessElement(s.key, 7, s.now)
		want := Output{Key: s.key, Count: s.wantCount, Timestamp: 7, ExpiredRead: s.wantExpired}
		if got != want {
			t.Errorf("step %d: got %+v, want %+v", i, got, want)
		}
	}
	if got := g.ExpiredStateCount(); got != 1 {
		t.Errorf("ExpiredStateCount = %d, want 1", got)
	}
}

func TestRestoreKeepsTimestampsOfStaleEntries(t *testing.T) {
	// A snapshot restored long after it was taken: the entry keeps its
	// lastAccess, is held, and expires on its first read.
	f, _ := New(Config{TTLMs: 1_000})
	if err := f.Restore([]Entry{{"a", 5, 100}, {"b", 2, 900}}); err != nil {
		t.Fatal(err)
	}
	if got := f.NumKeys(); got != 2 {
		t.Fatalf("NumKeys = %d, want 2", got)
	}
	// a: 100+1000 = 1100 <= 1500 expired -> 1; b: 1900 > 1500 live -> 3.
	if got := f.ProcessElement("a", 0, 1_500); got.Count != 1 || !got.ExpiredRead {
		t.Errorf("a: got %+v, want count 1 after an expired read", got)
	}
	if got := f.ProcessElement("b", 0, 1_500); got.Count != 3 || got.ExpiredRead {
		t.Errorf("b: got %+v, want count 3", got)
	}
}

func TestRestoreReplacesState(t *testing.T) {
	f, _ := New(Config{})
	f.ProcessElement("old", 0, 0)
	if err := f.Restore([]Entry{{"new", 4, 0}}); err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"new", 4, 0}}
	if got := f.Entries(); !slices.Equal(got, want) {
		t.Fatalf("Entries = %v, want %v", got, want)
	}
	if got := f.ProcessElement("old", 0, 1); got.Count != 1 {
		t.Errorf("old: count %d, want 1 (not in the restored state)", got.Count)
	}
}

func TestRestoreRefusesDuplicateKeys(t *testing.T) {
	f, _ := New(Config{})
	f.ProcessElement("keep", 0, 0)
	err := f.Restore([]Entry{{"a", 1, 0}, {"a", 2, 0}})
	if err == nil || err.Error() != `restore: duplicate key "a"` {
		t.Fatalf("Restore error = %v, want duplicate key", err)
	}
	want := []Entry{{"keep", 1, 0}}
	if got := f.Entries(); !slices.Equal(got, want) {
		t.Fatalf("state changed by a refused restore: %v", got)
	}
}

func TestRestoreEmpty(t *testing.T) {
	f, _ := New(Config{TTLMs: 5})
	f.ProcessElement("a", 0, 0)
	if err := f.Restore(nil); err != nil {
		t.Fatal(err)
	}
	if got := f.NumKeys(); got != 0 {
		t.Fatalf("NumKeys = %d, want 0", got)
	}
	if got := f.Snapshot(0); got == nil || len(got) != 0 {
		t.Fatalf("Snapshot of empty state = %#v, want an empty, non-nil slice", got)
	}
}
