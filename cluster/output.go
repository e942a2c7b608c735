package cluster

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kafka"
)

// OutputSummary is the sink topic as one consumer sees it at a moment of a
// run: the figures the summary line reports at the end (results_visible,
// results_uncommitted, duplicates), read while the run goes on.
type OutputSummary struct {
	// Isolation is the consumer's isolation.level: read_committed or
	// read_uncommitted.
	Isolation string `json:"isolation"`
	// FromOffset is where the output view starts: 0, or where the last job
	// started from a savepoint began writing (output_view).
	FromOffset int64 `json:"from_offset"`
	// Visible is the number of records the consumer reads from FromOffset.
	Visible int64 `json:"visible"`
	// Uncommitted is the number of sink records in transactions still in
	// progress (open or pre-committed), over the whole topic.
	Uncommitted int64 `json:"uncommitted"`
	// Duplicates is the number of visible records whose identity the
	// consumer read before (kafka.CountDuplicates).
	Duplicates int64 `json:"duplicates"`
}

// Output is what a consumer of the sink topic with the given isolation
// level ("" for the output consumer's: sim.output.isolation-level, or what
// a set action made it) sees now, from where the
// current output view starts: what the summary would report if the run
// ended here. Like Inspect it is answered between two steps and changes
// nothing; the broker's topics are read from the session's goroutine,
// which the driver's report of the last step orders after every write.
// Cost: one pass over the sink topic with a JSON decode per visible record.
func (s *Session) Output(isolation string) OutputSummary {
	if isolation == "" {
		isolation = string(s.cfg.OutputIsolation)
		if s.tally.OutputIsolation != "" {
			isolation = s.tally.OutputIsolation
		}
	}
	sink := s.broker.SinkLog()
	out := OutputSummary{Isolation: isolation, FromOffset: s.tally.OutputViewFrom}
	recs := sink.ReadUncommitted(0)
	if isolation == "read_committed" {
		recs = sink.ReadCommitted(0)
	}
	view := make([]*messages.KafkaRecord, 0, len(recs))
	for _, r := range recs {
		if r.Offset >= out.FromOffset {
			view = append(view, r)
		}
	}
	open, preCommitted, _, _, _ := sink.Counts()
	out.Visible = int64(len(view))
	out.Uncommitted = int64(open + preCommitted)
	out.Duplicates = kafka.CountDuplicates(view)
	return out
}
