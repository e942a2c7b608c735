package kafka

import (
	"encoding/json"

	"github.com/flinksim/flinksim/messages"
)

// ResultID is the identity of one record of the sink topic, for counting
// the results a consumer sees more than once (an at-least-once sink replaying
// after a failover, or a read_uncommitted consumer reading an aborted
// transaction and its retry).
//
// A window result (a JSON object value with "key", "window_start",
// "window_end" and "firing", the last three integers) is identified by
// (key, window_start, window_end, firing): the value may differ between two
// emissions of the same firing only if the job is not deterministic, and a
// late firing (firing 2, 3, ...) is a new result, not a duplicate. Any other
// record (a process-function output {"key","value","timestamp"}, an unchained
// sink's {"key","timestamp","value"}, anything that is not such JSON) is
// identified by its record key and its whole value bytes.
type ResultID struct {
	Window bool   // a window result
	Key    string // window result: the value's "key"; otherwise the record key
	// WindowStart, WindowEnd (ms) and Firing: window results only.
	WindowStart, WindowEnd, Firing int64
	// Value is the whole value of a record that is not a window result.
	Value string
}

// windowResult is the part of a window result's JSON value that identifies
// it; a nil field means absent.
type windowResult struct {
	Key         *string `json:"key"`
	WindowStart *int64  `json:"window_start"`
	WindowEnd   *int64  `json:"window_end"`
	Firing      *int64  `json:"firing"`
}

// IdentityOf is the identity of r (see ResultID). r must not be nil. Cost:
// one JSON decode of the value.
func IdentityOf(r *messages.KafkaRecord) ResultID {
	var w windowResult
	if json.Unmarshal(r.Value, &w) == nil && w.Key != nil && w.WindowStart != nil && w.WindowEnd != nil && w.Firing != nil {
		return ResultID{Window: true, Key: *w.Key, WindowStart: *w.WindowStart, WindowEnd: *w.WindowEnd, Firing: *w.Firing}
	}
	return ResultID{Key: r.Key, Value: string(r.Value)}
}
