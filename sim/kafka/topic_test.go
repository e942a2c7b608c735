package kafka

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// A record reads back as appended: offsets per partition, keys interned,
// values copied into the arena (an empty value reads as nil, a value larger
// than a chunk gets a chunk of its own), each read a new record.
func TestTopicRoundTrip(t *testing.T) {
	tp := NewTopic("t", 3)
	big := bytes.Repeat([]byte("x"), arenaChunk+10)
	var want [3][]*messages.KafkaRecord
	for i := 0; i < 3000; i++ {
		p := i % 3
		v := []byte(strings.Repeat("v", i%50))
		if i == 1500 {
			v = big
		}
		r := &messages.KafkaRecord{Partition: int32(p), Timestamp: int64(i), Key: []string{"a", "b", ""}[i%3], Value: v}
		off := tp.Append(r)
		if off != int64(len(want[p])) || r.Offset != off {
			t.Fatalf("record %d: offset %d (set %d), want %d", i, off, r.Offset, len(want[p]))
		}
		want[p] = append(want[p], &messages.KafkaRecord{Partition: r.Partition, Offset: off, Timestamp: r.Timestamp, Key: r.Key, Value: append([]byte(nil), v...)})
		for j := range v {
			v[j] = '!' // the caller may reuse its slice: the topic copied it
		}
	}
	if tp.Total() != 3000 || tp.EndOffset(1) != 1000 || tp.LogStartOffset(2) != 0 || tp.NumPartitions() != 3 {
		t.Fatalf("Total %d EndOffset(1) %d", tp.Total(), tp.EndOffset(1))
	}
	if len(tp.keys) != 3 {
		t.Errorf("%d interned keys, want 3", len(tp.keys))
	}
	for p := range 3 {
		got := tp.Read(p, -5, 1<<30)
		if len(got) != len(want[p]) {
			t.Fatalf("partition %d: %d records", p, len(got))
		}
		for i, r := range got {
			w := want[p][i]
			if r.Partition != w.Partition || r.Offset != w.Offset || r.Timestamp != w.Timestamp || r.Key != w.Key || !bytes.Equal(r.Value, w.Value) {
				t.Fatalf("partition %d record %d = %v, want %v", p, i, r, w)
			}
			if len(w.Value) == 0 && r.Value != nil {
				t.Errorf("empty value read as %q", r.Value)
			}
			if cap(r.Value) != len(r.Value) {
				t.Errorf("value capacity %d beyond its length %d: an append would write into the arena", cap(r.Value), len(r.Value))
			}
		}
		if tp.Read(p, 1000, 5) != nil {
			t.Errorf("read at the end returned records")
		}
	}
	a, b := tp.Read(0, 7, 1)[0], tp.Read(0, 7, 1)[0]
	if a == b {
		t.Errorf("two reads returned the same record")
	}
}
