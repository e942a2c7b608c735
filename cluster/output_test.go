package cluster

import (
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/vt"
)

// outputByRecount is the oracle for Session.Output: the whole view read
// again from the log start and its duplicates counted by
// kafka.CountDuplicates, as the summary counts them at the end.
func outputByRecount(s *Session, isolation string) (visible, duplicates int64) {
	sink := s.broker.SinkLog()
	recs := sink.ReadUncommitted(0)
	if isolation == "read_committed" {
		recs = sink.ReadCommitted(0)
	}
	var view []*messages.KafkaRecord
	for _, r := range recs {
		if r.Offset >= s.tally.OutputViewFrom {
			view = append(view, r)
		}
	}
	return int64(len(view)), countDuplicates(view)
}

// Session.Output reads only what became visible since its last call; at
// every 700 ms of a run with a TaskManager killed (replayed results, aborted
// transactions) and the isolation level switched now and then, it answers
// what a recount of the whole topic answers, and at the end what the
// summary reports.
func TestOutputIncrementalEqualsRecount(t *testing.T) {
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			cfg := config.Default()
			for _, kv := range [][2]string{{"sim.duration", "3 min"}, {"execution.checkpointing.interval", "5 s"},
				{"sink.delivery-guarantee", guarantee}, {"restart-strategy.type", "fixed-delay"},
				{"restart-strategy.fixed-delay.attempts", "3"}, {"job.window.size", "10 s"}} {
				if err := cfg.Set(kv[0], kv[1]); err != nil {
					t.Fatal(err)
				}
			}
			kill, err := action.Parse("at=67s kill-taskmanager tm-1")
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewPlainSession(cfg, Options{Log: io.Discard, Actions: []action.Action{kill}})
			if err != nil {
				t.Fatal(err)
			}
			isolations := []string{"read_uncommitted", "read_committed"}
			var sawDuplicates, sawUncommitted bool
			calls := 0
			for at := vt.Time(700_000); !s.Status().Ended; at += 700_000 {
				s.RunUntil(at)
				iso := isolations[(calls/9)%2] // a run of calls with one, then the other
				calls++
				got := s.Output(iso)
				visible, dups := outputByRecount(s, iso)
				if got.Visible != visible || got.Duplicates != dups {
					t.Fatalf("at %s (%s): incremental %d visible, %d duplicates; recount %d, %d", s.Status().Now, iso,
						got.Visible, got.Duplicates, visible, dups)
				}
				sawDuplicates = sawDuplicates || dups > 0
				sawUncommitted = sawUncommitted || got.Uncommitted > 0
			}
			res := s.Finish()
			end := s.Output(res.OutputIsolation)
			if end.Visible != int64(len(res.Sink)) || end.Duplicates != res.Duplicates {
				t.Fatalf("at the end: %d visible, %d duplicates; the summary says %d, %d", end.Visible, end.Duplicates,
					len(res.Sink), res.Duplicates)
			}
			if !sawDuplicates {
				t.Fatal("no duplicates were ever visible: the scenario does not test the counting of duplicates")
			}
			if guarantee == "exactly-once" && !sawUncommitted {
				t.Fatal("no transaction was ever open at a call: the scenario does not test read_committed")
			}
		})
	}
}

// resultSet answers as a plain map of identities does, through many
// merges of its recent map into the sorted slice.
func TestResultSetAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	set := newResultSet()
	oracle := map[kafka.ResultID]bool{}
	dups := 0
	for i := 0; i < 200_000; i++ {
		var id kafka.ResultID
		if rng.IntN(50) == 0 {
			id = kafka.ResultID{Key: "k" + strconv.Itoa(rng.IntN(40)), Value: strconv.Itoa(rng.IntN(40))}
		} else {
			start := int64(rng.IntN(300)) * 60_000
			id = kafka.ResultID{Window: true, Key: "user-" + strconv.Itoa(rng.IntN(300)), WindowStart: start,
				WindowEnd: start + 60_000*int64(1+rng.IntN(2)), Firing: int64(1 + rng.IntN(3))}
		}
		want := !oracle[id]
		oracle[id] = true
		if got := set.add(id); got != want {
			t.Fatalf("add #%d %+v = %v, a map says %v", i, id, got, want)
		}
		if !want {
			dups++
		}
	}
	if len(set.sorted) < 100_000 || dups < 10_000 {
		t.Fatalf("%d identities merged, %d duplicates: the test does not exercise the set", len(set.sorted), dups)
	}
}

// countDuplicates is the recount's oracle: the records of a consumer's view
// whose identity (kafka.IdentityOf) appeared at an earlier position.
func countDuplicates(recs []*messages.KafkaRecord) (duplicates int64) {
	seen := make(map[kafka.ResultID]bool, len(recs))
	for _, r := range recs {
		if id := kafka.IdentityOf(r); seen[id] {
			duplicates++
		} else {
			seen[id] = true
		}
	}
	return duplicates
}
