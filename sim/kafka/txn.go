package kafka

import (
	"errors"
	"strconv"

	"github.com/flinksim/flinksim/messages"
)

// This file models Kafka transactions as the exactly-once KafkaSink of
// flink-connector-kafka v3.4.0 uses them, at the level a consumer sees:
//
//   - KafkaWriter opens one transaction per subtask and checkpoint, named by
//     TransactionalID(prefix, subtask, checkpointID), and writes the
//     records of checkpoint n's interval into transaction n (it opens
//     transaction n+1 in snapshotState(n)). On the barrier it flushes
//     (PreCommit); KafkaCommitter commits on notifyCheckpointComplete (Commit).
//   - FlinkKafkaInternalProducer.initTransactions is Kafka's InitProducerId:
//     it bumps the id's producer epoch and aborts (fences) a transaction still
//     in progress under that id (InitTransactions, Begin).
//   - On recovery TransactionAborter probes ids prefix-subtask-c for
//     c = restored checkpoint + 1, +2, ... and stops at the first id that was
//     never used (epoch 0 after initTransactions), aborting whatever it finds
//     open on the way (AbortLingering, AbortLingeringTransactions).
//   - A read_committed consumer reads up to the last stable offset (LSO): the
//     first offset of the earliest transaction still in progress on the
//     partition, else the end offset; below it, it skips aborted records. A
//     read_uncommitted consumer (Kafka's default) reads everything.
//
// Simplifications: commit/abort markers take no offset (Kafka writes a
// control record per partition and transaction, so real offsets have gaps);
// transactions never time out (Kafka aborts one older than
// transaction.timeout.ms); a transaction's producer epoch is not carried by
// Commit/Abort, which act on the latest transaction begun under the id (the
// Broker refuses an Abort or PreCommit of an older attempt's producer before
// it reaches the TxnLog: Broker.fenced).

// TxnState is the state of a record (the transaction it belongs to), or of a
// transaction. The zero value means "no such record".
type TxnState int

const (
	// TxnOpen: in progress, records not yet flushed.
	TxnOpen TxnState = 1 + iota
	// TxnPreCommitted: flushed on the checkpoint barrier (KafkaWriter's
	// prepareCommit), waiting for the commit. Still in progress for Kafka: it
	// holds the LSO back like TxnOpen.
	TxnPreCommitted
	// TxnCommitted: commit marker written; visible to read_committed.
	TxnCommitted
	// TxnAborted: abort marker written; never visible to read_committed.
	TxnAborted
	// TxnNone: a record written outside any transaction (delivery guarantee
	// NONE or AT_LEAST_ONCE); visible to read_committed below the LSO.
	TxnNone
)

// String names the state.
func (s TxnState) String() string {
	switch s {
	case TxnOpen:
		return "Open"
	case TxnPreCommitted:
		return "PreCommitted"
	case TxnCommitted:
		return "Committed"
	case TxnAborted:
		return "Aborted"
	case TxnNone:
		return "None"
	}
	return "TxnState(" + strconv.Itoa(int(s)) + ")"
}

// ongoing reports whether a transaction in state s has not ended.
func (s TxnState) ongoing() bool { return s == TxnOpen || s == TxnPreCommitted }

// Errors of the transactional operations. Their texts are Kafka's own
// (org.apache.kafka.common.protocol.Errors and the producer's
// TransactionManager), except ErrTxnPreCommitted, a simulator guard.
var (
	// ErrInvalidTxnState (Kafka INVALID_TXN_STATE): committing an aborted
	// transaction, aborting a committed one, or ending a transaction that was
	// never begun since the id's last InitTransactions. KafkaCommitter
	// treats it as a known failure: the data of that transaction is lost.
	ErrInvalidTxnState = errors.New("The producer attempted a transactional operation in an invalid state.")
	// ErrInvalidProducerIDMapping (Kafka INVALID_PRODUCER_ID_MAPPING): the
	// transactional id is unknown to the coordinator.
	ErrInvalidProducerIDMapping = errors.New("The producer attempted to use a producer id which is not currently assigned to its transactional id.")
	// ErrProducerFenced (Kafka PRODUCER_FENCED): the id was initialised again
	// (InitTransactions, Begin, or the aborter's probe) after the transaction
	// was begun, so its producer is fenced.
	ErrProducerFenced = errors.New("There is a newer producer with the same transactionalId which fences the current one.")
	// ErrTransactionsNotInitialized (TransactionManager): a transactional
	// send under an id that was never initialised.
	ErrTransactionsNotInitialized = errors.New("Cannot perform a 'send' before completing a call to initTransactions when transactions are enabled.")
	// ErrNotInTransaction (TransactionManager): a transactional send while
	// the id's producer has no transaction in progress.
	ErrNotInTransaction = errors.New("Cannot call send in state READY")
	// ErrInvalidRequest (Kafka INVALID_REQUEST): an empty transactional id
	// or a nil record.
	ErrInvalidRequest = errors.New("This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.")
	// ErrUnknownTopicOrPartition (Kafka UNKNOWN_TOPIC_OR_PARTITION): the
	// record's partition does not exist.
	ErrUnknownTopicOrPartition = errors.New("This server does not host this topic-partition.")
	// ErrTxnPreCommitted is a simulator guard, not a Kafka error: Kafka would
	// accept the send, but KafkaWriter never writes into a transaction after
	// prepareCommit (the next checkpoint's transaction takes the records).
	ErrTxnPreCommitted = errors.New("kafka: send into a pre-committed transaction (KafkaWriter opens the next checkpoint's transaction instead)")
)

// TransactionalID is TransactionalIdFactory.buildTransactionalId:
// prefix + "-" + subtaskID + "-" + checkpointID, the id of the transaction
// that subtask subtaskID writes into until checkpoint checkpointID and
// commits when that checkpoint completes.
func TransactionalID(prefix string, subtaskID int, checkpointID int64) string {
	return prefix + "-" + strconv.Itoa(subtaskID) + "-" + strconv.FormatInt(checkpointID, 10)
}

// txn is one transaction: begun once under an id at an epoch.
type txn struct {
	id      string
	epoch   int
	state   TxnState
	first   []partitionOffset // first offset on each partition written
	records int
	no      int32 // 1 + its index in TxnLog.txns
}

type partitionOffset struct {
	partition int
	offset    int64
}

// firstOffset is the transaction's first offset on partition p, or -1.
func (t *txn) firstOffset(p int) int64 {
	for _, po := range t.first {
		if po.partition == p {
			return po.offset
		}
	}
	return -1
}

// producerID is the coordinator's view of one transactional id.
type producerID struct {
	epoch int  // bumped by every InitTransactions; 0 after the first
	last  *txn // the transaction last begun under the id, nil if none ever
}

// TxnLog is a topic with Kafka transactions: it appends through the wrapped
// Topic (which assigns the offsets) and keeps, beside each record, the
// transaction it was written in. Records appended to the Topic directly count
// as non-transactional. Not safe for concurrent use. All results are in
// offset or begin order; no map order reaches them.
type TxnLog struct {
	topic *Topic
	// meta[p][i] is the transaction of the record at index i of partition p,
	// as txns[meta[p][i]-1]; 0 (or i beyond the slice) for a
	// non-transactional record. Pointer-free per record.
	meta    [][]int32
	txns    []*txn // every transaction begun, in begin order
	ids     map[string]*producerID
	ongoing []*txn // transactions not ended, in begin order
	counts  [TxnNone + 1]int
}

// NewTxnLog wraps t. t must not be nil.
func NewTxnLog(t *Topic) *TxnLog {
	return &TxnLog{topic: t, meta: make([][]int32, t.NumPartitions()), ids: map[string]*producerID{}}
}

// Topic is the wrapped topic.
func (l *TxnLog) Topic() *Topic { return l.topic }

func (l *TxnLog) validPartition(p int) bool { return p >= 0 && p < l.topic.NumPartitions() }

// initID is InitProducerId for id: register it at epoch 0, or bump its epoch
// and abort its transaction in progress. It reports whether the id had been
// used before and the transaction it aborted, if any.
func (l *TxnLog) initID(id string) (used bool, aborted *txn) {
	ps, ok := l.ids[id]
	if !ok {
		l.ids[id] = &producerID{}
		return false, nil
	}
	ps.epoch++
	if ps.last != nil && ps.last.state.ongoing() {
		l.end(ps.last, TxnAborted)
		aborted = ps.last
	}
	return true, aborted
}

// end moves an ongoing transaction to its final state.
func (l *TxnLog) end(t *txn, s TxnState) {
	l.counts[t.state] -= t.records
	l.counts[s] += t.records
	t.state = s
	for i, o := range l.ongoing {
		if o == t {
			l.ongoing = append(l.ongoing[:i], l.ongoing[i+1:]...)
			break
		}
	}
}

// InitTransactions is the producer's initTransactions (Kafka's
// InitProducerId) without beginning a transaction: the id's epoch is bumped
// and a transaction still in progress under it is aborted (fenced). KafkaWriter
// calls it for every id between two checkpoints it skipped, so that the ids
// stay consecutive for TransactionAborter. Errors: ErrInvalidRequest for "".
func (l *TxnLog) InitTransactions(transactionalID string) error {
	if transactionalID == "" {
		return ErrInvalidRequest
	}
	l.initID(transactionalID)
	return nil
}

// Begin opens a new transaction under transactionalID (initTransactions then
// beginTransaction): a transaction still in progress under the same id is
// aborted first (fenced), as Kafka's InitProducerId does. Errors:
// ErrInvalidRequest for "".
func (l *TxnLog) Begin(transactionalID string) error {
	if transactionalID == "" {
		return ErrInvalidRequest
	}
	l.initID(transactionalID)
	ps := l.ids[transactionalID]
	t := &txn{id: transactionalID, epoch: ps.epoch, state: TxnOpen, no: int32(len(l.txns) + 1)}
	l.txns = append(l.txns, t)
	ps.last = t
	l.ongoing = append(l.ongoing, t)
	return nil
}

// current is the id's transaction in progress for its current producer, with
// the error a send would get otherwise.
func (l *TxnLog) current(id string) (*txn, error) {
	ps, ok := l.ids[id]
	if !ok {
		return nil, ErrTransactionsNotInitialized
	}
	t := ps.last
	if t == nil || t.epoch != ps.epoch || !t.state.ongoing() {
		return nil, ErrNotInTransaction
	}
	return t, nil
}

// Append writes r into the transaction in progress under transactionalID, in
// partition r.Partition; the Topic assigns (and sets) r.Offset, which is
// returned. The record is invisible to read_committed until the commit and
// holds the partition's LSO at or below its offset meanwhile. Errors, with
// nothing written: ErrInvalidRequest (nil r), ErrUnknownTopicOrPartition,
// ErrTransactionsNotInitialized (id never initialised), ErrNotInTransaction
// (no transaction begun since the last InitTransactions, or it ended),
// ErrTxnPreCommitted.
func (l *TxnLog) Append(transactionalID string, r *messages.KafkaRecord) (int64, error) {
	if r == nil {
		return -1, ErrInvalidRequest
	}
	p := int(r.Partition)
	if !l.validPartition(p) {
		return -1, ErrUnknownTopicOrPartition
	}
	t, err := l.current(transactionalID)
	if err != nil {
		return -1, err
	}
	if t.state == TxnPreCommitted {
		return -1, ErrTxnPreCommitted
	}
	off := l.topic.Append(r)
	l.setMeta(p, off, t)
	if t.firstOffset(p) < 0 {
		t.first = append(t.first, partitionOffset{partition: p, offset: off})
	}
	t.records++
	l.counts[t.state]++
	return off, nil
}

// setMeta records the transaction of the record at offset off of partition
// p, padding with 0 for records appended to the Topic directly.
func (l *TxnLog) setMeta(p int, off int64, t *txn) {
	i := int(off - l.topic.LogStartOffset(p))
	for len(l.meta[p]) < i {
		l.meta[p] = append(l.meta[p], 0)
	}
	l.meta[p] = append(l.meta[p], t.no)
}

// txnAt is the transaction of the record at index i of partition p, nil for
// a non-transactional record.
func (l *TxnLog) txnAt(p, i int) *txn {
	if i >= len(l.meta[p]) || l.meta[p][i] == 0 {
		return nil
	}
	return l.txns[l.meta[p][i]-1]
}

// AppendPlain writes r outside any transaction (delivery guarantee NONE or
// AT_LEAST_ONCE) and returns its offset; -1, with nothing written, for a nil
// record or a partition that does not exist. Visible to read_committed once
// below the LSO: a plain record written after an open transaction's first
// record waits for that transaction to end.
func (l *TxnLog) AppendPlain(r *messages.KafkaRecord) int64 {
	if r == nil || !l.validPartition(int(r.Partition)) {
		return -1
	}
	return l.topic.Append(r)
}

// latest is the id's last transaction for an end-transaction request, with
// the coordinator's error otherwise.
func (l *TxnLog) latest(id string) (*txn, error) {
	ps, ok := l.ids[id]
	if !ok {
		return nil, ErrInvalidProducerIDMapping
	}
	if ps.last == nil {
		return nil, ErrInvalidTxnState
	}
	if ps.last.epoch != ps.epoch {
		return nil, ErrProducerFenced
	}
	return ps.last, nil
}

// PreCommit flushes the transaction in progress under transactionalID (the
// barrier's prepareCommit): its records are durable but stay uncommitted.
// Flushing twice is a no-op. Errors: ErrInvalidProducerIDMapping (unknown
// id), ErrProducerFenced (the id was initialised again since the
// transaction began), ErrInvalidTxnState (no transaction, or it ended).
func (l *TxnLog) PreCommit(transactionalID string) error {
	t, err := l.latest(transactionalID)
	if err != nil {
		return err
	}
	switch t.state {
	case TxnOpen:
		l.counts[TxnOpen] -= t.records
		l.counts[TxnPreCommitted] += t.records
		t.state = TxnPreCommitted
		return nil
	case TxnPreCommitted:
		return nil
	}
	return ErrInvalidTxnState
}

// Commit writes the commit marker of the latest transaction under
// transactionalID: its records become visible to read_committed (once no
// earlier transaction holds the LSO back). Committing a committed transaction
// again succeeds (Kafka answers a retried EndTxn(COMMIT) with no error, and
// KafkaCommitter re-commits restored committables on recovery). Errors:
// ErrInvalidProducerIDMapping (unknown id), ErrProducerFenced (the id was
// initialised again since the transaction began, e.g. by the aborter),
// ErrInvalidTxnState (aborted, or no transaction ever begun).
func (l *TxnLog) Commit(transactionalID string) error {
	return l.endLatest(transactionalID, TxnCommitted)
}

// Abort writes the abort marker of the latest transaction under
// transactionalID: its records are never visible to read_committed. Aborting
// twice succeeds. Errors as Commit, ErrInvalidTxnState for a committed
// transaction.
func (l *TxnLog) Abort(transactionalID string) error { return l.endLatest(transactionalID, TxnAborted) }

// endLatest writes the marker to (TxnCommitted or TxnAborted) for the
// latest transaction under transactionalID; a transaction already in that
// state is left as it is (a retried EndTxn).
func (l *TxnLog) endLatest(transactionalID string, to TxnState) error {
	t, err := l.latest(transactionalID)
	if err != nil {
		return err
	}
	switch {
	case t.state.ongoing():
		l.end(t, to)
		return nil
	case t.state == to:
		return nil
	}
	return ErrInvalidTxnState
}

// abortOfSubtask is TransactionAborter.abortTransactionOfSubtask: probe
// prefix-subtask-c for c = from, from+1, ... with initTransactions until an
// id that was never used, which the probe registers (epoch 0) and where it
// stops. It returns the ids whose transaction in progress was aborted and the
// number of used ids probed (Flink's numTransactionAborted).
func (l *TxnLog) abortOfSubtask(prefix string, subtask int, from int64, out []string) ([]string, int) {
	used := 0
	for c := from; ; c++ {
		id := TransactionalID(prefix, subtask, c)
		wasUsed, aborted := l.initID(id)
		if !wasUsed {
			return out, used
		}
		used++
		if aborted != nil {
			out = append(out, id)
		}
	}
}

// AbortLingering is what TransactionAborter does for one prefix and subtask
// on recovery from checkpoint fromCheckpoint-1: it initialises
// prefix-subtask-c for c = fromCheckpoint, fromCheckpoint+1, ... (bumping
// each id's epoch and aborting a transaction still in progress under it) and
// stops at the first id that was never used. A gap in the ids therefore ends
// the probe: transactions after it are not touched (KafkaWriter fills gaps
// with InitTransactions for this reason). Returns the ids whose transaction
// was aborted, in probe order. Cost: one step per consecutive used id.
func (l *TxnLog) AbortLingering(prefix string, subtask int, fromCheckpoint int64) []string {
	out, _ := l.abortOfSubtask(prefix, subtask, fromCheckpoint, nil)
	return out
}

// AbortLingeringProbe is AbortLingering that also returns the used ids it
// initialised, in probe order: each now has a newer epoch than any producer
// that used it before, aborted or not.
func (l *TxnLog) AbortLingeringProbe(prefix string, subtask int, fromCheckpoint int64) (aborted, probed []string) {
	aborted, used := l.abortOfSubtask(prefix, subtask, fromCheckpoint, nil)
	for c := 0; c < used; c++ {
		probed = append(probed, TransactionalID(prefix, subtask, fromCheckpoint+int64(c)))
	}
	return aborted, probed
}

// AbortLingeringTransactions is TransactionAborter.abortLingeringTransactions
// in full: for each prefix (KafkaWriter passes its own and, if it changed, the
// restored one), probe subtask, subtask+parallelism, subtask+2*parallelism,
// ... (the subtasks a downscaled job no longer runs) as AbortLingering does,
// until a subtask whose first probed id was never used. parallelism <= 0
// probes subtask alone (Flink would loop for ever). Returns the aborted ids
// in probe order.
func (l *TxnLog) AbortLingeringTransactions(prefixes []string, subtask, parallelism int, startCheckpointID int64) []string {
	var out []string
	for _, prefix := range prefixes {
		for s := subtask; ; s += parallelism {
			var used int
			out, used = l.abortOfSubtask(prefix, s, startCheckpointID, out)
			if used == 0 || parallelism <= 0 {
				break
			}
		}
	}
	return out
}

// LastStableOffset is partition p's LSO: the first offset of the earliest
// transaction still in progress (open or pre-committed) on p, else the end
// offset. -1 for a partition that does not exist.
func (l *TxnLog) LastStableOffset(partition int) int64 {
	if !l.validPartition(partition) {
		return -1
	}
	lso := l.topic.EndOffset(partition)
	for _, t := range l.ongoing {
		if f := t.firstOffset(partition); f >= 0 && f < lso {
			lso = f
		}
	}
	return lso
}

// visibleCommitted reports whether the record at index i of partition p is
// visible to read_committed, given that it lies below the LSO.
func (l *TxnLog) visibleCommitted(p, i int) bool {
	t := l.txnAt(p, i)
	return t == nil || t.state == TxnCommitted
}

// ReadCommitted is what a read_committed consumer can read of partition p
// from the log start: the records below the LSO that are non-transactional
// or committed, in offset order. A new slice; nil for a partition that does
// not exist.
func (l *TxnLog) ReadCommitted(partition int) []*messages.KafkaRecord {
	recs, _ := l.FetchCommitted(partition, 0, int(^uint(0)>>1))
	return recs
}

// FetchCommitted is one read_committed poll of partition p from offset
// (clamped to the log start): up to maxRecords records visible to read_committed
// (see ReadCommitted) at offsets in [offset, LSO), and the consumer's next
// position: after the last record returned if maxRecords were returned, else the
// LSO (aborted records are skipped). A position at or past the LSO returns
// no record and the position unchanged. maxRecords <= 0 returns nothing.
func (l *TxnLog) FetchCommitted(partition int, offset int64, maxRecords int) ([]*messages.KafkaRecord, int64) {
	if !l.validPartition(partition) {
		return nil, offset
	}
	start := l.topic.LogStartOffset(partition)
	offset = max(offset, start)
	lso := l.LastStableOffset(partition)
	if offset >= lso || maxRecords <= 0 {
		return nil, offset
	}
	// count first, then materialise the records in one slab
	n, next := 0, lso
	for i := int(offset - start); i < int(lso-start); i++ {
		if !l.visibleCommitted(partition, i) {
			continue
		}
		if n++; n == maxRecords {
			next = start + int64(i) + 1
			break
		}
	}
	if n == 0 {
		return nil, next
	}
	out := NewRecords(n)
	k := 0
	for i := int(offset - start); k < n; i++ {
		if l.visibleCommitted(partition, i) {
			l.topic.fill(out[k], partition, i)
			k++
		}
	}
	return out, next
}

// ReadUncommitted is what a read_uncommitted consumer (Kafka's default
// isolation level) reads of partition p: every record appended, whatever its
// transaction's state, in offset order. A new slice; nil for a partition that
// does not exist.
func (l *TxnLog) ReadUncommitted(partition int) []*messages.KafkaRecord {
	if !l.validPartition(partition) {
		return nil
	}
	return l.topic.Read(partition, 0, int(^uint(0)>>1))
}

// StateOf is the state of the record at offset of partition p and its
// transactional id: (TxnNone, "") for a non-transactional record, (0, "") if
// there is no such record.
func (l *TxnLog) StateOf(partition int, offset int64) (TxnState, string) {
	if !l.validPartition(partition) {
		return 0, ""
	}
	start := l.topic.LogStartOffset(partition)
	if offset < start || offset >= l.topic.EndOffset(partition) {
		return 0, ""
	}
	t := l.txnAt(partition, int(offset-start))
	if t == nil {
		return TxnNone, ""
	}
	return t.state, t.id
}

// TransactionState is the state of the latest transaction begun under
// transactionalID; false if none was ever begun.
func (l *TxnLog) TransactionState(transactionalID string) (TxnState, bool) {
	ps, ok := l.ids[transactionalID]
	if !ok || ps.last == nil {
		return 0, false
	}
	return ps.last.state, true
}

// Counts is the number of records, over all partitions, by the state of their
// transaction; plain counts the non-transactional records (including those
// appended to the Topic directly). Cost: O(partitions).
func (l *TxnLog) Counts() (open, preCommitted, committed, aborted, plain int) {
	txnal := l.counts[TxnOpen] + l.counts[TxnPreCommitted] + l.counts[TxnCommitted] + l.counts[TxnAborted]
	return l.counts[TxnOpen], l.counts[TxnPreCommitted], l.counts[TxnCommitted], l.counts[TxnAborted],
		int(l.topic.Total()) - txnal
}
