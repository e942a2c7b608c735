package task

import (
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
)

// failExternally is Task.failExternally: a running task fails with cause
// (its input channel's connection broke, or its TaskManager lost the
// JobManager); its operators close, so the exactly-once writer aborts its
// open transaction (KafkaWriter.close), and its TaskManager reports FAILED.
// A task already in a final state stays in it.
func (s *Subtask) failExternally(o *kernel.Out, cause string) {
	switch s.status {
	case status.Finished, status.Canceled, status.Failed:
		return
	}
	if s.exactlyOnce() && !s.finishedAll {
		s.sinkOut = nil
		s.sendTxn(o, s.w.Abort())
	}
	s.setState(o, status.Failed, cause)
}
