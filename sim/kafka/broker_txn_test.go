package kafka

import (
	"strconv"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// brokerHarness delivers envelopes to a Kafka component one at a time, as
// the scheduler would, and renders what each delivery logged.
type brokerHarness struct {
	t   *testing.T
	k   *Broker
	o   *kernel.Out
	now int64
	out []*messages.Envelope // what the last delivery sent
}

func newBrokerHarness(t *testing.T) *brokerHarness {
	cfg := config.Default()
	// the source topic stays empty: the sink's transactions are tested
	cfg.SourceTopic, cfg.SourcePartitions, cfg.SinkTopic, cfg.SourceRate = "orders", 1, "orders-per-minute", 0
	return &brokerHarness{t: t, k: NewBroker(&cfg, nil), o: kernel.NewOut(jobgraph.KafkaName, 1, nil)}
}

// deliver hands body from actor from to the broker 1 ms after the last
// delivery and returns the events logged, one line each: kind, then key=value
// in field order.
func (h *brokerHarness) deliver(from string, body messages.Body) []string {
	h.t.Helper()
	h.now += 1000
	d := kernel.Deliver(h.k, h.o, uint64(h.now), vt.Of(h.now), []*messages.Envelope{{DeliverAt: h.now, To: jobgraph.KafkaName, From: from, Body: body}})
	if d.Failure != "" {
		h.t.Fatalf("delivery failed: %s", d.Failure)
	}
	h.out = d.Out
	var out []string
	for _, ev := range d.Events {
		s := string(ev.Kind())
		for _, f := range eventlog.FieldsOf(&ev) {
			s += " " + f.Key + "="
			switch v := f.Value.(type) {
			case *messages.Field_Int:
				s += strconv.FormatInt(v.Int, 10)
			case *messages.Field_Str:
				s += v.Str
			case *messages.Field_RawJson:
				s += v.RawJson
			default:
				s += "?"
			}
		}
		out = append(out, s)
	}
	return out
}

func produce(id string, keys ...string) messages.Body {
	p := &messages.Produce{Topic: "orders-per-minute", TransactionalId: id}
	for _, k := range keys {
		p.Records = append(p.Records, &messages.KafkaRecord{Key: k, Value: []byte(k)})
	}
	return &messages.Envelope_Produce{Produce: p}
}

func txnReq(op messages.TxnRequest_Op, id string) messages.Body {
	return &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: op, TransactionalId: id}}
}

func keysOf(recs []*messages.KafkaRecord) string {
	var ks []string
	for _, r := range recs {
		ks = append(ks, r.Key+"@"+strconv.FormatInt(r.Offset, 10))
	}
	return strings.Join(ks, " ")
}

// TestBrokerTransactions drives the broker through a hand-worked life of
// the exactly-once sink's transactions: plain writes, a transaction that
// pre-commits and commits (twice), sends the broker refuses, a lingering
// transaction aborted on recovery, a commit fenced by that probe, a
// transaction fenced by a second BEGIN, and malformed requests. After each
// delivery it checks the events logged and, at some points, what each
// isolation level reads.
func TestBrokerTransactions(t *testing.T) {
	h := newBrokerHarness(t)
	w0, w1 := "window-0", "window-1"
	const (
		begin    = messages.TxnRequest_BEGIN
		pre      = messages.TxnRequest_PRE_COMMIT
		commit   = messages.TxnRequest_COMMIT
		abort    = messages.TxnRequest_ABORT
		metrics  = timerMetrics
		lingerP0 = "linger"
	)
	steps := []struct {
		from string
		body messages.Body
		want []string
		// committed and uncommitted, when not "-": the records each
		// isolation level reads after the step, key@offset
		committed, uncommitted string
	}{
		// at-least-once / none: offsets 0 and 1, no event
		{w1, produce("", "a", "b"), nil, "a@0 b@1", "a@0 b@1"},
		{w0, txnReq(begin, "p-0-1"), []string{"transaction op=begin transactional_id=p-0-1 state=Open records=0 producer=window-0"}, "-", "-"},
		// offsets 2, 3: uncommitted, and they hold the LSO at 2
		{w0, produce("p-0-1", "c", "d"), nil, "a@0 b@1", "a@0 b@1 c@2 d@3"},
		// never begun: dropped
		{w0, produce("p-0-2", "e"), []string{"kafka_error request=produce transactional_id=p-0-2 error=" +
			ErrTransactionsNotInitialized.Error() + " records=1 producer=window-0"}, "-", "a@0 b@1 c@2 d@3"},
		{w0, txnReq(pre, "p-0-1"), []string{"transaction op=pre_commit transactional_id=p-0-1 state=PreCommitted records=2 producer=window-0"}, "a@0 b@1", "-"},
		{w0, txnReq(pre, "p-0-1"), []string{"transaction op=pre_commit transactional_id=p-0-1 state=PreCommitted records=2 producer=window-0 note=already pre-committed"}, "-", "-"},
		// into a pre-committed transaction: dropped
		{w0, produce("p-0-1", "f"), []string{"kafka_error request=produce transactional_id=p-0-1 error=" +
			ErrTxnPreCommitted.Error() + " records=1 producer=window-0"}, "-", "a@0 b@1 c@2 d@3"},
		{w0, txnReq(begin, "p-0-2"), []string{"transaction op=begin transactional_id=p-0-2 state=Open records=0 producer=window-0"}, "-", "-"},
		{w0, produce("p-0-2", "g"), nil, "-", "-"},
		// a zombie of an earlier attempt (another producer) under an id
		// that window-0 began last: fenced, dropped
		{"window-0#old", produce("p-0-2", "z"), []string{"kafka_error request=produce transactional_id=p-0-2 error=" +
			ErrProducerFenced.Error() + " records=1 producer=window-0#old"}, "-", "-"},
		{"window-0#old", txnReq(pre, "p-0-2"), []string{"kafka_error request=pre_commit transactional_id=p-0-2 error=" +
			ErrProducerFenced.Error() + " producer=window-0#old"}, "-", "-"},
		{w1, produce("", "h"), nil, "a@0 b@1", "a@0 b@1 c@2 d@3 g@4 h@5"},
		// c, d pre-committed; g open; a, b, h plain; LSO 2 (c)
		{jobgraph.KafkaName, &messages.Envelope_Timer{Timer: &messages.Timer{Kind: metrics}}, []string{
			`kafka_metrics topic=orders partitions=[{"partition":0,"end_offset":0,"read_offset":0,"lag":0}] ` +
				"sink_records=6 sink_open=1 sink_pre_committed=2 sink_committed=0 sink_aborted=0 sink_plain=3 last_stable_offset=2"}, "-", "-"},
		// the LSO moves to 4 (g's transaction)
		{w0, txnReq(commit, "p-0-1"), []string{"transaction op=commit transactional_id=p-0-1 state=Committed records=2 producer=window-0"}, "a@0 b@1 c@2 d@3", "-"},
		{"committer", txnReq(commit, "p-0-1"), []string{"transaction op=commit transactional_id=p-0-1 state=Committed records=2 producer=committer note=already committed"}, "-", "-"},
		{w0, txnReq(abort, "p-0-1"), []string{"kafka_error request=abort transactional_id=p-0-1 error=" + ErrInvalidTxnState.Error() + " producer=window-0"}, "-", "-"},
		// recovery from checkpoint 1: probe p-0-2 (g's transaction, aborted),
		// then p-0-3, never used: the probe stops there
		{w0, &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: messages.TxnRequest_ABORT_LINGERING, Prefix: "p", Subtask: 0, FromCheckpoint: 2}}, []string{
			"transaction op=abort_lingering transactional_id=p-0-2 state=Aborted records=1 producer=window-0",
			`abort_lingering prefix=p subtask=0 from_checkpoint=2 aborted=["p-0-2"] producer=window-0`}, "a@0 b@1 c@2 d@3 h@5", "a@0 b@1 c@2 d@3 g@4 h@5"},
		// the probe bumped p-0-2's epoch: its old producer is fenced
		{w0, txnReq(commit, "p-0-2"), []string{"kafka_error request=commit transactional_id=p-0-2 error=" + ErrProducerFenced.Error() + " producer=window-0"}, "-", "-"},
		// nothing to abort past an unused id
		{w0, &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: messages.TxnRequest_ABORT_LINGERING, Prefix: lingerP0, Subtask: 3, FromCheckpoint: 7}}, []string{
			`abort_lingering prefix=linger subtask=3 from_checkpoint=7 aborted=[] producer=window-0`}, "-", "-"},
		{w0, txnReq(begin, "p-0-3"), []string{"transaction op=begin transactional_id=p-0-3 state=Open records=0 producer=window-0"}, "-", "-"},
		// offset 6; holds the LSO at 6
		{w0, produce("p-0-3", "i"), nil, "a@0 b@1 c@2 d@3 h@5", "a@0 b@1 c@2 d@3 g@4 h@5 i@6"},
		// a second BEGIN under the same id fences the transaction in progress
		{w1, txnReq(begin, "p-0-3"), []string{
			"transaction op=begin transactional_id=p-0-3 state=Aborted records=1 producer=window-1 note=" + noteFenced,
			"transaction op=begin transactional_id=p-0-3 state=Open records=0 producer=window-1"}, "a@0 b@1 c@2 d@3 h@5", "-"},
		{w1, txnReq(abort, "p-0-3"), []string{"transaction op=abort transactional_id=p-0-3 state=Aborted records=0 producer=window-1"}, "-", "-"},
		{w1, txnReq(abort, "p-0-3"), []string{"transaction op=abort transactional_id=p-0-3 state=Aborted records=0 producer=window-1 note=already aborted"}, "-", "-"},
		{w1, txnReq(pre, "p-0-9"), []string{"kafka_error request=pre_commit transactional_id=p-0-9 error=" + ErrInvalidProducerIDMapping.Error() + " producer=window-1"}, "-", "-"},
		{w1, txnReq(begin, ""), []string{"kafka_error request=begin transactional_id= error=" + ErrInvalidRequest.Error() + " producer=window-1"}, "-", "-"},
		{w1, txnReq(messages.TxnRequest_Op(9), "p-0-1"), []string{"kafka_error request=9 transactional_id=p-0-1 error=" + ErrInvalidRequest.Error() + " producer=window-1"}, "-", "-"},
		// written: a b c d g h i; rejected: e f; refused requests: abort
		// p-0-1, commit p-0-2, pre_commit p-0-9, begin "", op 9;
		// committed c d, aborted g i, plain a b h; no transaction in
		// progress, so the LSO is the end offset 7
		{"scheduler", &messages.Envelope_EndOfRun{EndOfRun: &messages.EndOfRun{}}, []string{
			`kafka_metrics topic=orders partitions=[{"partition":0,"end_offset":0,"read_offset":0,"lag":0}] ` +
				"sink_records=7 sink_open=0 sink_pre_committed=0 sink_committed=2 sink_aborted=2 sink_plain=3 last_stable_offset=7",
			"final_counters source_records=0 results_written=7 produce_rejected=3 txn_errors=6 sink_open=0 sink_pre_committed=0 sink_committed=2 sink_aborted=2 sink_plain=3 last_stable_offset=7"},
			"a@0 b@1 c@2 d@3 h@5", "a@0 b@1 c@2 d@3 g@4 h@5 i@6"},
	}
	for i, s := range steps {
		got := h.deliver(s.from, s.body)
		if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
			t.Errorf("step %d: logged\n  %s\nwant\n  %s", i, strings.Join(got, "\n  "), strings.Join(s.want, "\n  "))
		}
		if s.committed != "-" {
			if got := keysOf(h.k.SinkLog().ReadCommitted(0)); got != s.committed {
				t.Errorf("step %d: read_committed reads %q, want %q", i, got, s.committed)
			}
		}
		if s.uncommitted != "-" {
			if got := keysOf(h.k.SinkLog().ReadUncommitted(0)); got != s.uncommitted {
				t.Errorf("step %d: read_uncommitted reads %q, want %q", i, got, s.uncommitted)
			}
		}
	}
	if got := h.k.SinkTopic().Total(); got != 7 {
		t.Errorf("SinkTopic holds %d records, want 7", got)
	}
}

// transaction.timeout.ms: a transaction still open when its timer fires is
// aborted by the broker and the LSO moves past it; a committed one, or one
// whose id began a newer transaction since, is left alone.
func TestBrokerTransactionTimeout(t *testing.T) {
	h := newBrokerHarness(t)
	timeout := func(seq int64) messages.Body {
		return &messages.Envelope_Timer{Timer: &messages.Timer{Kind: timerTxnTimeout, Arg: seq}}
	}
	h.deliver("w0", txnReq(messages.TxnRequest_BEGIN, "p-0-1"))  // timer 1
	h.deliver("w0", produce("p-0-1", "a"))                       // offset 0
	h.deliver("w1", txnReq(messages.TxnRequest_BEGIN, "p-1-1"))  // timer 2
	h.deliver("w1", produce("p-1-1", "b"))                       // offset 1
	h.deliver("w1", txnReq(messages.TxnRequest_COMMIT, "p-1-1")) // committed before its timeout
	h.deliver("w0", txnReq(messages.TxnRequest_BEGIN, "p-0-2"))  // timer 3
	h.deliver("w0", produce("p-0-2", "c"))                       // offset 2
	if got := keysOf(h.k.SinkLog().ReadCommitted(0)); got != "" {
		t.Fatalf("read_committed reads %q before the timeout, want nothing (the LSO is held at 0)", got)
	}
	if got := h.deliver("kafka", timeout(1)); strings.Join(got, "|") != "transaction op=abort transactional_id=p-0-1 state=Aborted records=1 producer=kafka note="+noteTimedOut {
		t.Fatalf("timeout 1 logged %q", got)
	}
	if got := keysOf(h.k.SinkLog().ReadCommitted(0)); got != "b@1" {
		t.Fatalf("read_committed reads %q after the timeout, want b@1 (c still open)", got)
	}
	if got := h.deliver("kafka", timeout(2)); len(got) != 0 {
		t.Fatalf("the committed transaction's timeout logged %q", got)
	}
	h.deliver("w0", txnReq(messages.TxnRequest_BEGIN, "p-0-2")) // fences c's transaction, timer 4
	if got := h.deliver("kafka", timeout(3)); len(got) != 0 {
		t.Fatalf("a timeout of an earlier transaction under p-0-2 logged %q", got)
	}
}

// Seed 90761's loss, at the broker: a zombie attempt's KafkaWriter.close
// (window-1#1, cancelled while its last slice was still being written)
// reached the broker after the new attempt (window-1#2) had recovered and
// begun the same transactional id again. Its produce was fenced, but its
// abort ended the new attempt's transaction, so the new attempt's records
// were refused ("Cannot call send in state READY") and its checkpoint's
// commit failed: results lost. EndTxn carries the producer epoch, and the
// coordinator refuses an older one with PRODUCER_FENCED
// (KafkaWriter.abortCurrentProducer catches it: "fenced while aborting").
func TestBrokerFencesZombieAbort(t *testing.T) {
	h := newBrokerHarness(t)
	const (
		old, next = "window-1#1", "window-1#2"
		id        = "flinksim-1-9"
	)
	fenced := ErrProducerFenced.Error()
	steps := []struct {
		from string
		body messages.Body
		want string
	}{
		// the old attempt's transaction for checkpoint 9, records a, b
		{old, txnReq(messages.TxnRequest_BEGIN, id), "transaction op=begin transactional_id=flinksim-1-9 state=Open records=0 producer=window-1#1"},
		{old, produce(id, "a", "b"), ""},
		// recovery from checkpoint 8: the aborter probes flinksim-1-9 (and
		// stops at the unused flinksim-1-10), then the writer begins it again
		{next, &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: messages.TxnRequest_ABORT_LINGERING, Prefix: "flinksim", Subtask: 1, FromCheckpoint: 9}},
			"transaction op=abort_lingering transactional_id=flinksim-1-9 state=Aborted records=2 producer=window-1#2|" +
				`abort_lingering prefix=flinksim subtask=1 from_checkpoint=9 aborted=["flinksim-1-9"] producer=window-1#2`},
		{next, txnReq(messages.TxnRequest_BEGIN, id), "transaction op=begin transactional_id=flinksim-1-9 state=Open records=0 producer=window-1#2"},
		{next, produce(id, "c"), ""},
		// the zombie's last slice and its close arrive now: both fenced
		{old, produce(id, "z"), "kafka_error request=produce transactional_id=flinksim-1-9 error=" + fenced + " records=1 producer=window-1#1"},
		{old, txnReq(messages.TxnRequest_ABORT, id), "kafka_error request=abort transactional_id=flinksim-1-9 error=" + fenced + " producer=window-1#1"},
		// the new attempt's transaction lives on: d goes in, checkpoint 9
		// pre-commits and commits it
		{next, produce(id, "d"), ""},
		{next, txnReq(messages.TxnRequest_PRE_COMMIT, id), "transaction op=pre_commit transactional_id=flinksim-1-9 state=PreCommitted records=2 producer=window-1#2"},
		{next, txnReq(messages.TxnRequest_COMMIT, id), "transaction op=commit transactional_id=flinksim-1-9 state=Committed records=2 producer=window-1#2"},
	}
	for i, s := range steps {
		if got := strings.Join(h.deliver(s.from, s.body), "|"); got != s.want {
			t.Errorf("step %d: logged\n  %s\nwant\n  %s", i, got, s.want)
		}
	}
	// offsets: a 0, b 1 (aborted), c 2, d 3 (committed); z never written
	if got := keysOf(h.k.SinkLog().ReadCommitted(0)); got != "c@2 d@3" {
		t.Errorf("read_committed reads %q, want c@2 d@3", got)
	}
	if got := keysOf(h.k.SinkLog().ReadUncommitted(0)); got != "a@0 b@1 c@2 d@3" {
		t.Errorf("read_uncommitted reads %q, want a@0 b@1 c@2 d@3", got)
	}
}

// failTasks lists the FailTask causes the last delivery sent, as "to: cause".
func (h *brokerHarness) failTasks() []string {
	var out []string
	for _, e := range h.out {
		if f, ok := e.Body.(*messages.Envelope_FailTask); ok {
			out = append(out, e.To+": "+f.FailTask.Cause)
		}
	}
	return out
}

// A zombie's TransactionAborter (an old attempt restoring from an older
// checkpoint after the new attempt began its transaction) initialises the
// ids it probes, so the new attempt's producer of flinksim-1-9 is fenced and
// its open transaction aborted, as Kafka's InitProducerId does. The broker
// then answers the new attempt's next send PRODUCER_FENCED, and the task
// fails (KafkaWriter's callback, checkAsyncException) and recovers, instead
// of writing on into a transaction that is gone. A fenced abort (a closing
// writer's) is not answered.
func TestBrokerZombieAborterFencesCurrentProducer(t *testing.T) {
	h := newBrokerHarness(t)
	const (
		old, next = "sink-1#1", "sink-1#2"
		id        = "flinksim-1-9"
	)
	h.deliver(next, txnReq(messages.TxnRequest_BEGIN, id))
	h.deliver(next, produce(id, "c"))
	got := h.deliver(old, &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: messages.TxnRequest_ABORT_LINGERING, Prefix: "flinksim", Subtask: 1, FromCheckpoint: 9}})
	if want := "transaction op=abort_lingering transactional_id=flinksim-1-9 state=Aborted records=1 producer=sink-1#1"; len(got) == 0 || got[0] != want {
		t.Fatalf("zombie's aborter logged %v, want first %q", got, want)
	}
	if f := h.failTasks(); len(f) != 0 {
		t.Fatalf("the aborter's probe answered %v", f)
	}
	got = h.deliver(next, produce(id, "d"))
	if want := "kafka_error request=produce transactional_id=flinksim-1-9 error=" + ErrProducerFenced.Error() + " records=1 producer=sink-1#2"; strings.Join(got, "|") != want {
		t.Fatalf("new attempt's send after the probe logged %v, want %q", got, want)
	}
	if f := h.failTasks(); len(f) != 1 || f[0] != next+": "+ProducerFencedCause {
		t.Fatalf("FailTask %v, want one to %s with ProducerFencedException", f, next)
	}
	h.deliver(next, txnReq(messages.TxnRequest_PRE_COMMIT, id))
	if f := h.failTasks(); len(f) != 1 || f[0] != next+": "+ProducerFencedCause {
		t.Fatalf("fenced pre-commit: FailTask %v, want one to %s", f, next)
	}
	h.deliver(next, txnReq(messages.TxnRequest_ABORT, id))
	if f := h.failTasks(); len(f) != 0 {
		t.Fatalf("fenced abort answered %v, want nothing (abortCurrentProducer ignores ProducerFenced)", f)
	}
	if got := keysOf(h.k.SinkLog().ReadCommitted(0)); got != "" {
		t.Errorf("read_committed reads %q, want nothing (c aborted, d refused)", got)
	}
}
