package messages

// LostRPCKind is one RPC lose-rpc can lose: its value on the wire, its word
// (the --action syntax's, the log's rpc field) and which envelopes carry it.
type LostRPCKind struct {
	RPC  LostRPC
	Word string
	Is   func(*Envelope) bool
}

// LostRPCKinds is the one list of the RPCs lose-rpc can lose, in the order
// the help names them: the acknowledgement and the decline a task sends
// the CheckpointCoordinator (CheckpointCoordinatorGateway.acknowledgeCheckpoint,
// declineCheckpoint), the completion the coordinator sends a task
// (TaskExecutorGateway.confirmCheckpoint, notifyCheckpointComplete). The
// action syntax, the scheduler and the swarm all read it.
var LostRPCKinds = []LostRPCKind{
	{LostRPC_LOST_RPC_ACKNOWLEDGE_CHECKPOINT, "acknowledge-checkpoint", func(e *Envelope) bool {
		_, ok := e.Body.(*Envelope_AcknowledgeCheckpoint)
		return ok
	}},
	{LostRPC_LOST_RPC_DECLINE_CHECKPOINT, "decline-checkpoint", func(e *Envelope) bool {
		_, ok := e.Body.(*Envelope_DeclineCheckpoint)
		return ok
	}},
	{LostRPC_LOST_RPC_NOTIFY_CHECKPOINT_COMPLETE, "notify-checkpoint-complete", func(e *Envelope) bool {
		_, ok := e.Body.(*Envelope_NotifyCheckpointComplete)
		return ok
	}},
}

// Kind is r's entry in LostRPCKinds; false for a value not in it.
func (r LostRPC) Kind() (LostRPCKind, bool) {
	for _, k := range LostRPCKinds {
		if k.RPC == r {
			return k, true
		}
	}
	return LostRPCKind{}, false
}

// Word is r's word in LostRPCKinds ("" for a value not in it).
func (r LostRPC) Word() string {
	k, _ := r.Kind()
	return k.Word
}

// LostRPCNamed is the RPC whose word is w; false for none.
func LostRPCNamed(w string) (LostRPC, bool) {
	for _, k := range LostRPCKinds {
		if k.Word == w {
			return k.RPC, true
		}
	}
	return LostRPC_LOST_RPC_UNSPECIFIED, false
}
