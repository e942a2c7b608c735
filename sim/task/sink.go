package task

// The KafkaSink at the end of the chain (sim/kafka.Writer) and the ordered
// connection to the broker.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// exactlyOnce reports whether the task writes to the sink in transactions.
func (s *Subtask) exactlyOnce() bool { return s.w != nil && s.w.ExactlyOnce() }

// sendKafka sends a message to the broker delay after now, never before an
// earlier one (the producer's requests arrive in order).
func (s *Subtask) sendKafka(o *kernel.Out, delay vt.Time, body messages.Body) {
	at := max(o.Now()+delay+vt.FromDuration(s.cfg.KafkaLatency()), s.ck.lastKafka)
	s.ck.lastKafka = at
	o.SendAt(jobgraph.KafkaName, at, body)
}

// sendTxn sends the sink writer's transaction requests to the broker, in
// order.
func (s *Subtask) sendTxn(o *kernel.Out, reqs []*messages.TxnRequest) {
	for _, q := range reqs {
		s.sendKafka(o, 0, &messages.Envelope_TxnRequest{TxnRequest: q})
	}
}

// flushSink sends the sink records of the slice so far, delay after now.
func (s *Subtask) flushSink(o *kernel.Out, delay vt.Time) {
	if len(s.sinkOut) == 0 {
		return
	}
	s.sendKafka(o, delay, &messages.Envelope_Produce{Produce: s.w.Produce(s.cfg.SinkTopic, s.sinkOut)})
	s.sinkOut = nil
}
