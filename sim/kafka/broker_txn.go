package kafka

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// txnCoordinator is the broker side of the KafkaSink: produce requests into
// the sink topic (Kafka's ReplicaManager.appendRecords, with the producer
// epoch check of its ProducerStateManager) and the requests of Kafka's
// TransactionCoordinator (InitProducerId, EndTxn, the transaction timeout),
// as flink-connector-kafka's KafkaWriter, KafkaCommitter and
// TransactionAborter send them. The rules are TxnLog's, the sink topic's log
// that the Broker shares with it; this type decodes, applies and logs.
type txnCoordinator struct {
	cfg      *config.Config
	sink     *TxnLog
	owner    map[string]string // transactional id -> the producer (subtask) that began its latest transaction
	timers   int64             // transaction timeout timers set so far
	begun    map[string]int64  // transactional id -> timer of its latest transaction
	timerID  map[int64]string  // timer -> transactional id
	produced int64             // sink records accepted (plain or transactional)
	rejected int64             // sink records refused (produce_rejected)
	errs     int64             // transaction requests refused (txn_errors)
}

func newTxnCoordinator(cfg *config.Config, sink *TxnLog) txnCoordinator {
	return txnCoordinator{cfg: cfg, sink: sink, owner: map[string]string{}, begun: map[string]int64{}, timerID: map[int64]string{}}
}

// Notes of a transaction event for a request that changed nothing (Kafka
// answers a repeated EndTxn without an error) or that fenced a transaction.
const (
	noteAlreadyPreCommitted = "already pre-committed"
	noteAlreadyCommitted    = "already committed"
	noteAlreadyAborted      = "already aborted"
	noteFenced              = "fenced: InitProducerId aborted the transaction in progress under this id"
	noteTimedOut            = eventlog.NoteTransactionTimedOut
)

// produce appends a Produce's records to the sink topic: outside any
// transaction when transactional_id is "" (delivery guarantee none or
// at-least-once), else into the transaction in progress under that id. A
// record the broker refuses (no transaction in progress, a fenced producer,
// a pre-committed transaction, a partition that does not exist) is dropped
// and counted in produce_rejected; one kafka_error event per request names
// the first error and the number of records dropped. A fenced producer is
// told (see tellFenced).
func (c *txnCoordinator) produce(o *kernel.Out, from string, p *messages.Produce) {
	id := p.TransactionalId
	var first error
	var dropped int64
	for _, r := range p.Records {
		var err error
		switch {
		case id != "" && c.fenced(id, from):
			err = ErrProducerFenced
		case id != "":
			_, err = c.sink.Append(id, r)
		case r == nil:
			err = ErrInvalidRequest
		case c.sink.AppendPlain(r) < 0:
			err = ErrUnknownTopicOrPartition
		}
		if err != nil {
			if first == nil {
				first = err
			}
			dropped++
			continue
		}
		c.produced++
	}
	if dropped > 0 {
		c.rejected += dropped
		o.Log(eventlog.KafkaError{Request: "produce", TransactionalID: id, Error: first.Error(), HasRecords: true, Records: dropped, Producer: from})
		if first == ErrProducerFenced {
			c.tellFenced(o, from)
		}
	}
}

// ProducerFencedCause is how a sink task fails when the broker fenced its
// producer: KafkaWriter's WriterCallback keeps the send's
// ProducerFencedException and the task's mailbox throws it
// (checkAsyncException); a flush on the barrier throws the same.
const ProducerFencedCause = "java.io.IOException: One or more Kafka Producer send requests have encountered exception" +
	" (caused by org.apache.kafka.common.errors.ProducerFencedException: " +
	"There is a newer producer with the same transactionalId which fences the current one.)"

// tellFenced answers a produce or pre-commit the broker refused because a
// newer producer took the transactional id (a later attempt's
// InitProducerId, or its TransactionAborter's): Kafka answers
// PRODUCER_FENCED, and the writer's task fails with it, so the job recovers
// instead of losing the records. A task that has ended already ignores it
// (a closed KafkaWriter drops late callbacks).
func (c *txnCoordinator) tellFenced(o *kernel.Out, from string) {
	o.Send(from, vt.FromDuration(c.cfg.KafkaLatency()), &messages.Envelope_FailTask{FailTask: &messages.FailTask{Cause: ProducerFencedCause}})
}

// txnRequest applies one transaction request of the sink's producer from.
// BEGIN is initTransactions + beginTransaction (TxnLog.Begin: the id's
// epoch is bumped and a transaction still in progress under it is aborted,
// which is logged first with a note); PRE_COMMIT flushes; COMMIT and ABORT
// end the latest transaction under the id (a repeat is a no-op, logged with a
// note), and an ABORT or PRE_COMMIT of a fenced producer (fenced) is refused;
// ABORT_LINGERING runs TransactionAborter's probe for one prefix and
// subtask: its InitProducerId on each used id fences whoever used the id
// before, the current attempt too. A refused request logs kafka_error and
// counts in txn_errors; a fenced pre-commit is answered PRODUCER_FENCED
// (tellFenced), the other refusals get no answer (a fenced abort is the
// closing writer's, which KafkaWriter.abortCurrentProducer ignores).
func (c *txnCoordinator) txnRequest(o *kernel.Out, from string, m *messages.TxnRequest) {
	id := m.TransactionalId
	prev, had := c.sink.TransactionInfo(id)
	switch m.Op {
	case messages.TxnRequest_BEGIN:
		if err := c.sink.Begin(id); err != nil {
			c.txnError(o, from, "begin", id, err)
			return
		}
		c.owner[id] = from
		// the transaction coordinator aborts it if it is still open after
		// transaction.timeout.ms
		c.timers++
		c.begun[id] = c.timers
		c.timerID[c.timers] = id
		o.Timer(vt.FromDuration(c.cfg.TransactionTimeout), timerTxnTimeout, c.timers)
		if had && (prev.State == TxnOpen || prev.State == TxnPreCommitted) {
			c.logTxn(o, from, "begin", id, TxnInfo{State: TxnAborted, Records: prev.Records}, noteFenced)
		}
		c.logLatest(o, from, "begin", id, "")
	case messages.TxnRequest_PRE_COMMIT:
		if c.fenced(id, from) {
			c.txnError(o, from, "pre_commit", id, ErrProducerFenced)
			c.tellFenced(o, from)
			return
		}
		c.endTxn(o, from, "pre_commit", id, c.sink.PreCommit, had && prev.State == TxnPreCommitted, noteAlreadyPreCommitted)
	case messages.TxnRequest_COMMIT:
		c.endTxn(o, from, "commit", id, c.sink.Commit, had && prev.State == TxnCommitted, noteAlreadyCommitted)
	case messages.TxnRequest_ABORT:
		if c.fenced(id, from) {
			// KafkaWriter.close of a zombie attempt (its task cancelled
			// or its TaskManager lost) reaching the broker after the new
			// attempt began the same id again: EndTxn carries the old
			// producer epoch, so the coordinator refuses it with
			// PRODUCER_FENCED (KafkaWriter.abortCurrentProducer logs "fenced
			// while aborting") and the new attempt's transaction lives on
			c.txnError(o, from, "abort", id, ErrProducerFenced)
			return
		}
		c.endTxn(o, from, "abort", id, c.sink.Abort, had && prev.State == TxnAborted, noteAlreadyAborted)
	case messages.TxnRequest_ABORT_LINGERING:
		ids, probed := c.sink.AbortLingeringProbe(m.Prefix, int(m.Subtask), m.FromCheckpoint)
		for _, p := range probed {
			// the aborter's producer holds the newest epoch now
			// (TransactionAborter's initTransactions): a zombie's aborter
			// fences the current attempt's producer of that id
			c.owner[p] = from
		}
		for _, a := range ids {
			c.logLatest(o, from, "abort_lingering", a, "")
		}
		o.Log(eventlog.AbortLingering{Prefix: m.Prefix, Subtask: int64(m.Subtask), FromCheckpoint: m.FromCheckpoint, Aborted: eventlog.JSONStrings(ids), Producer: from})
	default:
		c.txnError(o, from, m.Op.String(), id, ErrInvalidRequest)
	}
}

// fenced reports whether a request of producer from under transactional id
// id carries an older producer epoch than the id's current one: another
// producer (a later attempt of the subtask) began the id's latest
// transaction, so its InitProducerId bumped the epoch after from's (a
// zombie's request still on its way when its task died). The producer name
// stands for Kafka's (producerId, epoch) pair: each attempt initialises the
// ids it begins once. COMMIT is not fenced this way: KafkaCommitter resumes a
// restored committable with the epoch it was stored with, whoever sends it;
// TxnLog refuses it when an InitProducerId bumped the epoch since.
func (c *txnCoordinator) fenced(id, from string) bool {
	owner := c.owner[id]
	return owner != "" && owner != from
}

// endTxn applies a pre-commit, commit or abort and logs the transaction's
// state; repeat says the transaction was already in the requested state, so
// the request changed nothing and is logged with note.
func (c *txnCoordinator) endTxn(o *kernel.Out, from, op, id string, apply func(string) error, repeat bool, note string) {
	if err := apply(id); err != nil {
		c.txnError(o, from, op, id, err)
		return
	}
	if !repeat {
		note = ""
	}
	c.logLatest(o, from, op, id, note)
}

// logLatest logs the latest transaction under id.
func (c *txnCoordinator) logLatest(o *kernel.Out, from, op, id, note string) {
	info, _ := c.sink.TransactionInfo(id)
	c.logTxn(o, from, op, id, info, note)
}

func (c *txnCoordinator) logTxn(o *kernel.Out, from, op, id string, info TxnInfo, note string) {
	o.Log(eventlog.Transaction{Op: op, TransactionalID: id, State: info.State.String(), Records: int64(info.Records), Producer: from, Note: note})
}

func (c *txnCoordinator) txnError(o *kernel.Out, from, op, id string, err error) {
	c.errs++
	o.Log(eventlog.KafkaError{Request: op, TransactionalID: id, Error: err.Error(), Producer: from})
}

// txnTimeout aborts the transaction begun with timer seq if it is still in
// progress: transaction.timeout.ms passed (Kafka's TransactionCoordinator
// aborts timed-out transactions; the LSO moves on, the records are never
// visible to read_committed).
func (c *txnCoordinator) txnTimeout(o *kernel.Out, seq int64) {
	id := c.timerID[seq]
	delete(c.timerID, seq)
	if c.begun[id] != seq {
		return // a newer transaction under the id
	}
	info, ok := c.sink.TransactionInfo(id)
	if !ok || (info.State != TxnOpen && info.State != TxnPreCommitted) {
		return
	}
	if err := c.sink.Abort(id); err != nil {
		c.txnError(o, "kafka", "abort", id, err)
		return
	}
	c.logLatest(o, "kafka", "abort", id, noteTimedOut)
}
