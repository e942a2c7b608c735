package task

// The KafkaSink at the end of the chain (KafkaWriter with KafkaCommitter:
// sim/kafka.Writer) and the task's ordered connection to the broker.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// kafkaSinkWriter is the sink operator of a chain: the records of the
// slice so far, and the writer that sends them and, exactly-once, runs the
// transactions. A nil *kafkaSinkWriter is a chain without a sink: every
// method then does nothing (exactlyOnce reports false).
type kafkaSinkWriter struct {
	t   *StreamTask
	w   *kafka.Writer
	out []*messages.KafkaRecord // the slice's records, not yet sent
}

// exactlyOnce reports whether the sink writes in transactions.
func (k *kafkaSinkWriter) exactlyOnce() bool { return k != nil && k.w.ExactlyOnce() }

// write adds a record to the slice's output.
func (k *kafkaSinkWriter) write(rec *messages.KafkaRecord) {
	k.out = append(k.out, rec)
	k.t.m.resultsWritten++
}

// flush sends the sink records of the slice so far, delay after now.
func (k *kafkaSinkWriter) flush(o *kernel.Out, delay vt.Time) {
	if k == nil || len(k.out) == 0 {
		return
	}
	k.t.sendKafka(o, delay, &messages.Envelope_Produce{Produce: k.w.Produce(k.t.cfg.SinkTopic, k.out)})
	k.out = nil
}

// sendTxn sends the writer's transaction requests to the broker, in order.
func (k *kafkaSinkWriter) sendTxn(o *kernel.Out, reqs []*messages.TxnRequest) {
	for _, q := range reqs {
		k.t.sendKafka(o, 0, &messages.Envelope_TxnRequest{TxnRequest: q})
	}
}

// abort aborts the transaction the writer has open.
func (k *kafkaSinkWriter) abort(o *kernel.Out) { k.sendTxn(o, k.w.Abort()) }

// close is the sink closing with its task cancelled or failed
// (KafkaWriter.close): an exactly-once writer drops the slice's records
// and aborts its open transaction, unless the task had finished.
func (k *kafkaSinkWriter) close(o *kernel.Out) {
	if k.exactlyOnce() && !k.t.finishedAll {
		k.out = nil
		k.abort(o)
	}
}

// sendKafka sends a message to the broker delay after now, never before an
// earlier one (the producer's requests arrive in order).
func (t *StreamTask) sendKafka(o *kernel.Out, delay vt.Time, body messages.Body) {
	at := max(o.Now()+delay+vt.FromDuration(t.cfg.KafkaLatency()), t.lastKafka)
	t.lastKafka = at
	o.SendAt(jobgraph.KafkaName, at, body)
}
