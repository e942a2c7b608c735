package kafka

import "github.com/flinksim/flinksim/messages"

// Writer is the KafkaSink of one sink subtask: its KafkaWriter with the
// KafkaCommitter and, on recovery, the TransactionAborter
// (flink-connector-kafka). With delivery guarantee exactly-once it writes
// into one Kafka transaction per subtask and checkpoint, named
// PREFIX-SUBTASK-CHECKPOINT (TransactionalID): pre-committed on the barrier
// (prepareCommit), committed when the checkpoint completes
// (notifyCheckpointComplete), committed again or aborted on recovery. With
// none or at-least-once it writes outside any transaction.
//
// It returns the broker requests to send, in the order they must arrive;
// the caller sends them over one ordered connection.
type Writer struct {
	prefix       string
	subtask      int
	exactlyOnce  bool
	txn          string // the open transaction written into
	precommitted []committable
}

type committable struct {
	id         string
	checkpoint int64
}

// NewWriter returns the sink writer of subtask index.
func NewWriter(prefix string, subtask int, exactlyOnce bool) *Writer {
	return &Writer{prefix: prefix, subtask: subtask, exactlyOnce: exactlyOnce}
}

// ExactlyOnce reports whether the writer uses transactions.
func (w *Writer) ExactlyOnce() bool { return w.exactlyOnce }

// Open is the open transaction ("" without one).
func (w *Writer) Open() string { return w.txn }

func writerTxn(op messages.TxnRequest_Op, id string) *messages.TxnRequest {
	return &messages.TxnRequest{Op: op, TransactionalId: id}
}

// Init is the writer's start (KafkaSink recovery): commit what the restored
// checkpoint pre-committed (restored), abort what later checkpoints of the
// old subtasks this one takes over left open (TransactionAborter: from
// checkpoint restoredID+1, or 1 on a fresh start, for old subtasks index,
// index+parallelism, ... below restoredParallelism), then begin the next
// transaction. Only exactly-once writers send anything.
func (w *Writer) Init(restored []string, restoredID int64, parallelism, restoredParallelism int, fresh bool) []*messages.TxnRequest {
	if !w.exactlyOnce {
		return nil
	}
	var out []*messages.TxnRequest
	next, oldP := int64(1), parallelism
	if !fresh {
		for _, id := range restored {
			out = append(out, writerTxn(messages.TxnRequest_COMMIT, id))
		}
		next, oldP = restoredID+1, restoredParallelism
	}
	for old := w.subtask; old < max(oldP, w.subtask+1); old += parallelism {
		if brokenRecovery {
			// the deliberately broken build (brokenbuild_abort.go)
			out = append(out, writerTxn(messages.TxnRequest_COMMIT, TransactionalID(w.prefix, old, next)))
			continue
		}
		out = append(out, &messages.TxnRequest{Op: messages.TxnRequest_ABORT_LINGERING, Prefix: w.prefix, Subtask: int32(old), FromCheckpoint: next})
	}
	return append(out, w.begin(next))
}

func (w *Writer) begin(checkpointID int64) *messages.TxnRequest {
	w.txn = TransactionalID(w.prefix, w.subtask, checkpointID)
	return writerTxn(messages.TxnRequest_BEGIN, w.txn)
}

// Produce wraps records for the broker: in the open transaction for an
// exactly-once writer, outside any otherwise.
func (w *Writer) Produce(topic string, records []*messages.KafkaRecord) *messages.Produce {
	p := &messages.Produce{Topic: topic, Records: records}
	if w.exactlyOnce {
		p.TransactionalId = w.txn
	}
	return p
}

// PrepareCommit is the snapshot of checkpoint id (KafkaWriter.prepareCommit
// and snapshotState): the open transaction is pre-committed and kept as a
// committable, the next one begins. It returns the requests and every
// committable not yet committed (what the checkpoint stores).
func (w *Writer) PrepareCommit(id int64) (reqs []*messages.TxnRequest, committables []string) {
	if !w.exactlyOnce {
		return nil, nil
	}
	reqs = append(reqs, writerTxn(messages.TxnRequest_PRE_COMMIT, w.txn))
	w.precommitted = append(w.precommitted, committable{id: w.txn, checkpoint: id})
	for _, p := range w.precommitted {
		committables = append(committables, p.id)
	}
	return append(reqs, w.begin(id+1)), committables
}

// Commit is notifyCheckpointComplete(id): the committer commits every
// transaction pre-committed for a checkpoint up to id.
func (w *Writer) Commit(id int64) []*messages.TxnRequest {
	if !w.exactlyOnce {
		return nil
	}
	var out []*messages.TxnRequest
	kept := w.precommitted[:0]
	for _, p := range w.precommitted {
		if p.checkpoint <= id {
			out = append(out, writerTxn(messages.TxnRequest_COMMIT, p.id))
			continue
		}
		kept = append(kept, p)
	}
	w.precommitted = kept
	return out
}

// Abort is KafkaWriter.close: the open transaction is aborted.
func (w *Writer) Abort() []*messages.TxnRequest {
	if !w.exactlyOnce || w.txn == "" {
		return nil
	}
	return []*messages.TxnRequest{writerTxn(messages.TxnRequest_ABORT, w.txn)}
}

// EndInputPreCommit pre-commits the open transaction at the end of a
// bounded input when checkpointing is on but no final checkpoint will come
// (execution.checkpointing.checkpoints-after-tasks-finish off): the
// committable waits for a checkpoint that never completes
// (CommitterOperator.endInput commits only without checkpointing), so the
// transaction stays open in the broker until its transaction.timeout.ms.
func (w *Writer) EndInputPreCommit() []*messages.TxnRequest {
	if !w.exactlyOnce || w.txn == "" {
		return nil
	}
	id := w.txn
	w.txn = ""
	return []*messages.TxnRequest{writerTxn(messages.TxnRequest_PRE_COMMIT, id)}
}

// EndInput commits the open transaction at the end of a bounded input
// without checkpoints (CommitterOperator.endInput).
func (w *Writer) EndInput() []*messages.TxnRequest {
	if !w.exactlyOnce {
		return nil
	}
	return []*messages.TxnRequest{writerTxn(messages.TxnRequest_PRE_COMMIT, w.txn), writerTxn(messages.TxnRequest_COMMIT, w.txn)}
}
