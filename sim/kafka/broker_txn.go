package kafka

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// The broker side of the KafkaSink: produce requests into the sink topic and
// the transaction coordinator's requests (flink-connector-kafka's
// KafkaWriter, KafkaCommitter and TransactionAborter as the broker sees them).
// The rules are TxnLog's; this file decodes, applies and logs.

// Notes of a transaction event for a request that changed nothing (Kafka
// answers a repeated EndTxn without an error) or that fenced a transaction.
const (
	noteAlreadyPreCommitted = "already pre-committed"
	noteAlreadyCommitted    = "already committed"
	noteAlreadyAborted      = "already aborted"
	noteFenced              = "fenced: InitProducerId aborted the transaction in progress under this id"
	noteTimedOut            = "transaction.timeout.ms expired: the broker aborted it"
)

// produce appends a Produce's records to the sink topic: outside any
// transaction when transactional_id is "" (delivery guarantee none or
// at-least-once), else into the transaction in progress under that id. A
// record the broker refuses (no transaction in progress, a fenced producer,
// a pre-committed transaction, a partition that does not exist) is dropped
// and counted in produce_rejected; one kafka_error event per request names
// the first error and the number of records dropped. A fenced producer is
// told (see tellFenced).
func (k *Broker) produce(o *kernel.Out, from string, p *messages.Produce) {
	id := p.TransactionalId
	var first error
	var dropped int64
	for _, r := range p.Records {
		var err error
		switch {
		case id != "" && k.fenced(id, from):
			err = ErrProducerFenced
		case id != "":
			_, err = k.sink.Append(id, r)
		case r == nil:
			err = ErrInvalidRequest
		case k.sink.AppendPlain(r) < 0:
			err = ErrUnknownTopicOrPartition
		}
		if err != nil {
			if first == nil {
				first = err
			}
			dropped++
			continue
		}
		k.produced++
	}
	if dropped > 0 {
		k.rejected += dropped
		o.Log(eventlog.KafkaError{Request: "produce", TransactionalID: id, Error: first.Error(), HasRecords: true, Records: dropped, Producer: from})
		if first == ErrProducerFenced {
			k.tellFenced(o, from)
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
func (k *Broker) tellFenced(o *kernel.Out, from string) {
	o.Send(from, vt.FromDuration(k.cfg.KafkaLatency()), &messages.Envelope_FailTask{FailTask: &messages.FailTask{Cause: ProducerFencedCause}})
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
func (k *Broker) txnRequest(o *kernel.Out, from string, m *messages.TxnRequest) {
	id := m.TransactionalId
	prev, had := k.sink.TransactionInfo(id)
	switch m.Op {
	case messages.TxnRequest_BEGIN:
		if err := k.sink.Begin(id); err != nil {
			k.txnError(o, from, "begin", id, err)
			return
		}
		k.owner[id] = from
		// the transaction coordinator aborts it if it is still open after
		// transaction.timeout.ms
		k.txnTimers++
		k.txnBegun[id] = k.txnTimers
		k.txnTimerID[k.txnTimers] = id
		o.Timer(vt.FromDuration(k.cfg.TransactionTimeout), timerTxnTimeout, k.txnTimers)
		if had && (prev.State == TxnOpen || prev.State == TxnPreCommitted) {
			k.logTxn(o, from, "begin", id, TxnInfo{State: TxnAborted, Records: prev.Records}, noteFenced)
		}
		k.logLatest(o, from, "begin", id, "")
	case messages.TxnRequest_PRE_COMMIT:
		if k.fenced(id, from) {
			k.txnError(o, from, "pre_commit", id, ErrProducerFenced)
			k.tellFenced(o, from)
			return
		}
		k.endTxn(o, from, "pre_commit", id, k.sink.PreCommit, had && prev.State == TxnPreCommitted, noteAlreadyPreCommitted)
	case messages.TxnRequest_COMMIT:
		k.endTxn(o, from, "commit", id, k.sink.Commit, had && prev.State == TxnCommitted, noteAlreadyCommitted)
	case messages.TxnRequest_ABORT:
		if k.fenced(id, from) {
			// KafkaWriter.close of a zombie attempt (its task cancelled
			// or its TaskManager lost) reaching the broker after the new
			// attempt began the same id again: EndTxn carries the old
			// producer epoch, so the coordinator refuses it with
			// PRODUCER_FENCED (KafkaWriter.abortCurrentProducer logs "fenced
			// while aborting") and the new attempt's transaction lives on
			k.txnError(o, from, "abort", id, ErrProducerFenced)
			return
		}
		k.endTxn(o, from, "abort", id, k.sink.Abort, had && prev.State == TxnAborted, noteAlreadyAborted)
	case messages.TxnRequest_ABORT_LINGERING:
		ids, probed := k.sink.AbortLingeringProbe(m.Prefix, int(m.Subtask), m.FromCheckpoint)
		for _, p := range probed {
			// the aborter's producer holds the newest epoch now
			// (TransactionAborter's initTransactions): a zombie's aborter
			// fences the current attempt's producer of that id
			k.owner[p] = from
		}
		for _, a := range ids {
			k.logLatest(o, from, "abort_lingering", a, "")
		}
		o.Log(eventlog.AbortLingering{Prefix: m.Prefix, Subtask: int64(m.Subtask), FromCheckpoint: m.FromCheckpoint, Aborted: eventlog.JSONStrings(ids), Producer: from})
	default:
		k.txnError(o, from, m.Op.String(), id, ErrInvalidRequest)
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
func (k *Broker) fenced(id, from string) bool {
	owner := k.owner[id]
	return owner != "" && owner != from
}

// endTxn applies a pre-commit, commit or abort and logs the transaction's
// state; repeat says the transaction was already in the requested state, so
// the request changed nothing and is logged with note.
func (k *Broker) endTxn(o *kernel.Out, from, op, id string, apply func(string) error, repeat bool, note string) {
	if err := apply(id); err != nil {
		k.txnError(o, from, op, id, err)
		return
	}
	if !repeat {
		note = ""
	}
	k.logLatest(o, from, op, id, note)
}

// logLatest logs the latest transaction under id.
func (k *Broker) logLatest(o *kernel.Out, from, op, id, note string) {
	info, _ := k.sink.TransactionInfo(id)
	k.logTxn(o, from, op, id, info, note)
}

func (k *Broker) logTxn(o *kernel.Out, from, op, id string, info TxnInfo, note string) {
	o.Log(eventlog.Transaction{Op: op, TransactionalID: id, State: info.State.String(), Records: int64(info.Records), Producer: from, Note: note})
}

func (k *Broker) txnError(o *kernel.Out, from, op, id string, err error) {
	k.txnErrs++
	o.Log(eventlog.KafkaError{Request: op, TransactionalID: id, Error: err.Error(), Producer: from})
}

// txnTimeout aborts the transaction begun with timer seq if it is still in
// progress: transaction.timeout.ms passed (Kafka's TransactionCoordinator
// aborts timed-out transactions; the LSO moves on, the records are never
// visible to read_committed).
func (k *Broker) txnTimeout(o *kernel.Out, seq int64) {
	id := k.txnTimerID[seq]
	delete(k.txnTimerID, seq)
	if k.txnBegun[id] != seq {
		return // a newer transaction under the id
	}
	info, ok := k.sink.TransactionInfo(id)
	if !ok || (info.State != TxnOpen && info.State != TxnPreCommitted) {
		return
	}
	if err := k.sink.Abort(id); err != nil {
		k.txnError(o, "kafka", "abort", id, err)
		return
	}
	k.logLatest(o, "kafka", "abort", id, noteTimedOut)
}
