package kafka

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

func render(reqs []*messages.TxnRequest) []string {
	var out []string
	for _, r := range reqs {
		s := r.Op.String() + " " + r.TransactionalId
		if r.Op == messages.TxnRequest_ABORT_LINGERING {
			s = r.Op.String() + " " + r.Prefix + " subtask " + strconv.Itoa(int(r.Subtask)) + " from " + strconv.FormatInt(r.FromCheckpoint, 10)
		}
		out = append(out, s)
	}
	return out
}

// One exactly-once sink subtask's life, by hand (KafkaWriter with
// KafkaCommitter and TransactionAborter): a fresh start aborts what its
// earlier incarnations may have left from checkpoint 1 on and begins
// PREFIX-1-1; each snapshot pre-commits the open transaction and begins the
// next; a completed checkpoint commits what was pre-committed up to it.
func TestWriterExactlyOnce(t *testing.T) {
	w := NewWriter("tx", 1, true)
	if got, want := render(w.Init(nil, 0, 2, 0, true)), []string{"ABORT_LINGERING tx subtask 1 from 1", "BEGIN tx-1-1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("init %v, want %v", got, want)
	}
	if p := w.Produce("out", nil); p.TransactionalId != "tx-1-1" || p.Topic != "out" {
		t.Fatalf("produce %v", p)
	}
	reqs, comm := w.PrepareCommit(1)
	if got, want := render(reqs), []string{"PRE_COMMIT tx-1-1", "BEGIN tx-1-2"}; !reflect.DeepEqual(got, want) || !reflect.DeepEqual(comm, []string{"tx-1-1"}) {
		t.Fatalf("checkpoint 1: %v, committables %v", got, comm)
	}
	_, comm = w.PrepareCommit(2)
	if !reflect.DeepEqual(comm, []string{"tx-1-1", "tx-1-2"}) {
		t.Fatalf("checkpoint 2 stores %v, want both pending committables", comm)
	}
	if got := render(w.Commit(1)); !reflect.DeepEqual(got, []string{"COMMIT tx-1-1"}) {
		t.Fatalf("checkpoint 1 complete: %v", got)
	}
	if got := render(w.Commit(3)); !reflect.DeepEqual(got, []string{"COMMIT tx-1-2"}) {
		t.Fatalf("checkpoint 3 complete: %v, want the rest", got)
	}
	if got := render(w.Abort()); !reflect.DeepEqual(got, []string{"ABORT tx-1-3"}) {
		t.Fatalf("close: %v", got)
	}
	if got := render(w.EndInput()); !reflect.DeepEqual(got, []string{"PRE_COMMIT tx-1-3", "COMMIT tx-1-3"}) {
		t.Fatalf("end of input: %v", got)
	}
}

// Restored from checkpoint 4 taken at parallelism 3, subtask 0 of 2 commits
// what the checkpoint pre-committed, aborts what old subtasks 0 and 2
// (0, 0+2) began after it, and begins tx-0-5.
func TestWriterRecovery(t *testing.T) {
	w := NewWriter("tx", 0, true)
	got := render(w.Init([]string{"tx-0-4", "tx-2-4"}, 4, 2, 3, false))
	want := []string{"COMMIT tx-0-4", "COMMIT tx-2-4", "ABORT_LINGERING tx subtask 0 from 5", "ABORT_LINGERING tx subtask 2 from 5", "BEGIN tx-0-5"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recovery %v, want %v", got, want)
	}
}

// Without exactly-once the sink writes outside transactions and asks the
// broker for nothing else.
func TestWriterAtLeastOnce(t *testing.T) {
	w := NewWriter("tx", 0, false)
	reqs, comm := w.PrepareCommit(1)
	if w.Init(nil, 0, 1, 0, true) != nil || reqs != nil || comm != nil || w.Commit(1) != nil || w.Abort() != nil || w.EndInput() != nil {
		t.Fatal("a non-transactional writer asked for transactions")
	}
	if p := w.Produce("out", nil); p.TransactionalId != "" {
		t.Fatalf("produce in transaction %q", p.TransactionalId)
	}
}
