package kafka

// TxnInfo describes one transaction as the coordinator knows it.
type TxnInfo struct {
	// State is the transaction's state (never TxnNone).
	State TxnState
	// Records is the number of records written into it, over all
	// partitions.
	Records int
}

// TransactionInfo is the latest transaction begun under transactionalID
// (the one Commit, Abort and PreCommit act on); false if none was ever
// begun. Cost: O(1).
func (l *TxnLog) TransactionInfo(transactionalID string) (TxnInfo, bool) {
	ps, ok := l.ids[transactionalID]
	if !ok || ps.last == nil {
		return TxnInfo{}, false
	}
	return TxnInfo{State: ps.last.state, Records: ps.last.records}, true
}
