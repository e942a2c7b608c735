package kernel

import "github.com/flinksim/flinksim/sim/logenc"

// The kernel's own events. sim/eventlog names them too (aliases), with the
// payloads of every other kind.

// Action is a live user action, delivered to To.
type Action struct {
	Action string // the action's text, with its at=
	To     string // the actor it was delivered to
}

// Kind is KindAction.
func (Action) Kind() Kind { return KindAction }

// AppendJSON appends the Action event's fields to b in the log's order.
func (e Action) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Str(b, "action", e.Action), "to", e.To)
}

// ActionIgnored is a user action that was not carried out, and why.
type ActionIgnored struct {
	Action string // the action's text
	Reason string
}

// Kind is KindActionIgnored.
func (ActionIgnored) Kind() Kind { return KindActionIgnored }

// AppendJSON appends the ActionIgnored event's fields to b in the log's order.
func (e ActionIgnored) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Str(b, "action", e.Action), "reason", e.Reason)
}

// Failure is a broken invariant that ended the run.
type Failure struct {
	Invariant string
	What      string
}

// Kind is KindFailure.
func (Failure) Kind() Kind { return KindFailure }

// AppendJSON appends the Failure event's fields to b in the log's order.
func (e Failure) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Str(b, "invariant", e.Invariant), "what", e.What)
}

// NetworkPartition is the start of a network cut between two hosts.
type NetworkPartition struct {
	HostA, HostB string
	DurationMs   int64
	Action       string
}

// Kind is KindNetworkPartition.
func (NetworkPartition) Kind() Kind { return KindNetworkPartition }

// AppendJSON appends the NetworkPartition event's fields to b in the log's order.
func (e NetworkPartition) AppendJSON(b []byte) []byte {
	b = logenc.Str(logenc.Str(b, "host_a", e.HostA), "host_b", e.HostB)
	return logenc.Str(logenc.Int(b, "duration_ms", e.DurationMs), "action", e.Action)
}

// NetworkPartitionHealed is the end of a network cut: the envelopes it
// dropped and the ends it told (RunEnded: the run ended first).
type NetworkPartitionHealed struct {
	HostA, HostB                      string
	DroppedEnvelopes, ConnectionsLost int64
	RunEnded                          bool
}

// Kind is KindNetworkPartitionHealed.
func (NetworkPartitionHealed) Kind() Kind { return KindNetworkPartitionHealed }

// AppendJSON appends the NetworkPartitionHealed event's fields to b in the log's order.
func (e NetworkPartitionHealed) AppendJSON(b []byte) []byte {
	b = logenc.Str(logenc.Str(b, "host_a", e.HostA), "host_b", e.HostB)
	b = logenc.Int(logenc.Int(b, "dropped_envelopes", e.DroppedEnvelopes), "connections_lost", e.ConnectionsLost)
	return runEnded(b, e.RunEnded)
}
