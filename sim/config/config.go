// Package config is the one registry of every flinksim setting: the Flink
// configuration keys the simulator honours, the shape of the simulated job,
// and the simulator's own knobs. Each setting is one row of a table (key,
// type, allowed range, Flink's default, the simulator's default, doc and a
// setter on *Config); parsing, YAML loading, validation and the log header
// all read that table.
package config

import (
	"slices"
	"time"
)

// Config holds every setting of one simulation run. The zero value is not
// useful: start from Default and apply overrides with Set or LoadYAML, then
// call Validate.
type Config struct {
	// Flink keys

	// Parallelism is parallelism.default: subtasks per operator (Flink 1, sim 2).
	Parallelism int
	// MaxParallelism is pipeline.max-parallelism: the number of key groups;
	// -1 means derived from the parallelism (KeyGroupRangeAssignment.computeDefaultMaxParallelism).
	MaxParallelism int
	// NumberOfTaskSlots is taskmanager.numberOfTaskSlots: slots per task
	// manager; -1 is read as 1 (TaskManagerConfiguration).
	NumberOfTaskSlots int
	// AutoWatermarkInterval is pipeline.auto-watermark-interval: virtual time
	// between periodic watermark emissions; 0 disables periodic watermarks.
	AutoWatermarkInterval time.Duration
	// BufferTimeout is execution.buffer-timeout: the longest a partly filled
	// network buffer waits before it is flushed; 0 flushes after every record.
	BufferTimeout time.Duration
	// OperatorChaining is pipeline.operator-chaining.enabled.
	OperatorChaining bool
	// AskTimeout is pekko.ask.timeout: how long the JobMaster's submitTask
	// waits for the TaskExecutor's acknowledgement.
	AskTimeout time.Duration
	// SlotRequestTimeout is slot.request.timeout (Flink 5 min, sim 10 s).
	SlotRequestTimeout time.Duration
	// BuffersPerChannel is taskmanager.network.memory.buffers-per-channel:
	// exclusive buffers per input channel, the initial credit.
	BuffersPerChannel int
	// FloatingBuffersPerGate is taskmanager.network.memory.floating-buffers-per-gate.
	FloatingBuffersPerGate int
	// TaskManagerCPUCores is taskmanager.cpu.cores; 0 means unset (Flink then
	// uses the number of slots).
	TaskManagerCPUCores float64
	// TaskHeapBytes is taskmanager.memory.task.heap.size in bytes.
	TaskHeapBytes int64
	// TaskOffHeapBytes is taskmanager.memory.task.off-heap.size in bytes.
	TaskOffHeapBytes int64
	// ManagedMemoryBytes is taskmanager.memory.managed.size in bytes.
	ManagedMemoryBytes int64
	// StateBackend is state.backend.type: "hashmap" (objects on the heap) or
	// "rocksdb" (serialized, slower per access).
	StateBackend StateBackendType
	// NetworkMemoryBytes is the network memory of a task manager in bytes
	// (key taskmanager.memory.network.max).
	NetworkMemoryBytes int64

	// Inputs of Flink's memory derivation (TaskExecutorMemory, Resolve).
	// They are not in the log header: the sizes they derive are.

	// ProcessMemoryBytes is taskmanager.memory.process.size; 0 is unset.
	ProcessMemoryBytes int64
	// FlinkMemoryBytes is taskmanager.memory.flink.size; 0 is unset.
	FlinkMemoryBytes int64
	// FrameworkHeapBytes and FrameworkOffHeapBytes are
	// taskmanager.memory.framework.heap.size and .off-heap.size.
	FrameworkHeapBytes, FrameworkOffHeapBytes int64
	// MetaspaceBytes is taskmanager.memory.jvm-metaspace.size.
	MetaspaceBytes int64
	// OverheadMinBytes, OverheadMaxBytes and OverheadFraction are
	// taskmanager.memory.jvm-overhead.min, .max and .fraction.
	OverheadMinBytes, OverheadMaxBytes int64
	OverheadFraction                   float64
	// ManagedFraction is taskmanager.memory.managed.fraction.
	ManagedFraction float64
	// NetworkMinBytes and NetworkFraction are taskmanager.memory.network.min
	// and .fraction.
	NetworkMinBytes int64
	NetworkFraction float64
	// memSet marks the memory keys set explicitly (memoryBit), which is
	// what Flink's derivation asks (config.contains).
	memSet uint32

	// the job's shape

	// SourceTopic is job.source.topic: the Kafka topic read by the source.
	SourceTopic string
	// SourcePartitions is job.source.partitions: partitions of the source topic (1..10000).
	SourcePartitions int
	// SourceParallelism is job.source.parallelism: subtasks of the Kafka
	// source and of the ParseOrder and Filter steps after it;
	// ParallelismDefault (-1) takes parallelism.default.
	SourceParallelism int
	// StartingOffsets is job.source.starting-offsets: "earliest" or "latest".
	StartingOffsets StartingOffsets
	// MaxPollRecords is job.source.max-poll-records: Kafka max.poll.records.
	MaxPollRecords int
	// KeyField is job.key-field: the record field used as key.
	KeyField string
	// TimeField is job.time-field: the record field holding event time.
	TimeField string
	// TimeCharacteristic is job.time-characteristic: "event-time" or "processing-time".
	TimeCharacteristic TimeCharacteristic
	// Operator is job.operator: "window" or "process".
	Operator OperatorKind
	// WindowParallelism is job.window.parallelism: subtasks of the keyed
	// operator (the window or the process function), and so the number of
	// key-group ranges; ParallelismDefault (-1) takes parallelism.default.
	WindowParallelism int
	// WindowType is job.window.type: "tumbling", "sliding" or "session".
	WindowType WindowType
	// WindowSize is job.window.size.
	WindowSize time.Duration
	// WindowSlide is job.window.slide; 0 means unset.
	WindowSlide time.Duration
	// WindowGap is job.window.gap (session windows); 0 means unset.
	WindowGap time.Duration
	// WindowOffset is job.window.offset.
	WindowOffset time.Duration
	// AllowedLateness is job.window.allowed-lateness.
	AllowedLateness time.Duration
	// SideOutputLateData is job.window.side-output-late-data.
	SideOutputLateData bool
	// Aggregate is job.window.aggregate: count, sum, min, max or avg.
	Aggregate AggregateKind
	// AggregateField is job.window.aggregate-field.
	AggregateField string
	// Filter is job.filter: a predicate such as `amount > 100`; "" means none.
	Filter string
	// OutOfOrderness is job.watermark.out-of-orderness
	// (WatermarkStrategy.forBoundedOutOfOrderness).
	OutOfOrderness time.Duration
	// Idleness is job.watermark.idleness; 0 means off.
	Idleness time.Duration
	// AlignmentGroup is job.watermark.alignment.group; "" means off.
	AlignmentGroup string
	// AlignmentMaxDrift is job.watermark.alignment.max-drift.
	AlignmentMaxDrift time.Duration
	// AlignmentUpdateInterval is job.watermark.alignment.update-interval.
	AlignmentUpdateInterval time.Duration
	// StateTTL is job.state.ttl; 0 means off.
	StateTTL time.Duration
	// SinkTopic is job.sink.topic.
	SinkTopic string
	// SinkParallelism is job.sink.parallelism: subtasks of the KafkaSink;
	// ParallelismDefault (-1) takes parallelism.default.
	SinkParallelism int

	// simulator-only

	// Seed is sim.seed: the root of every random generator.
	Seed uint64
	// Duration is sim.duration: virtual run length for unbounded runs.
	Duration time.Duration
	// TaskManagers is sim.taskmanagers (1..64), named tm-1, tm-2, ...
	TaskManagers int
	// SourceRate is sim.source.rate: records per virtual second.
	SourceRate float64
	// SourceKeys is sim.source.keys: distinct keys of generated records.
	SourceKeys int
	// SourceDisorder is sim.source.disorder: max event-time disorder of generated records.
	SourceDisorder time.Duration
	// SourceLateFraction is sim.source.late-fraction (0..1).
	SourceLateFraction float64
	// EventsPace is sim.events.pace: "backfill", "event-time" or
	// "file-order".
	EventsPace EventsPace
	// EventsGap is sim.events.gap: with file-order pace, the time between
	// a record without an arrival field and the one before it.
	EventsGap time.Duration
	// CostParse, CostFilter, CostWindow and CostSink are sim.cost.*: virtual
	// CPU time per record of each step.
	CostParse, CostFilter, CostWindow, CostSink time.Duration
	// HeartbeatInterval is heartbeat.interval (Flink 10 s).
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is heartbeat.timeout (Flink 50 s).
	HeartbeatTimeout time.Duration
	// RestartStrategy is restart-strategy.type; "default" lets Flink choose
	// (exponential-delay with checkpointing, none without).
	RestartStrategy RestartStrategyType
	// RestartInitialBackoff is restart-strategy.exponential-delay.initial-backoff.
	RestartInitialBackoff time.Duration
	// RestartJitterFactor is restart-strategy.exponential-delay.jitter-factor.
	RestartJitterFactor float64
	// FixedDelayAttempts is restart-strategy.fixed-delay.attempts.
	FixedDelayAttempts int
	// FixedDelay is restart-strategy.fixed-delay.delay.
	FixedDelay time.Duration
	// CheckpointInterval is execution.checkpointing.interval; 0 means
	// periodic checkpointing is off (Flink: unset).
	CheckpointInterval time.Duration
	// CheckpointTimeout is execution.checkpointing.timeout (Flink 10 min).
	CheckpointTimeout time.Duration
	// CheckpointMinPause is execution.checkpointing.min-pause.
	CheckpointMinPause time.Duration
	// MaxConcurrentCheckpoints is execution.checkpointing.max-concurrent-checkpoints.
	MaxConcurrentCheckpoints int
	// UnalignedCheckpoints is execution.checkpointing.unaligned.enabled.
	UnalignedCheckpoints bool
	// AlignedCheckpointTimeout is execution.checkpointing.aligned-checkpoint-timeout;
	// 0 never switches an aligned checkpoint to unaligned.
	AlignedCheckpointTimeout time.Duration
	// TolerableFailedCheckpoints is execution.checkpointing.tolerable-failed-checkpoints.
	TolerableFailedCheckpoints int
	// IncrementalCheckpoints is state.backend.incremental (RocksDB only).
	IncrementalCheckpoints bool
	// DeliveryGuarantee is sink.delivery-guarantee: none, at-least-once or
	// exactly-once (KafkaSink's DeliveryGuarantee; Flink's default none).
	DeliveryGuarantee DeliveryGuarantee
	// TransactionalIDPrefix is sink.transactional-id-prefix.
	TransactionalIDPrefix string
	// TransactionTimeout is the sink producer's transaction.timeout.ms
	// (properties.transaction.timeout.ms): the broker aborts a transaction
	// still open this long after it began.
	TransactionTimeout time.Duration
	// OutputIsolation is sim.output.isolation-level: the isolation.level of
	// the consumer whose view --output writes (Kafka's default read_uncommitted).
	OutputIsolation IsolationLevel
	// UploadSpeed is sim.checkpoint.upload-speed: bytes per virtual second
	// the asynchronous part of a snapshot uploads.
	UploadSpeed int64
	// ChannelStateSpeed is sim.checkpoint.channel-state-speed: bytes per
	// virtual second the ChannelStateWriter writes persisted in-flight
	// buffers of an unaligned checkpoint.
	ChannelStateSpeed int64
	// CheckpointSyncTime is sim.checkpoint.sync-time: the fixed virtual time
	// of a snapshot's synchronous part, before 1 µs per state entry.
	CheckpointSyncTime time.Duration
	// CheckpointFileTime is sim.checkpoint.file-time: the virtual time the
	// checkpoint storage spends on each file a checkpoint writes.
	CheckpointFileTime time.Duration
	// MemoryThreshold is state.storage.fs.memory-threshold: a state stream
	// at most this large travels inside the acknowledgement (and the
	// metadata) instead of a file of its own.
	MemoryThreshold int64
	// CheckpointAckTime is sim.checkpoint.ack-time: the virtual time from a
	// snapshot's asynchronous part ending to the coordinator having taken its
	// acknowledgement, beyond sim.rpc.latency.
	CheckpointAckTime time.Duration
	// LogNettyFrames is sim.log.netty-frames: log every NettyMessage a
	// remote channel exchanges as a netty_frame event with its bytes in hex.
	LogNettyFrames bool
	// CostRocksDB is sim.cost.state.rocksdb: extra virtual CPU time of one
	// keyed-state access when state.backend.type is rocksdb (serialization
	// and a JNI call into RocksDB instead of a heap lookup).
	CostRocksDB time.Duration
	// NetworkLatency is sim.network.latency (remote channels, and a Kafka
	// client's requests to the broker).
	NetworkLatency time.Duration
	// RPCOneWay is sim.rpc.latency: one-way delay of an RPC between Flink
	// components (JobMaster, CheckpointCoordinator, ResourceManager,
	// TaskExecutor, and operator events between a task and its
	// coordinator).
	RPCOneWay time.Duration
	// TaskDeployTime is sim.task.deploy-time: from a SubmitTask reaching the
	// TaskExecutor to the task leaving DEPLOYING (Task.doRun: library
	// loading, network setup).
	TaskDeployTime time.Duration
	// TaskInitTime is sim.task.init-time: INITIALIZING to RUNNING
	// (StreamTask.restore: state restore, operator open, the Kafka client's
	// creation, partition requests at its end).
	TaskInitTime time.Duration
	// LocalLatency is sim.network.local-latency (local channels).
	LocalLatency time.Duration
	// BufferRecords is sim.buffer.records: records per network buffer
	// (1..100000), or 0 to derive it from SegmentSize and RecordBytes
	// (RecordsPerBuffer).
	BufferRecords int
	// MaxBuffersPerChannel is
	// taskmanager.network.memory.max-buffers-per-channel: the most pool
	// buffers one subpartition holds (0: no bound).
	MaxBuffersPerChannel int
	// MaxOverdraftBuffersPerGate is
	// taskmanager.network.memory.max-overdraft-buffers-per-gate: buffers a
	// result partition's pool may lend beyond its size to a task in the
	// middle of writing a record or a broadcast (FLIP-227).
	MaxOverdraftBuffersPerGate int
	// CheckpointsAfterTasksFinish is
	// execution.checkpointing.checkpoints-after-tasks-finish (FLIP-147):
	// checkpoints go on after some tasks finished, and a task whose input
	// ended waits for a final checkpoint before it finishes.
	CheckpointsAfterTasksFinish bool
	// SegmentSize is taskmanager.memory.segment-size: the size of one
	// network buffer (a memory segment) in bytes.
	SegmentSize int64
	// RecordBytes is sim.record.bytes: serialized size of one record.
	RecordBytes int
	// Buffer debloating (FLIP-183; BufferDebloatConfiguration), off by
	// default as in Flink: every DebloatPeriod each input gate measures its
	// throughput and announces to its producers the buffer size that lets
	// the data in its buffers be consumed in DebloatTarget.
	//
	// DebloatEnabled is taskmanager.network.memory.buffer-debloat.enabled.
	DebloatEnabled bool
	// DebloatTarget is taskmanager.network.memory.buffer-debloat.target.
	DebloatTarget time.Duration
	// DebloatPeriod is taskmanager.network.memory.buffer-debloat.period.
	DebloatPeriod time.Duration
	// DebloatSamples is taskmanager.network.memory.buffer-debloat.samples
	// (the moving average's number of samples).
	DebloatSamples int
	// DebloatThresholdPercentages is
	// taskmanager.network.memory.buffer-debloat.threshold-percentages: a
	// new size closer than this to the last announced one is not announced.
	DebloatThresholdPercentages int
	// MinSegmentSize is taskmanager.memory.min-segment-size (bytes): the
	// smallest buffer size debloating announces.
	MinSegmentSize int64
}

const mebibyte = 1 << 20

// ParallelismDefault is an operator parallelism that takes
// parallelism.default, as Flink's ExecutionConfig.PARALLELISM_DEFAULT (-1)
// does for an operator whose parallelism the job does not set.
const ParallelismDefault = -1

// orDefault is an operator's parallelism: p, or parallelism.default for
// ParallelismDefault.
func (c Config) orDefault(p int) int {
	if p == ParallelismDefault {
		return c.Parallelism
	}
	return p
}

// SourceSubtasks is the parallelism of the source and the ParseOrder and
// Filter steps after it: job.source.parallelism, or parallelism.default.
func (c Config) SourceSubtasks() int { return c.orDefault(c.SourceParallelism) }

// WindowSubtasks is the parallelism of the keyed operator:
// job.window.parallelism, or parallelism.default.
func (c Config) WindowSubtasks() int { return c.orDefault(c.WindowParallelism) }

// SinkSubtasks is the parallelism of the KafkaSink: job.sink.parallelism,
// or parallelism.default.
func (c Config) SinkSubtasks() int { return c.orDefault(c.SinkParallelism) }

// Default returns the simulator's defaults for every setting.
func Default() Config {
	return Config{
		Parallelism:                 2,
		MaxParallelism:              -1,
		NumberOfTaskSlots:           1,
		AutoWatermarkInterval:       200 * time.Millisecond,
		BufferTimeout:               100 * time.Millisecond,
		OperatorChaining:            true,
		SlotRequestTimeout:          10 * time.Second,
		AskTimeout:                  10 * time.Second,
		BuffersPerChannel:           2,
		FloatingBuffersPerGate:      8,
		TaskManagerCPUCores:         0,
		TaskHeapBytes:               384 * mebibyte,
		TaskOffHeapBytes:            0,
		ManagedMemoryBytes:          512 * mebibyte,
		NetworkMemoryBytes:          128 * mebibyte,
		FrameworkHeapBytes:          defaultFrameworkHeap,
		FrameworkOffHeapBytes:       defaultFrameworkOffHeap,
		MetaspaceBytes:              defaultMetaspace,
		OverheadMinBytes:            defaultOverheadMin,
		OverheadMaxBytes:            defaultOverheadMax,
		OverheadFraction:            defaultOverheadFraction,
		ManagedFraction:             defaultManagedFraction,
		NetworkMinBytes:             defaultNetworkMin,
		NetworkFraction:             defaultNetworkFraction,
		SourceTopic:                 "orders",
		SourcePartitions:            4,
		SourceParallelism:           ParallelismDefault,
		StartingOffsets:             OffsetsEarliest,
		MaxPollRecords:              500,
		KeyField:                    "key",
		TimeField:                   "ts",
		TimeCharacteristic:          EventTime,
		Operator:                    OperatorWindow,
		WindowParallelism:           ParallelismDefault,
		WindowType:                  WindowTumbling,
		WindowSize:                  time.Minute,
		WindowSlide:                 0,
		WindowGap:                   0,
		WindowOffset:                0,
		AllowedLateness:             0,
		SideOutputLateData:          false,
		Aggregate:                   AggregateCount,
		AggregateField:              "amount",
		Filter:                      "",
		OutOfOrderness:              5 * time.Second,
		Idleness:                    0,
		AlignmentGroup:              "",
		AlignmentMaxDrift:           0,
		AlignmentUpdateInterval:     time.Second,
		StateTTL:                    0,
		SinkTopic:                   "orders-per-minute",
		SinkParallelism:             ParallelismDefault,
		Seed:                        1,
		Duration:                    5 * time.Minute,
		TaskManagers:                2,
		SourceRate:                  1000,
		SourceKeys:                  100,
		SourceDisorder:              2 * time.Second,
		SourceLateFraction:          0,
		EventsPace:                  PaceBackfill,
		EventsGap:                   10 * time.Millisecond,
		CostParse:                   20 * time.Microsecond,
		CostFilter:                  2 * time.Microsecond,
		CostWindow:                  10 * time.Microsecond,
		CostSink:                    10 * time.Microsecond,
		NetworkLatency:              200 * time.Microsecond,
		RPCOneWay:                   time.Millisecond,
		TaskDeployTime:              10 * time.Millisecond,
		TaskInitTime:                100 * time.Millisecond,
		StateBackend:                BackendHashMap,
		CostRocksDB:                 15 * time.Microsecond,
		LogNettyFrames:              false,
		CheckpointInterval:          0,
		CheckpointTimeout:           time.Minute,
		CheckpointMinPause:          0,
		MaxConcurrentCheckpoints:    1,
		AlignedCheckpointTimeout:    0,
		DeliveryGuarantee:           DeliveryNone,
		TransactionalIDPrefix:       "flinksim",
		TransactionTimeout:          15 * time.Minute,
		OutputIsolation:             ReadUncommitted,
		UploadSpeed:                 50 << 20,
		ChannelStateSpeed:           50 << 20,
		CheckpointSyncTime:          2 * time.Millisecond,
		CheckpointFileTime:          5 * time.Millisecond,
		MemoryThreshold:             20 << 10,
		CheckpointAckTime:           2 * time.Millisecond,
		HeartbeatInterval:           time.Second,
		HeartbeatTimeout:            5 * time.Second,
		RestartStrategy:             RestartDefault,
		RestartInitialBackoff:       time.Second,
		RestartJitterFactor:         0.1,
		FixedDelayAttempts:          1,
		FixedDelay:                  time.Second,
		LocalLatency:                5 * time.Microsecond,
		BufferRecords:               0,
		SegmentSize:                 32 << 10,
		MaxBuffersPerChannel:        10,
		MaxOverdraftBuffersPerGate:  5,
		CheckpointsAfterTasksFinish: true,
		RecordBytes:                 100,
		DebloatTarget:               time.Second,
		DebloatPeriod:               200 * time.Millisecond,
		DebloatSamples:              20,
		DebloatThresholdPercentages: 25,
		MinSegmentSize:              256,
	}
}

// RPCLatency is the one-way virtual delay of an RPC between Flink's
// components (sim.rpc.latency).
func (c *Config) RPCLatency() time.Duration { return c.RPCOneWay }

// KafkaLatency is the one-way virtual delay of a Kafka client's request to
// the broker or its answer (fetch, list offsets, produce, transactions):
// the data network's latency, sim.network.latency.
func (c *Config) KafkaLatency() time.Duration { return c.NetworkLatency }

// RecordsPerBuffer is how many records one network buffer holds:
// sim.buffer.records when set, otherwise as many serialized records of
// sim.record.bytes as fit in a memory segment of
// taskmanager.memory.segment-size (Flink's buffers are segments filled with
// serialized records; 32 kb / 100 bytes = 327), at least one (a record
// larger than a segment spans buffers in Flink; here it takes one).
func (c *Config) RecordsPerBuffer() int {
	if c.BufferRecords > 0 {
		return c.BufferRecords
	}
	return int(max(1, c.SegmentSize/int64(max(1, c.RecordBytes))))
}

// FromSettings is the configuration a log header's settings describe
// (key -> value as Values writes them): the defaults with every key set in
// key order (so that an error names the same key every time), then
// validated. Errors are Set's and Validate's.
func FromSettings(settings map[string]string) (Config, error) {
	cfg := Default()
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := cfg.Set(k, settings[k]); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}
