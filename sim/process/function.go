// Package process is the keyed process function of flinksim's one job shape
// (Kafka source -> keyBy -> KeyedProcessFunction -> sink), the alternative to
// the window operator: a per-key running count kept in a ValueState<Long>
// with an optional time-to-live.
//
// It is a pure state machine with no clock: every call is given the current
// processing time in virtual milliseconds, which stands in for Flink's
// TtlTimeProvider (System.currentTimeMillis in a real job). Nothing here
// reads the wall clock, starts goroutines or lets map order reach an output.
//
// The TTL follows Flink 1.20's state TTL with the builder's defaults plus
// full-snapshot cleanup:
//
//	StateTtlConfig.newBuilder(Duration.ofMillis(TTLMs))
//	    .setUpdateType(UpdateType.OnCreateAndWrite)           // default
//	    .setStateVisibility(StateVisibility.NeverReturnExpired) // default
//	    .setTtlTimeCharacteristic(TtlTimeCharacteristic.ProcessingTime)
//	    .cleanupFullSnapshot()
//	    .disableCleanupInBackground() // see "Not modelled" below
//	    .build()
//
// The classes followed (org.apache.flink.runtime.state.ttl):
//   - TtlUtils.expired: a value written at lastAccess is expired at now when
//     getExpirationTimestamp(lastAccess, ttl) <= now, where the expiration
//     timestamp is lastAccess + ttl, clamped to Long.MAX_VALUE when
//     lastAccess > 0 and the sum would overflow. So a value is already
//     expired at exactly lastAccess + ttl.
//   - AbstractTtlDecorator.getWrappedWithTtlCheckAndUpdate, reached from
//     TtlValueState.value() through AbstractTtlState.getWithTtlCheckAndUpdate
//     (which passes original::clear as the clear action): absent -> null;
//     expired -> the entry is cleared and, with NeverReturnExpired, null is
//     returned; unexpired -> the value, and only OnReadAndWrite would refresh
//     the timestamp on read.
//   - TtlValueState.update: wraps the value with the current timestamp
//     (AbstractTtlDecorator.wrapWithTs), so every write refreshes it
//     (OnCreateAndWrite).
//   - TtlStateSnapshotTransformer (installed by TtlStateFactory when
//     CleanupStrategies.inFullSnapshot()): a full snapshot leaves out every
//     value that is expired at snapshot time; the live state keeps them.
//
// Because the function writes after every read, OnCreateAndWrite and
// OnReadAndWrite would behave the same for it.
//
// Not modelled: Flink 1.20 keeps "cleanup in background" on unless
// disableCleanupInBackground() is called, and on the heap backend that means
// the default incremental cleanup (IncrementalCleanupStrategy(5, false)):
// every state access also checks up to 5 entries of a lazy iterator over the
// heap state map and drops expired ones. Its visiting order is the hash
// table's, so this package leaves it out: expired entries stay held until
// their key is read again, and NumKeys counts them.
package process

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrNegativeTTL is returned by New for a negative Config.TTLMs. Its text is
// the message of the IllegalArgumentException thrown by StateTtlConfig's
// constructor (Preconditions.checkArgument(ttl > 0, ...)).
var ErrNegativeTTL = errors.New("TTL is expected to be positive.")

// Config configures a Function.
type Config struct {
	// TTLMs is the state time-to-live in virtual milliseconds of processing
	// time (StateTtlConfig's ttl). 0 means no TTL: the state descriptor has
	// no StateTtlConfig and counts never expire. Negative is refused with
	// ErrNegativeTTL (Flink refuses any ttl <= 0 in StateTtlConfig; 0 here
	// stands for not calling enableTimeToLive at all).
	TTLMs int64
}

// Output is what one element makes the function emit (collector.collect in
// KeyedProcessFunction.processElement).
type Output struct {
	// Key is the element's key.
	Key string
	// Count is the key's running count after this element, >= 1.
	Count int64
	// Timestamp is the element's event timestamp in virtual milliseconds,
	// passed through as KeyedProcessOperator's TimestampedCollector does.
	Timestamp int64
	// ExpiredRead is true when the read found a value whose TTL had run out:
	// it was cleared, read as absent, and counted in ExpiredStateCount.
	ExpiredRead bool
}

// Entry is one key's counter as held by the state backend or written to a
// snapshot (a TtlValue<Long>: the user value and its last access timestamp).
type Entry struct {
	// Key is the state key.
	Key string
	// Count is the stored counter value.
	Count int64
	// LastAccessMs is the virtual processing time of the last write (the
	// TtlValue's lastAccessTimestamp). It is recorded without a TTL too,
	// where Flink stores no timestamp, and has no effect there.
	LastAccessMs int64
}

type value struct {
	count        int64
	lastAccessMs int64
}

// Function is the counting KeyedProcessFunction with its keyed
// ValueState<Long> on a heap state backend. Not safe for concurrent use; the
// zero value is not usable, call New.
type Function struct {
	cfg     Config
	state   map[string]value
	expired int64
}

// New returns a Function with no state. It refuses a negative TTL with
// ErrNegativeTTL.
func New(c Config) (*Function, error) {
	if c.TTLMs < 0 {
		return nil, ErrNegativeTTL
	}
	return &Function{cfg: c, state: map[string]value{}}, nil
}

// Config returns the configuration the Function was built with.
func (f *Function) Config() Config { return f.cfg }

// isExpired reports whether a value last written at lastAccessMs is expired
// at nowMs with a positive ttlMs, as TtlUtils.expired does: expired when
// getExpirationTimestamp(lastAccessMs, ttlMs) <= nowMs, where
// getExpirationTimestamp adds min(Long.MAX_VALUE - lastAccessMs, ttlMs) when
// lastAccessMs > 0 (saturating at Long.MAX_VALUE) and ttlMs otherwise.
// Cost O(1).
func isExpired(lastAccessMs, ttlMs, nowMs int64) bool {
	add := ttlMs
	if lastAccessMs > 0 {
		add = min(math.MaxInt64-lastAccessMs, ttlMs)
	}
	return lastAccessMs+add <= nowMs
}

func (f *Function) expiredAt(v value, nowMs int64) bool {
	return f.cfg.TTLMs > 0 && isExpired(v.lastAccessMs, f.cfg.TTLMs, nowMs)
}

// ProcessElement handles one element of key with event timestamp eventTs at
// virtual processing time nowMs: it reads the key's count (TtlValueState.value:
// an expired value is cleared, counted in ExpiredStateCount and read as
// absent), adds one (absent counts as 0), writes it back stamped with nowMs
// (TtlValueState.update) and emits the new count. nowMs may be any int64;
// processing time normally never goes back, but nothing here requires it.
// Cost O(1) expected.
func (f *Function) ProcessElement(key string, eventTs int64, nowMs int64) Output {
	out := Output{Key: key, Timestamp: eventTs}
	var count int64
	if v, ok := f.state[key]; ok {
		if f.expiredAt(v, nowMs) {
			delete(f.state, key) // stateClear (original::clear)
			f.expired++
			out.ExpiredRead = true
		} else {
			count = v.count
		}
	}
	count++
	f.state[key] = value{count: count, lastAccessMs: nowMs}
	out.Count = count
	return out
}

// NumKeys is the number of entries the backend holds, expired ones that no
// read has cleared yet included. A Snapshot does not change it.
func (f *Function) NumKeys() int { return len(f.state) }

// ExpiredStateCount is how many reads found an expired value since New (a
// Restore leaves it as it is).
func (f *Function) ExpiredStateCount() int64 { return f.expired }

// Entries lists every held entry, expired ones included, sorted by key. It
// reads no state through the TTL layer, so it neither clears nor counts
// anything. Cost O(n log n).
func (f *Function) Entries() []Entry {
	return f.entries(func(value) bool { return true })
}

// Snapshot is a full snapshot of the keyed state taken at virtual processing
// time nowMs, sorted by key: with a TTL, every entry expired at nowMs is left
// out (cleanupFullSnapshot, TtlStateSnapshotTransformer); the held state is
// not changed. Without a TTL every entry is written. Cost O(n log n).
func (f *Function) Snapshot(nowMs int64) []Entry {
	return f.entries(func(v value) bool { return !f.expiredAt(v, nowMs) })
}

func (f *Function) entries(keep func(value) bool) []Entry {
	out := make([]Entry, 0, len(f.state))
	for k, v := range f.state {
		if keep(v) {
			out = append(out, Entry{Key: k, Count: v.count, LastAccessMs: v.lastAccessMs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Restore replaces the held state with entries, keeping each entry's count
// and last access timestamp as a heap backend restores TtlValues: an entry
// that has expired since the snapshot is held until a read clears it.
// ExpiredStateCount is not part of a snapshot and is left as it is. It
// refuses a key given twice, leaving the state unchanged. Cost O(n).
func (f *Function) Restore(entries []Entry) error {
	state := make(map[string]value, len(entries))
	for _, e := range entries {
		if _, dup := state[e.Key]; dup {
			return fmt.Errorf("restore: duplicate key %q", e.Key)
		}
		state[e.Key] = value{count: e.Count, lastAccessMs: e.LastAccessMs}
	}
	f.state = state
	return nil
}
