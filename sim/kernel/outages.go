package kernel

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// Outages of what the cluster depends on outside its own processes, which
// the scheduler decides as it decides cuts and stalls:
//
//   - the checkpoint storage (fail-checkpoint-storage): every write fails
//     for a while. A task's asynchronous snapshot part (Flink's
//     AsyncCheckpointRunnable) uploads between the snapshot and its
//     acknowledgement; if the outage overlaps that, the upload fails and
//     AsyncCheckpointRunnable.handleExecutionException declines the
//     checkpoint with CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION
//     instead of acknowledging it. The scheduler turns the acknowledgement
//     into that decline as it is delivered (the task's own snapshot, its
//     pre-committed transaction included, is as it was: Flink's task does
//     not undo it either), and the CheckpointCoordinator's
//     CheckpointFailureManager counts it against
//     execution.checkpointing.tolerable-failed-checkpoints.
//   - the Kafka broker (kafka-unavailable): unreachable for a while. The
//     clients (KafkaConsumer's fetcher, the producer's Sender, the
//     transaction requests) fail to connect and retry every
//     reconnect.backoff.ms / retry.backoff.ms until it is back; the
//     scheduler holds every envelope between the broker's host and another
//     host until the outage ends (the first retry after it succeeds), while
//     the broker's own timers (transaction.timeout.ms) go on. A produce is
//     held, not failed: the swarm keeps outages below the producer's
//     delivery.timeout.ms (120 s) and max.block.ms (60 s).
const (
	KindStorageUnavailable Kind = "checkpoint_storage_unavailable" // duration_ms, action
	KindStorageAvailable   Kind = "checkpoint_storage_available"   // failed_uploads
	KindUploadFailed       Kind = "checkpoint_upload_failed"       // task, checkpoint_id: declined with CHECKPOINT_ASYNC_EXCEPTION
	KindKafkaUnavailable   Kind = "kafka_unavailable"              // host, duration_ms, action
	KindKafkaAvailable     Kind = "kafka_available"                // host, held_envelopes
)

// KafkaHost is the host of the Kafka broker (cluster.hostOf places it so).
const KafkaHost = "kafka"

// ReasonAsyncException is CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION
// as a DeclineCheckpoint names it (sim/checkpoint parses it).
const ReasonAsyncException = "CHECKPOINT_ASYNC_EXCEPTION"

// Outage is a fail-checkpoint-storage or a kafka-unavailable.
type Outage struct {
	Storage  bool // the checkpoint storage; else the Kafka broker
	Duration vt.Time
}

type activeOutage struct {
	Outage
	start, end vt.Time
	count      int64 // uploads failed, envelopes held
	logged     bool  // its end is logged
}

// outages are the outages of a run, in start order. A storage outage stays
// after its end: an acknowledgement whose upload overlapped it may be due
// long after.
type outages struct {
	list []*activeOutage
	// open counts those whose end is not logged yet
	open int
}

func (n *network) startOutage(t vt.Time, o Outage, text string) {
	a := &activeOutage{Outage: o, start: t, end: t + o.Duration}
	n.outages.list = append(n.outages.list, a)
	n.outages.open++
	if o.Storage {
		n.k.log(t, SchedulerName, StorageUnavailable{DurationMs: vt.Millis(o.Duration), Action: text})
		return
	}
	n.k.log(t, SchedulerName, KafkaUnavailable{Host: KafkaHost, DurationMs: vt.Millis(o.Duration), Action: text})
}

// expireOutages logs the end of the outages over by t (all of them when
// the run ends); a Kafka outage over is dropped (what it held is due at
// its end, a step of its own).
func (n *network) expireOutages(t vt.Time, runEnded bool) {
	if n.outages.open == 0 {
		return
	}
	kept := n.outages.list[:0]
	for _, a := range n.outages.list {
		if !a.logged && (a.end <= t || runEnded) {
			a.logged = true
			n.outages.open--
			if a.Storage {
				n.k.log(min(a.end, t), SchedulerName, StorageAvailable{FailedUploads: a.count, RunEnded: a.end > t})
			} else {
				n.k.log(min(a.end, t), SchedulerName, KafkaAvailable{Host: KafkaHost, HeldEnvelopes: a.count, RunEnded: a.end > t})
			}
		}
		if a.Storage || !a.logged {
			kept = append(kept, a)
		}
	}
	clear(n.outages.list[len(kept):])
	n.outages.list = kept
}

// outage applies the outages to e, due at t: an acknowledgement whose
// upload overlapped a storage outage becomes the task's decline (false: e
// is delivered, changed), an envelope between the broker's host and
// another host during a Kafka outage is queued again for its end (true).
func (n *network) outage(t vt.Time, e *messages.Envelope) bool {
	for _, a := range n.outages.list {
		if a.Storage {
			ack, ok := e.Body.(*messages.Envelope_AcknowledgeCheckpoint)
			// the upload runs from the snapshot (when the acknowledgement
			// was sent on its way) until the acknowledgement is due
			if ok && e.From != SchedulerName && e.From != UserName && a.start <= t && vt.Of(e.SentAt) < a.end {
				a.count++
				id, task := ack.AcknowledgeCheckpoint.CheckpointId, ack.AcknowledgeCheckpoint.Task
				n.k.log(t, SchedulerName, UploadFailed{Task: e.From, CheckpointID: id})
				e.Body = &messages.Envelope_DeclineCheckpoint{DeclineCheckpoint: &messages.DeclineCheckpoint{
					CheckpointId: id, Task: task, Reason: ReasonAsyncException}}
			}
			continue
		}
		if t < a.start || t >= a.end || e.From == UserName || e.From == SchedulerName {
			continue
		}
		if hf, ht := n.hosts[e.From], n.hosts[e.To]; hf != ht && (hf == KafkaHost || ht == KafkaHost) {
			a.count++
			e.DeliverAt = a.end.Micros()
			n.k.q.Push(e)
			return true
		}
	}
	return false
}
