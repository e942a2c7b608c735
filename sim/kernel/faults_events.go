package kernel

import "github.com/flinksim/flinksim/sim/logenc"

// The events of the scheduler's other faults (faults.go); sim/eventlog
// names them too (aliases).

// HostStalled is the start of a stalled host (stall-taskmanager).
type HostStalled struct {
	Host       string
	DurationMs int64
	Action     string
}

// Kind is KindHostStalled.
func (HostStalled) Kind() Kind { return KindHostStalled }

// AppendJSON appends the HostStalled event's fields to b in the log's order.
func (e HostStalled) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Int(logenc.Str(b, "host", e.Host), "duration_ms", e.DurationMs), "action", e.Action)
}

// HostResumed is the end of a stall: the envelopes held for the host
// (RunEnded: the run ended first).
type HostResumed struct {
	Host          string
	HeldEnvelopes int64
	RunEnded      bool
}

// Kind is KindHostResumed.
func (HostResumed) Kind() Kind { return KindHostResumed }

// AppendJSON appends the HostResumed event's fields to b in the log's order.
func (e HostResumed) AppendJSON(b []byte) []byte {
	return runEnded(logenc.Int(logenc.Str(b, "host", e.Host), "held_envelopes", e.HeldEnvelopes), e.RunEnded)
}

// NetworkJitter is the start of jitter on the links between hosts.
type NetworkJitter struct {
	DurationMs, MaxJitterUs int64
	Action                  string
}

// Kind is KindNetworkJitter.
func (NetworkJitter) Kind() Kind { return KindNetworkJitter }

// AppendJSON appends the NetworkJitter event's fields to b in the log's order.
func (e NetworkJitter) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Int(logenc.Int(b, "duration_ms", e.DurationMs), "max_jitter_us", e.MaxJitterUs), "action", e.Action)
}

// NetworkJitterEnded is the end of jitter: the envelopes it delayed.
type NetworkJitterEnded struct {
	JitteredEnvelopes int64
	RunEnded          bool
}

// Kind is KindJitterEnded.
func (NetworkJitterEnded) Kind() Kind { return KindJitterEnded }

// AppendJSON appends the NetworkJitterEnded event's fields to b in the log's order.
func (e NetworkJitterEnded) AppendJSON(b []byte) []byte {
	return runEnded(logenc.Int(b, "jittered_envelopes", e.JitteredEnvelopes), e.RunEnded)
}

// RPCLost is an RPC the network lost (lose-rpc).
type RPCLost struct {
	RPC, From, To string
}

// Kind is KindRPCLost.
func (RPCLost) Kind() Kind { return KindRPCLost }

// AppendJSON appends the RPCLost event's fields to b in the log's order.
func (e RPCLost) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Str(logenc.Str(b, "rpc", e.RPC), "from", e.From), "to", e.To)
}

// RPCLossUnused is a lose-rpc that found no RPC to lose in its time.
type RPCLossUnused struct {
	RPC      string
	RunEnded bool
}

// Kind is KindRPCLossUnused.
func (RPCLossUnused) Kind() Kind { return KindRPCLossUnused }

// AppendJSON appends the RPCLossUnused event's fields to b in the log's order.
func (e RPCLossUnused) AppendJSON(b []byte) []byte {
	return runEnded(logenc.Str(b, "rpc", e.RPC), e.RunEnded)
}

func runEnded(b []byte, ended bool) []byte {
	if ended {
		b = logenc.Bool(b, "run_ended", true)
	}
	return b
}

// StorageUnavailable is the start of a checkpoint storage outage
// (fail-checkpoint-storage).
type StorageUnavailable struct {
	DurationMs int64  // the outage's length, virtual ms
	Action     string // the action as given
}

// Kind is KindStorageUnavailable.
func (StorageUnavailable) Kind() Kind { return KindStorageUnavailable }

// AppendJSON appends the StorageUnavailable event's fields to b in the log's order.
func (e StorageUnavailable) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Int(b, "duration_ms", e.DurationMs), "action", e.Action)
}

// StorageAvailable is its end: the uploads that failed.
type StorageAvailable struct {
	FailedUploads int64
	RunEnded      bool
}

// Kind is KindStorageAvailable.
func (StorageAvailable) Kind() Kind { return KindStorageAvailable }

// AppendJSON appends the StorageAvailable event's fields to b in the log's order.
func (e StorageAvailable) AppendJSON(b []byte) []byte {
	return runEnded(logenc.Int(b, "failed_uploads", e.FailedUploads), e.RunEnded)
}

// UploadFailed is a task's snapshot upload that failed: the task declines
// the checkpoint with CHECKPOINT_ASYNC_EXCEPTION.
type UploadFailed struct {
	Task         string
	CheckpointID int64
}

// Kind is KindUploadFailed.
func (UploadFailed) Kind() Kind { return KindUploadFailed }

// AppendJSON appends the UploadFailed event's fields to b in the log's order.
func (e UploadFailed) AppendJSON(b []byte) []byte {
	return logenc.Int(logenc.Str(b, "task", e.Task), "checkpoint_id", e.CheckpointID)
}

// KafkaUnavailable is the start of a Kafka outage (kafka-unavailable).
type KafkaUnavailable struct {
	Host       string // the broker's host, cut off from every other host
	DurationMs int64  // the outage's length, virtual ms
	Action     string // the action as given
}

// Kind is KindKafkaUnavailable.
func (KafkaUnavailable) Kind() Kind { return KindKafkaUnavailable }

// AppendJSON appends the KafkaUnavailable event's fields to b in the log's order.
func (e KafkaUnavailable) AppendJSON(b []byte) []byte {
	return logenc.Str(logenc.Int(logenc.Str(b, "host", e.Host), "duration_ms", e.DurationMs), "action", e.Action)
}

// KafkaAvailable is its end: the envelopes it held.
type KafkaAvailable struct {
	Host          string
	HeldEnvelopes int64
	RunEnded      bool
}

// Kind is KindKafkaAvailable.
func (KafkaAvailable) Kind() Kind { return KindKafkaAvailable }

// AppendJSON appends the KafkaAvailable event's fields to b in the log's order.
func (e KafkaAvailable) AppendJSON(b []byte) []byte {
	return runEnded(logenc.Int(logenc.Str(b, "host", e.Host), "held_envelopes", e.HeldEnvelopes), e.RunEnded)
}
