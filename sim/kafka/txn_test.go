package kafka

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"pgregory.net/rapid"
)

// txnStep is one operation of a hand-worked scenario. op is begin, init,
// append (key into id's transaction on part), plain, precommit, commit,
// abort.
type txnStep struct {
	op      string
	id      string
	part    int32
	key     string
	wantOff int64 // for append/plain
	wantErr error
}

func runSteps(t *testing.T, l *TxnLog, steps []txnStep) {
	t.Helper()
	for i, s := range steps {
		var err error
		off := int64(-2)
		switch s.op {
		case "begin":
			err = l.Begin(s.id)
		case "init":
			err = l.InitTransactions(s.id)
		case "append":
			off, err = l.Append(s.id, &messages.KafkaRecord{Partition: s.part, Key: s.key})
		case "plain":
			off = l.AppendPlain(&messages.KafkaRecord{Partition: s.part, Key: s.key})
		case "precommit":
			err = l.PreCommit(s.id)
		case "commit":
			err = l.Commit(s.id)
		case "abort":
			err = l.Abort(s.id)
		default:
			t.Fatalf("step %d: unknown op %q", i, s.op)
		}
		if !errors.Is(err, s.wantErr) {
			t.Errorf("step %d %s %s %s: error %v, want %v", i, s.op, s.id, s.key, err, s.wantErr)
		}
		if (s.op == "append" || s.op == "plain") && s.wantErr == nil && off != s.wantOff {
			t.Errorf("step %d %s %s: offset %d, want %d", i, s.op, s.key, off, s.wantOff)
		}
	}
}

func keys(recs []*messages.KafkaRecord) string {
	ks := make([]string, len(recs))
	for i, r := range recs {
		ks[i] = r.Key
	}
	return strings.Join(ks, " ")
}

func TestTxnScenarios(t *testing.T) {
	tests := []struct {
		name       string
		partitions int
		steps      []txnStep
		// per partition
		wantLSO       []int64
		wantCommitted []string
		wantAll       []string
		// open, preCommitted, committed, aborted, plain
		wantCounts [5]int
	}{
		{
			name:       "interleaved: B committed first waits for A at offset 0",
			partitions: 1,
			steps: []txnStep{
				{op: "begin", id: "s-0-1"}, {op: "begin", id: "s-1-1"},
				{op: "append", id: "s-0-1", key: "a1", wantOff: 0},
				{op: "append", id: "s-1-1", key: "b1", wantOff: 1},
				{op: "plain", key: "p1", wantOff: 2},
				{op: "append", id: "s-0-1", key: "a2", wantOff: 3},
				{op: "append", id: "s-1-1", key: "b2", wantOff: 4},
				{op: "precommit", id: "s-1-1"}, {op: "commit", id: "s-1-1"},
				{op: "precommit", id: "s-0-1"},
			},
			wantLSO: []int64{0}, wantCommitted: []string{""}, wantAll: []string{"a1 b1 p1 a2 b2"},
			wantCounts: [5]int{0, 2, 2, 0, 1},
		},
		{
			name:       "interleaved: then A commits and everything is visible",
			partitions: 1,
			steps: []txnStep{
				{op: "begin", id: "s-0-1"}, {op: "begin", id: "s-1-1"},
				{op: "append", id: "s-0-1", key: "a1", wantOff: 0},
				{op: "append", id: "s-1-1", key: "b1", wantOff: 1},
				{op: "plain", key: "p1", wantOff: 2},
				{op: "append", id: "s-0-1", key: "a2", wantOff: 3},
				{op: "append", id: "s-1-1", key: "b2", wantOff: 4},
				{op: "commit", id: "s-1-1"}, {op: "commit", id: "s-0-1"},
			},
			wantLSO: []int64{5}, wantCommitted: []string{"a1 b1 p1 a2 b2"}, wantAll: []string{"a1 b1 p1 a2 b2"},
			wantCounts: [5]int{0, 0, 4, 0, 1},
		},
		{
			name:       "interleaved: A aborts, its records vanish for read_committed",
			partitions: 1,
			steps: []txnStep{
				{op: "begin", id: "s-0-1"}, {op: "begin", id: "s-1-1"},
				{op: "append", id: "s-0-1", key: "a1", wantOff: 0},
				{op: "append", id: "s-1-1", key: "b1", wantOff: 1},
				{op: "plain", key: "p1", wantOff: 2},
				{op: "append", id: "s-0-1", key: "a2", wantOff: 3},
				{op: "append", id: "s-1-1", key: "b2", wantOff: 4},
				{op: "commit", id: "s-1-1"}, {op: "abort", id: "s-0-1"},
			},
			wantLSO: []int64{5}, wantCommitted: []string{"b1 p1 b2"}, wantAll: []string{"a1 b1 p1 a2 b2"},
			wantCounts: [5]int{0, 0, 2, 2, 1},
		},
		{
			name:       "LSO at a later open transaction cuts committed and plain records after it",
			partitions: 1,
			steps: []txnStep{
				{op: "plain", key: "p0", wantOff: 0},
				{op: "begin", id: "s-0-1"},
				{op: "append", id: "s-0-1", key: "a1", wantOff: 1},
				{op: "plain", key: "p2", wantOff: 2},
				{op: "begin", id: "s-1-1"},
				{op: "append", id: "s-1-1", key: "b3", wantOff: 3},
				{op: "plain", key: "p4", wantOff: 4},
				{op: "append", id: "s-0-1", key: "a5", wantOff: 5},
				{op: "commit", id: "s-0-1"},
			},
			wantLSO: []int64{3}, wantCommitted: []string{"p0 a1 p2"}, wantAll: []string{"p0 a1 p2 b3 p4 a5"},
			wantCounts: [5]int{1, 0, 2, 0, 3},
		},
		{
			name:       "a transaction begun but not written to does not hold the LSO",
			partitions: 1,
			steps: []txnStep{
				{op: "begin", id: "s-0-1"},
				{op: "plain", key: "p0", wantOff: 0},
				{op: "commit", id: "s-0-1"}, // an empty transaction commits
			},
			wantLSO: []int64{1}, wantCommitted: []string{"p0"}, wantAll: []string{"p0"},
			wantCounts: [5]int{0, 0, 0, 0, 1},
		},
		{
			name:       "fencing: re-beginning an id aborts its open transaction",
			partitions: 1,
			steps: []txnStep{
				{op: "begin", id: "s-0-7"},
				{op: "append", id: "s-0-7", key: "x1", wantOff: 0},
				{op: "precommit", id: "s-0-7"},
				{op: "begin", id: "s-0-7"}, // InitProducerId: x1 aborted
				{op: "append", id: "s-0-7", key: "x2", wantOff: 1},
				{op: "commit", id: "s-0-7"},
				{op: "commit", id: "s-0-7"}, // idempotent
			},
			wantLSO: []int64{2}, wantCommitted: []string{"x2"}, wantAll: []string{"x1 x2"},
			wantCounts: [5]int{0, 0, 1, 1, 0},
		},
		{
			name:       "fencing: the committer of a fenced transaction fails",
			partitions: 1,
			steps: []txnStep{
				{op: "begin", id: "s-0-7"},
				{op: "append", id: "s-0-7", key: "x1", wantOff: 0},
				{op: "precommit", id: "s-0-7"},
				{op: "init", id: "s-0-7"},
				{op: "commit", id: "s-0-7", wantErr: ErrProducerFenced},
				{op: "abort", id: "s-0-7", wantErr: ErrProducerFenced},
				{op: "precommit", id: "s-0-7", wantErr: ErrProducerFenced},
				{op: "append", id: "s-0-7", key: "x9", wantErr: ErrNotInTransaction},
			},
			wantLSO: []int64{1}, wantCommitted: []string{""}, wantAll: []string{"x1"},
			wantCounts: [5]int{0, 0, 0, 1, 0},
		},
		{
			name:       "errors write nothing and change no state",
			partitions: 2,
			steps: []txnStep{
				{op: "commit", id: "nobody", wantErr: ErrInvalidProducerIDMapping},
				{op: "abort", id: "nobody", wantErr: ErrInvalidProducerIDMapping},
				{op: "precommit", id: "nobody", wantErr: ErrInvalidProducerIDMapping},
				{op: "append", id: "nobody", key: "n", wantErr: ErrTransactionsNotInitialized},
				{op: "begin", id: "", wantErr: ErrInvalidRequest},
				{op: "init", id: "", wantErr: ErrInvalidRequest},
				{op: "init", id: "fresh"},
				{op: "commit", id: "fresh", wantErr: ErrInvalidTxnState},
				{op: "abort", id: "fresh", wantErr: ErrInvalidTxnState},
				{op: "append", id: "fresh", key: "f", wantErr: ErrNotInTransaction},
				{op: "begin", id: "c"},
				{op: "append", id: "c", part: 2, key: "bad", wantErr: ErrUnknownTopicOrPartition},
				{op: "append", id: "c", part: -1, key: "bad", wantErr: ErrUnknownTopicOrPartition},
				{op: "append", id: "c", part: 1, key: "c1", wantOff: 0},
				{op: "precommit", id: "c"},
				{op: "precommit", id: "c"}, // flushing twice is fine
				{op: "append", id: "c", part: 1, key: "late", wantErr: ErrTxnPreCommitted},
				{op: "commit", id: "c"},
				{op: "abort", id: "c", wantErr: ErrInvalidTxnState},
				{op: "precommit", id: "c", wantErr: ErrInvalidTxnState},
				{op: "append", id: "c", part: 1, key: "after", wantErr: ErrNotInTransaction},
				{op: "begin", id: "d"},
				{op: "append", id: "d", part: 0, key: "d1", wantOff: 0},
				{op: "abort", id: "d"},
				{op: "abort", id: "d"}, // aborting twice is fine
				{op: "commit", id: "d", wantErr: ErrInvalidTxnState},
			},
			wantLSO: []int64{1, 1}, wantCommitted: []string{"", "c1"}, wantAll: []string{"d1", "c1"},
			wantCounts: [5]int{0, 0, 1, 1, 0},
		},
		{
			name:       "a transaction over two partitions holds both LSOs",
			partitions: 2,
			steps: []txnStep{
				{op: "plain", part: 0, key: "p0", wantOff: 0},
				{op: "begin", id: "s-0-1"},
				{op: "append", id: "s-0-1", part: 1, key: "a@1", wantOff: 0},
				{op: "append", id: "s-0-1", part: 0, key: "a@0", wantOff: 1},
				{op: "plain", part: 1, key: "q1", wantOff: 1},
				{op: "plain", part: 0, key: "p2", wantOff: 2},
			},
			wantLSO: []int64{1, 0}, wantCommitted: []string{"p0", ""}, wantAll: []string{"p0 a@0 p2", "a@1 q1"},
			wantCounts: [5]int{2, 0, 0, 0, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewTxnLog(NewTopic("out", tt.partitions))
			runSteps(t, l, tt.steps)
			for p := 0; p < tt.partitions; p++ {
				if got := l.LastStableOffset(p); got != tt.wantLSO[p] {
					t.Errorf("partition %d: LSO %d, want %d", p, got, tt.wantLSO[p])
				}
				if got := keys(l.ReadCommitted(p)); got != tt.wantCommitted[p] {
					t.Errorf("partition %d: read_committed %q, want %q", p, got, tt.wantCommitted[p])
				}
				if got := keys(l.ReadUncommitted(p)); got != tt.wantAll[p] {
					t.Errorf("partition %d: read_uncommitted %q, want %q", p, got, tt.wantAll[p])
				}
			}
			o, pc, c, a, pl := l.Counts()
			if got := [5]int{o, pc, c, a, pl}; got != tt.wantCounts {
				t.Errorf("counts (open, pre, committed, aborted, plain) %v, want %v", got, tt.wantCounts)
			}
		})
	}
}

func TestTransactionalID(t *testing.T) {
	tests := []struct {
		prefix  string
		subtask int
		cp      int64
		want    string
	}{
		{prefix: "kafka-sink", subtask: 0, cp: 1, want: "kafka-sink-0-1"},
		{prefix: "my-app", subtask: 12, cp: 9876543210, want: "my-app-12-9876543210"},
		{prefix: "", subtask: 3, cp: 0, want: "-3-0"},
	}
	for _, tt := range tests {
		if got := TransactionalID(tt.prefix, tt.subtask, tt.cp); got != tt.want {
			t.Errorf("TransactionalID(%q, %d, %d) = %q, want %q", tt.prefix, tt.subtask, tt.cp, got, tt.want)
		}
	}
}

func TestStateOf(t *testing.T) {
	l := NewTxnLog(NewTopic("out", 1))
	runSteps(t, l, []txnStep{
		{op: "plain", key: "p0", wantOff: 0},
		{op: "begin", id: "s-0-1"}, {op: "append", id: "s-0-1", key: "a", wantOff: 1},
		{op: "begin", id: "s-0-2"}, {op: "append", id: "s-0-2", key: "b", wantOff: 2},
		{op: "begin", id: "s-0-3"}, {op: "append", id: "s-0-3", key: "c", wantOff: 3},
		{op: "begin", id: "s-0-4"}, {op: "append", id: "s-0-4", key: "d", wantOff: 4},
		{op: "precommit", id: "s-0-2"}, {op: "commit", id: "s-0-3"}, {op: "abort", id: "s-0-4"},
	})
	// A record appended to the topic directly counts as non-transactional.
	l.Topic().Append(&messages.KafkaRecord{Key: "direct"})
	tests := []struct {
		off    int64
		want   TxnState
		wantID string
	}{
		{off: 0, want: TxnNone},
		{off: 1, want: TxnOpen, wantID: "s-0-1"},
		{off: 2, want: TxnPreCommitted, wantID: "s-0-2"},
		{off: 3, want: TxnCommitted, wantID: "s-0-3"},
		{off: 4, want: TxnAborted, wantID: "s-0-4"},
		{off: 5, want: TxnNone},
		{off: 6, want: 0},
		{off: -1, want: 0},
	}
	for _, tt := range tests {
		s, id := l.StateOf(0, tt.off)
		if s != tt.want || id != tt.wantID {
			t.Errorf("StateOf(0, %d) = %v %q, want %v %q", tt.off, s, id, tt.want, tt.wantID)
		}
	}
	if s, id := l.StateOf(1, 0); s != 0 || id != "" {
		t.Errorf("StateOf on a missing partition = %v %q", s, id)
	}
	o, pc, c, a, pl := l.Counts()
	if [5]int{o, pc, c, a, pl} != [5]int{1, 1, 1, 1, 2} {
		t.Errorf("counts %v", [5]int{o, pc, c, a, pl})
	}
	if s, ok := l.TransactionState("s-0-2"); !ok || s != TxnPreCommitted {
		t.Errorf("TransactionState(s-0-2) = %v %v", s, ok)
	}
	if _, ok := l.TransactionState("nobody"); ok {
		t.Error("TransactionState of an unknown id")
	}
	// After the direct append, a transactional append pads the metadata.
	runSteps(t, l, []txnStep{{op: "begin", id: "s-0-9"}, {op: "append", id: "s-0-9", key: "z", wantOff: 6}})
	if s, id := l.StateOf(0, 6); s != TxnOpen || id != "s-0-9" {
		t.Errorf("StateOf(0, 6) = %v %q", s, id)
	}
	if s, _ := l.StateOf(0, 5); s != TxnNone {
		t.Errorf("StateOf(0, 5) = %v after padding", s)
	}
	if got := []string{TxnOpen.String(), TxnPreCommitted.String(), TxnCommitted.String(), TxnAborted.String(), TxnNone.String(), TxnState(0).String()}; !slices.Equal(got, []string{"Open", "PreCommitted", "Committed", "Aborted", "None", "TxnState(0)"}) {
		t.Errorf("names %v", got)
	}
}

func TestFetchCommitted(t *testing.T) {
	l := NewTxnLog(NewTopic("out", 1))
	runSteps(t, l, []txnStep{
		{op: "plain", key: "p0", wantOff: 0},
		{op: "begin", id: "a"}, {op: "append", id: "a", key: "a1", wantOff: 1}, {op: "abort", id: "a"},
		{op: "plain", key: "p2", wantOff: 2},
		{op: "begin", id: "b"}, {op: "append", id: "b", key: "b3", wantOff: 3},
		{op: "plain", key: "p4", wantOff: 4},
	})
	tests := []struct {
		from     int64
		max      int
		want     string
		wantNext int64
	}{
		{from: 0, max: 1, want: "p0", wantNext: 1},
		{from: 1, max: 1, want: "p2", wantNext: 3}, // skips the aborted a1
		{from: 0, max: 10, want: "p0 p2", wantNext: 3},
		{from: 3, max: 10, want: "", wantNext: 3}, // at the LSO: wait
		{from: 4, max: 10, want: "", wantNext: 4},
		{from: -5, max: 1, want: "p0", wantNext: 1},
		{from: 0, max: 0, want: "", wantNext: 0},
	}
	for _, tt := range tests {
		recs, next := l.FetchCommitted(0, tt.from, tt.max)
		if keys(recs) != tt.want || next != tt.wantNext {
			t.Errorf("FetchCommitted(0, %d, %d) = %q next %d, want %q next %d", tt.from, tt.max, keys(recs), next, tt.want, tt.wantNext)
		}
	}
	if err := l.Commit("b"); err != nil {
		t.Fatal(err)
	}
	if recs, next := l.FetchCommitted(0, 3, 10); keys(recs) != "b3 p4" || next != 5 {
		t.Errorf("after the commit: %q next %d", keys(recs), next)
	}
	if recs, next := l.FetchCommitted(7, 0, 10); recs != nil || next != 0 {
		t.Error("fetch from a missing partition")
	}
	if l.ReadCommitted(3) != nil || l.ReadUncommitted(3) != nil || l.LastStableOffset(3) != -1 {
		t.Error("reads of a missing partition")
	}
	if l.AppendPlain(nil) != -1 || l.AppendPlain(&messages.KafkaRecord{Partition: 1}) != -1 {
		t.Error("AppendPlain of a nil record or a missing partition")
	}
	if _, err := l.Append("b", nil); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("Append(nil) = %v", err)
	}
}

// TestAbortLingering: KafkaWriter of subtask 0, prefix "k", restored from
// checkpoint 1 (so the aborter starts at 2). Checkpoint 1's transaction was
// committed; 2 was pre-committed but its checkpoint never completed; 3 was
// the open one when the job failed.
func TestAbortLingering(t *testing.T) {
	l := NewTxnLog(NewTopic("out", 1))
	runSteps(t, l, []txnStep{
		{op: "begin", id: "k-0-1"}, {op: "append", id: "k-0-1", key: "c1", wantOff: 0},
		{op: "precommit", id: "k-0-1"},
		{op: "begin", id: "k-0-2"}, {op: "append", id: "k-0-2", key: "c2", wantOff: 1},
		{op: "commit", id: "k-0-1"},
		{op: "precommit", id: "k-0-2"},
		{op: "begin", id: "k-0-3"}, {op: "append", id: "k-0-3", key: "c3", wantOff: 2},
	})
	if lso := l.LastStableOffset(0); lso != 1 {
		t.Fatalf("LSO before recovery %d, want 1 (k-0-2 at offset 1)", lso)
	}
	got := l.AbortLingering("k", 0, 2)
	if !slices.Equal(got, []string{"k-0-2", "k-0-3"}) {
		t.Errorf("aborted %v, want [k-0-2 k-0-3]", got)
	}
	if lso := l.LastStableOffset(0); lso != 3 || keys(l.ReadCommitted(0)) != "c1" {
		t.Errorf("after recovery: LSO %d read_committed %q, want 3 %q", lso, keys(l.ReadCommitted(0)), "c1")
	}
	// The restored committable of checkpoint 1 is committed again: no error.
	if err := l.Commit("k-0-1"); err != nil {
		t.Errorf("re-commit of k-0-1: %v", err)
	}
	// The aborted, fenced k-0-2 cannot be committed any more.
	if err := l.Commit("k-0-2"); !errors.Is(err, ErrProducerFenced) {
		t.Errorf("commit of fenced k-0-2: %v", err)
	}
	// The probe registered k-0-4; the writer's new transaction uses it.
	runSteps(t, l, []txnStep{{op: "begin", id: "k-0-4"}, {op: "append", id: "k-0-4", key: "c4", wantOff: 3}, {op: "commit", id: "k-0-4"}})
	if got := keys(l.ReadCommitted(0)); got != "c1 c4" {
		t.Errorf("read_committed %q, want %q", got, "c1 c4")
	}
	// Probing the same range again finds only used, finished ids: nothing to
	// abort; it goes on to k-0-5, unused, and stops.
	if got := l.AbortLingering("k", 0, 2); len(got) != 0 {
		t.Errorf("second probe aborted %v", got)
	}

	// A gap stops the probe: k-0-7 was never initialised, so k-0-8 lingers and
	// keeps holding the LSO.
	g := NewTxnLog(NewTopic("out", 1))
	runSteps(t, g, []txnStep{{op: "begin", id: "k-0-8"}, {op: "append", id: "k-0-8", key: "x", wantOff: 0}})
	if got := g.AbortLingering("k", 0, 7); len(got) != 0 {
		t.Errorf("probe across a gap aborted %v", got)
	}
	if s, _ := g.TransactionState("k-0-8"); s != TxnOpen || g.LastStableOffset(0) != 0 {
		t.Errorf("k-0-8 %v, LSO %d: should linger", s, g.LastStableOffset(0))
	}
	// KafkaWriter fills gaps with initialised ids, which keeps the chain.
	h := NewTxnLog(NewTopic("out", 1))
	runSteps(t, h, []txnStep{
		{op: "init", id: "k-0-7"},
		{op: "begin", id: "k-0-8"}, {op: "append", id: "k-0-8", key: "x", wantOff: 0},
	})
	if got := h.AbortLingering("k", 0, 7); !slices.Equal(got, []string{"k-0-8"}) {
		t.Errorf("probe over a filled gap aborted %v, want [k-0-8]", got)
	}
}

// TestAbortLingeringDownscale: a job ran with parallelism 4 and restarts with
// 2 from checkpoint 1 (start 2). Subtask 0 probes subtasks 0, 2, 4 (stopping
// at 4, which has no transaction 2); subtask 1 probes 1 and 3, then 5.
func TestAbortLingeringDownscale(t *testing.T) {
	l := NewTxnLog(NewTopic("out", 1))
	var steps []txnStep
	off := int64(0)
	for s := 0; s < 4; s++ {
		id := TransactionalID("k", s, 2)
		steps = append(steps, txnStep{op: "begin", id: id}, txnStep{op: "append", id: id, key: id, wantOff: off})
		off++
	}
	runSteps(t, l, steps)
	if got := l.AbortLingeringTransactions([]string{"k"}, 0, 2, 2); !slices.Equal(got, []string{"k-0-2", "k-2-2"}) {
		t.Errorf("subtask 0 aborted %v, want [k-0-2 k-2-2]", got)
	}
	if got := l.AbortLingeringTransactions([]string{"k", "old-prefix"}, 1, 2, 2); !slices.Equal(got, []string{"k-1-2", "k-3-2"}) {
		t.Errorf("subtask 1 aborted %v, want [k-1-2 k-3-2]", got)
	}
	if lso := l.LastStableOffset(0); lso != 4 {
		t.Errorf("LSO %d, want 4", lso)
	}
	// If subtask 0 itself has no transaction at the start id, the search over
	// subtasks stops there even if subtask 2 has one (Flink's assumption).
	m := NewTxnLog(NewTopic("out", 1))
	runSteps(t, m, []txnStep{{op: "begin", id: "k-2-2"}, {op: "append", id: "k-2-2", key: "y", wantOff: 0}})
	if got := m.AbortLingeringTransactions([]string{"k"}, 0, 2, 2); len(got) != 0 {
		t.Errorf("aborted %v past an unused subtask", got)
	}
	// parallelism 0 probes the subtask alone instead of looping.
	if got := m.AbortLingeringTransactions([]string{"k"}, 2, 0, 2); !slices.Equal(got, []string{"k-2-2"}) {
		t.Errorf("parallelism 0: %v", got)
	}
}

// The naive model for the property test: every transaction instance with its
// state, every record with its instance (-1 for plain), per partition.
type naiveTxn struct {
	id    string
	epoch int
	state TxnState
}

type naiveLog struct {
	txns  []naiveTxn
	epoch map[string]int // absent: never initialised
	last  map[string]int // index into txns, absent: none begun
	recs  [][]int        // per partition: txn index or -1
	keys  [][]string
}

func (m *naiveLog) init(id string) (used, aborted bool) {
	e, ok := m.epoch[id]
	if !ok {
		m.epoch[id] = 0
		return false, false
	}
	m.epoch[id] = e + 1
	if i, ok := m.last[id]; ok && (m.txns[i].state == TxnOpen || m.txns[i].state == TxnPreCommitted) {
		m.txns[i].state = TxnAborted
		aborted = true
	}
	return true, aborted
}

func (m *naiveLog) end(id string, to TxnState) error {
	e, ok := m.epoch[id]
	if !ok {
		return ErrInvalidProducerIDMapping
	}
	i, ok := m.last[id]
	if !ok {
		return ErrInvalidTxnState
	}
	t := &m.txns[i]
	if t.epoch != e {
		return ErrProducerFenced
	}
	switch {
	case t.state == to:
		return nil
	case t.state == TxnOpen || t.state == TxnPreCommitted:
		t.state = to
		return nil
	}
	return ErrInvalidTxnState
}

// readCommitted: records of committed transactions and plain records, in
// offset order, cut at the first record of a transaction still in progress.
func (m *naiveLog) readCommitted(p int) (string, int64) {
	var out []string
	for off, ti := range m.recs[p] {
		if ti >= 0 {
			s := m.txns[ti].state
			if s == TxnOpen || s == TxnPreCommitted {
				return strings.Join(out, " "), int64(off)
			}
			if s != TxnCommitted {
				continue
			}
		}
		out = append(out, m.keys[p][off])
	}
	return strings.Join(out, " "), int64(len(m.recs[p]))
}

func TestTxnLogVsNaiveModel(t *testing.T) {
	var ids []string
	for s := 0; s < 2; s++ {
		for c := int64(1); c <= 3; c++ {
			ids = append(ids, TransactionalID("t", s, c))
		}
	}
	const parts = 2
	rapid.Check(t, func(rt *rapid.T) {
		l := NewTxnLog(NewTopic("out", parts))
		m := &naiveLog{epoch: map[string]int{}, last: map[string]int{}, recs: make([][]int, parts), keys: make([][]string, parts)}
		n := rapid.IntRange(1, 60).Draw(rt, "ops")
		for k := 0; k < n; k++ {
			op := rapid.SampledFrom([]string{"begin", "init", "append", "append", "append", "plain", "precommit", "commit", "abort", "abortLingering"}).Draw(rt, "op")
			id := rapid.SampledFrom(ids).Draw(rt, "id")
			p := rapid.IntRange(0, parts-1).Draw(rt, "partition")
			key := "r" + strconv.Itoa(k)
			var got, want error
			switch op {
			case "begin":
				got = l.Begin(id)
				m.init(id)
				m.txns = append(m.txns, naiveTxn{id: id, epoch: m.epoch[id], state: TxnOpen})
				m.last[id] = len(m.txns) - 1
			case "init":
				got = l.InitTransactions(id)
				m.init(id)
			case "append":
				_, got = l.Append(id, &messages.KafkaRecord{Partition: int32(p), Key: key})
				e, ok := m.epoch[id]
				i, begun := m.last[id]
				switch {
				case !ok:
					want = ErrTransactionsNotInitialized
				case !begun || m.txns[i].epoch != e || m.txns[i].state == TxnCommitted || m.txns[i].state == TxnAborted:
					want = ErrNotInTransaction
				case m.txns[i].state == TxnPreCommitted:
					want = ErrTxnPreCommitted
				default:
					m.recs[p] = append(m.recs[p], i)
					m.keys[p] = append(m.keys[p], key)
				}
			case "plain":
				l.AppendPlain(&messages.KafkaRecord{Partition: int32(p), Key: key})
				m.recs[p] = append(m.recs[p], -1)
				m.keys[p] = append(m.keys[p], key)
			case "precommit":
				got, want = l.PreCommit(id), m.end(id, TxnPreCommitted)
			case "commit":
				got, want = l.Commit(id), m.end(id, TxnCommitted)
			case "abort":
				got, want = l.Abort(id), m.end(id, TxnAborted)
			case "abortLingering":
				sub := rapid.IntRange(0, 1).Draw(rt, "subtask")
				from := rapid.Int64Range(1, 3).Draw(rt, "from")
				gotIDs := l.AbortLingering("t", sub, from)
				var wantIDs []string
				for c := from; ; c++ {
					cid := TransactionalID("t", sub, c)
					used, aborted := m.init(cid)
					if !used {
						break
					}
					if aborted {
						wantIDs = append(wantIDs, cid)
					}
				}
				if !slices.Equal(gotIDs, wantIDs) {
					rt.Fatalf("op %d AbortLingering(t, %d, %d) = %v, want %v", k, sub, from, gotIDs, wantIDs)
				}
			}
			if !errors.Is(got, want) {
				rt.Fatalf("op %d %s %s: error %v, want %v", k, op, id, got, want)
			}
			// The visible state after every operation.
			var counts [TxnNone + 1]int
			for q := 0; q < parts; q++ {
				wantRC, wantLSO := m.readCommitted(q)
				if got := keys(l.ReadCommitted(q)); got != wantRC {
					rt.Fatalf("op %d: partition %d read_committed %q, want %q", k, q, got, wantRC)
				}
				if got := l.LastStableOffset(q); got != wantLSO {
					rt.Fatalf("op %d: partition %d LSO %d, want %d", k, q, got, wantLSO)
				}
				if got := keys(l.ReadUncommitted(q)); got != strings.Join(m.keys[q], " ") {
					rt.Fatalf("op %d: partition %d read_uncommitted %q", k, q, got)
				}
				for off, ti := range m.recs[q] {
					ws, wid := TxnNone, ""
					if ti >= 0 {
						ws, wid = m.txns[ti].state, m.txns[ti].id
					}
					counts[ws]++
					if s, id := l.StateOf(q, int64(off)); s != ws || id != wid {
						rt.Fatalf("op %d: StateOf(%d, %d) = %v %q, want %v %q", k, q, off, s, id, ws, wid)
					}
				}
			}
			o, pc, c, a, pl := l.Counts()
			if [5]int{o, pc, c, a, pl} != [5]int{counts[TxnOpen], counts[TxnPreCommitted], counts[TxnCommitted], counts[TxnAborted], counts[TxnNone]} {
				rt.Fatalf("op %d: counts %v, want %v", k, [5]int{o, pc, c, a, pl}, counts[1:])
			}
		}
	})
}

// TestTxnPurity keeps txn.go pure: no actor library, clock, goroutines or
// random source.
func TestTxnPurity(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "txn.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasPrefix(path, "github.com/anthdm/hollywood") || strings.HasPrefix(path, "math/rand") || path == "time" || path == "sync" {
			t.Errorf("txn.go imports %s", path)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if _, ok := n.(*ast.GoStmt); ok {
			t.Error("txn.go starts a goroutine")
		}
		return true
	})
}
