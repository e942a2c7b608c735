package campaign

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/swarm"
)

// Seed 105 draws the Kafka connector's documented data-loss trap: the
// exactly-once sink with properties.transaction.timeout.ms set short, and a
// Kafka outage longer than it. The transactions open when the outage
// begins reach the timeout while it lasts; the broker's transaction
// coordinator aborts them (with their records), and the commit that comes
// when the broker is back fails (KafkaCommitter's "Unable to commit
// transaction ... Most likely the transaction has been aborted"): those
// results are lost, in Flink as here. The swarm counts that as expected,
// not as a broken exactly_once_output; without the outage to explain it,
// the same loss is one.
func TestSwarmSeed105KafkaTxnTimeoutIsExpected(t *testing.T) {
	sc := swarm.Generate(105)
	if len(sc.Faults) != 1 || sc.Faults[0].Kind != swarm.FaultKafkaTxnTimeout || sc.TransactionTimeout == 0 ||
		sc.Faults[0].Actions[0].Outage <= sc.TransactionTimeout {
		t.Fatalf("seed 105: %s (transaction timeout %s), want one kafka-txn-trap longer than it", sc.Summary(), sc.TransactionTimeout)
	}
	// in the log: the broker aborts each transaction transaction.timeout.ms
	// after it began, while the outage lasts, and the commit after it fails
	outageAt, outageEnd := sc.Faults[0].At.Microseconds(), sc.Faults[0].Until.Microseconds()
	begun := map[string]int64{}
	aborted := map[string]bool{}
	commitFailed := 0
	var bad []string
	watch := func(cfg config.Config, opt cluster.Options) (*cluster.Result, error) {
		inner := opt.Observe
		opt.Observe = func(ev *eventlog.LogEvent) {
			inner(ev)
			switch e := eventlog.Decode(ev).(type) {
			case eventlog.Transaction:
				switch {
				case e.Op == "begin":
					begun[e.TransactionalID] = ev.Vt
				case e.Note == eventlog.NoteTransactionTimedOut:
					if at := begun[e.TransactionalID] + sc.TransactionTimeout.Microseconds(); ev.Vt != at || ev.Vt < outageAt || ev.Vt >= outageEnd {
						bad = append(bad, fmt.Sprintf("%s aborted at %d, want its begin + %s = %d within the outage [%d, %d)", e.TransactionalID, ev.Vt, sc.TransactionTimeout, at, outageAt, outageEnd))
					}
					aborted[e.TransactionalID] = true
				}
			case eventlog.KafkaError:
				if e.Request == "commit" && aborted[e.TransactionalID] && ev.Vt == outageEnd {
					commitFailed++
				}
			}
		}
		return cluster.RunPlain(cfg, opt)
	}
	ref := RunScenario(cluster.RunPlain, &sc, true, 2*time.Minute, nil)
	run := RunScenario(watch, &sc, false, 2*time.Minute, nil)
	v := swarm.Check(&sc, ref, run)
	if v.Class != swarm.ClassOK || len(v.Expected) != 1 || v.Expected[0].Invariant != swarm.ExpTxnTimeoutLoss || !strings.Contains(v.Expected[0].What, "missing ") {
		t.Fatalf("seed 105: %s %v, expected %v; want ok with %s", v.Class, v.Violations, v.Expected, swarm.ExpTxnTimeoutLoss)
	}
	if len(bad) > 0 {
		t.Fatal(strings.Join(bad, "\n"))
	}
	if len(aborted) == 0 || commitFailed == 0 {
		t.Fatalf("transactions aborted for the timeout %v, commits of them failed as the broker came back: %d", aborted, commitFailed)
	}
	// the same loss with nothing to explain it is a broken invariant
	run.Obs.TimedOutInOutage = nil
	if v := swarm.Check(&sc, ref, run); v.Class != swarm.ClassSafety || v.Invariant() != swarm.InvExactlyOnce {
		t.Fatalf("without the outage's timed-out transactions: %s %s, want safety %s", v.Class, v.Invariant(), swarm.InvExactlyOnce)
	}
}
