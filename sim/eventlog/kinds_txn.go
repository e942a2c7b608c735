package eventlog

// Event kinds of the exactly-once KafkaSink as the broker sees it (the
// transaction coordinator). README.md documents each with its fields.
const (
	// KindTransaction: a transaction of the sink topic changed state, or a
	// request left it as it was (then with a note): op (begin, pre_commit,
	// commit, abort, abort_lingering), transactional_id, state (Open,
	// PreCommitted, Committed, Aborted), records (held by the transaction),
	// producer (the requesting actor), note.
	KindTransaction Kind = "transaction"
	// KindAbortLingering: TransactionAborter's probe for one prefix and
	// subtask ran: prefix, subtask, from_checkpoint, aborted (JSON array of
	// the transactional ids it aborted, in probe order), producer.
	KindAbortLingering Kind = "abort_lingering"
	// KindKafkaError: the broker refused a produce or transaction request:
	// request (produce, begin, pre_commit, commit, abort), transactional_id,
	// error (Kafka's error text), records (records dropped, produce only),
	// producer.
	KindKafkaError Kind = "kafka_error"
)
