package kafka

import (
	"strconv"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

func rec(key, value string) *messages.KafkaRecord {
	return &messages.KafkaRecord{Key: key, Value: []byte(value)}
}

func TestIdentityOf(t *testing.T) {
	tests := []struct {
		name string
		give *messages.KafkaRecord
		want ResultID
	}{
		{"window result", rec("u1", `{"key":"u1","window_start":0,"window_end":60000,"value":3,"firing":1}`),
			ResultID{Window: true, Key: "u1", WindowStart: 0, WindowEnd: 60000, Firing: 1}},
		{"window result: the value's key, not the record's", rec("other", `{"key":"u1","window_start":-5000,"window_end":0,"value":1.5,"firing":2}`),
			ResultID{Window: true, Key: "u1", WindowStart: -5000, WindowEnd: 0, Firing: 2}},
		{"process-function output", rec("u1", `{"key":"u1","value":7,"timestamp":1700000000123}`),
			ResultID{Key: "u1", Value: `{"key":"u1","value":7,"timestamp":1700000000123}`}},
		{"unchained sink", rec("u1", `{"key":"u1","timestamp":59999,"value":3}`),
			ResultID{Key: "u1", Value: `{"key":"u1","timestamp":59999,"value":3}`}},
		{"no firing: not a window result", rec("u1", `{"key":"u1","window_start":0,"window_end":60000,"value":3}`),
			ResultID{Key: "u1", Value: `{"key":"u1","window_start":0,"window_end":60000,"value":3}`}},
		{"fractional window bound: not a window result", rec("u1", `{"key":"u1","window_start":0.5,"window_end":60000,"value":3,"firing":1}`),
			ResultID{Key: "u1", Value: `{"key":"u1","window_start":0.5,"window_end":60000,"value":3,"firing":1}`}},
		{"null key: not a window result", rec("", `{"key":null,"window_start":0,"window_end":60000,"value":3,"firing":1}`),
			ResultID{Value: `{"key":null,"window_start":0,"window_end":60000,"value":3,"firing":1}`}},
		{"not JSON", rec("k", `hello`), ResultID{Key: "k", Value: "hello"}},
		{"empty value", rec("k", ``), ResultID{Key: "k"}},
	}
	for _, tt := range tests {
		if got := IdentityOf(tt.give); got != tt.want {
			t.Errorf("%s: IdentityOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCountDuplicates(t *testing.T) {
	w := func(key string, start, end int64, value string, firing int) *messages.KafkaRecord {
		return rec(key, `{"key":"`+key+`","window_start":`+itoa(start)+`,"window_end":`+itoa(end)+`,"value":`+value+`,"firing":`+itoa(int64(firing))+`}`)
	}
	tests := []struct {
		name string
		give []*messages.KafkaRecord
		want int64
	}{
		{"nothing", nil, 0},
		{"distinct windows", []*messages.KafkaRecord{w("a", 0, 10, "1", 1), w("b", 0, 10, "1", 1), w("a", 10, 20, "1", 1)}, 0},
		{"the same firing twice", []*messages.KafkaRecord{w("a", 0, 10, "1", 1), w("a", 0, 10, "1", 1)}, 1},
		{"three times counts two", []*messages.KafkaRecord{w("a", 0, 10, "1", 1), w("b", 0, 10, "4", 1), w("a", 0, 10, "1", 1), w("a", 0, 10, "1", 1)}, 2},
		{"same firing, other value: still a duplicate", []*messages.KafkaRecord{w("a", 0, 10, "1", 1), w("a", 0, 10, "2", 1)}, 1},
		{"a late firing is a new result", []*messages.KafkaRecord{w("a", 0, 10, "1", 1), w("a", 0, 10, "2", 2)}, 0},
		{"same window end, other start", []*messages.KafkaRecord{w("a", 0, 10, "1", 1), w("a", 5, 10, "1", 1)}, 0},
		{"process outputs: equal bytes and key", []*messages.KafkaRecord{
			rec("a", `{"key":"a","value":1,"timestamp":5}`),
			rec("a", `{"key":"a","value":2,"timestamp":5}`),
			rec("a", `{"key":"a","value":1,"timestamp":5}`),
		}, 1},
		{"same value bytes, other record key", []*messages.KafkaRecord{rec("a", `x`), rec("b", `x`)}, 0},
		{"a window result and a record with the same key", []*messages.KafkaRecord{
			w("a", 0, 10, "1", 1), rec("a", `{"key":"a","timestamp":9,"value":1}`),
		}, 0},
		{"nil records skipped", []*messages.KafkaRecord{nil, rec("a", `x`), nil, rec("a", `x`)}, 1},
	}
	for _, tt := range tests {
		if got := CountDuplicates(tt.give); got != tt.want {
			t.Errorf("%s: CountDuplicates = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestTransactionInfo(t *testing.T) {
	l := NewTxnLog(NewTopic("out", 1))
	if _, ok := l.TransactionInfo("p-0-1"); ok {
		t.Fatal("TransactionInfo of an unknown id reported a transaction")
	}
	if err := l.InitTransactions("p-0-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.TransactionInfo("p-0-1"); ok {
		t.Fatal("TransactionInfo of an initialised id without a transaction reported one")
	}
	steps := []struct {
		do   func() error
		want TxnInfo
	}{
		{func() error { return l.Begin("p-0-1") }, TxnInfo{TxnOpen, 0}},
		{func() error { _, err := l.Append("p-0-1", &messages.KafkaRecord{}); return err }, TxnInfo{TxnOpen, 1}},
		{func() error { _, err := l.Append("p-0-1", &messages.KafkaRecord{}); return err }, TxnInfo{TxnOpen, 2}},
		{func() error { return l.PreCommit("p-0-1") }, TxnInfo{TxnPreCommitted, 2}},
		{func() error { return l.Commit("p-0-1") }, TxnInfo{TxnCommitted, 2}},
		// a new transaction under the same id: the latest one is reported
		{func() error { return l.Begin("p-0-1") }, TxnInfo{TxnOpen, 0}},
		{func() error { _, err := l.Append("p-0-1", &messages.KafkaRecord{}); return err }, TxnInfo{TxnOpen, 1}},
		// fenced by the next Begin: aborted, and a new one opens
		{func() error { return l.Begin("p-0-1") }, TxnInfo{TxnOpen, 0}},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got, ok := l.TransactionInfo("p-0-1"); !ok || got != s.want {
			t.Errorf("step %d: TransactionInfo = %+v, %v, want %+v", i, got, ok, s.want)
		}
	}
	if open, pre, committed, aborted, plain := l.Counts(); open != 0 || pre != 0 || committed != 2 || aborted != 1 || plain != 0 {
		t.Errorf("Counts = %d %d %d %d %d, want 0 0 2 1 0", open, pre, committed, aborted, plain)
	}
}

// CountDuplicates is the number of records of recs (a consumer's view, in
// the order it reads them) whose identity (IdentityOf) appeared at an earlier
// position: a result seen three times counts two duplicates. Nil records are
// skipped. Cost: O(len(recs)) decodes and map operations; the map is only
// probed, never iterated.
func CountDuplicates(recs []*messages.KafkaRecord) (duplicates int64) {
	seen := make(map[ResultID]struct{}, len(recs))
	for _, r := range recs {
		if r == nil {
			continue
		}
		id := IdentityOf(r)
		if _, ok := seen[id]; ok {
			duplicates++
			continue
		}
		seen[id] = struct{}{}
	}
	return duplicates
}
