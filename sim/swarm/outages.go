package swarm

import (
	"math/rand/v2"
	"time"

	"github.com/flinksim/flinksim/sim/action"
)

// Bounds of the outages the swarm draws.
const (
	storageOutageMin = 500 * time.Millisecond
	kafkaOutageMin   = time.Second
	kafkaOutageMax   = 15 * time.Second // well below the producer's max.block.ms (60 s) and delivery.timeout.ms (120 s)
	// a kafka-txn-trap's transaction.timeout.ms is above the longest a
	// transaction stays open without it: the checkpoint timeout (10 s), three
	// intervals (checkpoints a storage outage fails within the tolerable
	// failures) and this margin
	txnTimeoutMarginMin = 10 * time.Second
	txnTimeoutMarginMax = 15 * time.Second
)

// outageFault draws an outage at t:
//
//   - of the checkpoint storage (with checkpointing), for up to two
//     checkpoint intervals and a second, so that it fails a checkpoint's
//     uploads or a few (each task declines with CHECKPOINT_ASYNC_EXCEPTION;
//     CheckpointFailureManager fails the job over past
//     execution.checkpointing.tolerable-failed-checkpoints, and a checkpoint
//     after the outage completes);
//   - of the Kafka broker, for 1-15 s: the sources fetch nothing and the
//     sink's requests wait, then both go on where they were (with the
//     sink's transaction.timeout.ms as KafkaSinkBuilder sets it, 1 h, no
//     transaction times out);
//   - with the exactly-once sink and a checkpoint timeout of 10 s, in a
//     third of the Kafka outages, once per scenario: Flink's documented
//     data-loss trap (the Kafka connector's "Fault Tolerance" caveat: a
//     transaction the broker aborts for transaction.timeout.ms before
//     Flink commits it is lost). properties.transaction.timeout.ms is set
//     above what any other fault keeps a transaction open, and the outage
//     lasts 3-8 s longer: the transaction open when it begins times out
//     while it lasts, and what it held is lost (KafkaCommitter: "Unable to
//     commit transaction ... Most likely the transaction has been aborted").
//     The swarm counts that loss as expected (Check: expected_transaction_timeout_loss).
func (s *Scenario) outageFault(r *rand.Rand, t time.Duration) Fault {
	w := []int{0, 1}
	if s.Checkpointing {
		w[0] = 1
	}
	kind := []FaultKind{FaultStorage, FaultKafka}[weighted(r, w...)]
	interval := time.Duration(s.IntervalMs) * time.Millisecond
	var d time.Duration
	a := action.Action{At: t}
	switch kind {
	case FaultStorage:
		d = between(r, storageOutageMin, 2*interval+time.Second)
		a.Verb = action.FailCheckpointStorage
	case FaultKafka:
		d = between(r, kafkaOutageMin, kafkaOutageMax)
		a.Verb = action.KafkaUnavailable
		if s.Guarantee == "exactly-once" && s.CheckpointTimeout == 10*time.Second && s.TransactionTimeout == 0 && r.IntN(3) == 0 {
			kind = FaultKafkaTxnTimeout
			s.TransactionTimeout = (s.CheckpointTimeout + 3*interval + between(r, txnTimeoutMarginMin, txnTimeoutMarginMax)).Truncate(time.Second)
			s.Settings = append(s.Settings, Setting{"properties.transaction.timeout.ms", short(s.TransactionTimeout)})
			d = s.TransactionTimeout + between(r, 3*time.Second, 8*time.Second)
		}
	}
	a.Outage = d
	return Fault{Kind: kind, At: t, Until: t + d, Actions: []action.Action{a}}
}
