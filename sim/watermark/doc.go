// Package watermark reproduces Flink 1.20's event-time watermark machinery as pure,
// deterministic state machines driven by the caller's virtual clock.
//
// Every timestamp and duration in this package is an int64 of virtual milliseconds
// (event time for watermarks and record timestamps, processing time for nowMs,
// timeouts and intervals). Nothing here reads a clock, starts a goroutine or draws a
// random number; iteration orders that reach an output are fixed (registration order
// or sorted keys).
//
// The Flink classes followed (apache/flink tag release-1.20.0, commit
// b1fe7b4099497f02b4658df7c3de8e45b62b7e21, unless noted):
//
//   - BoundedOutOfOrderness: org.apache.flink.api.common.eventtime.BoundedOutOfOrdernessWatermarks
//     (flink-core/.../eventtime/BoundedOutOfOrdernessWatermarks.java, blob a6cea600ee73).
//   - Emitter: org.apache.flink.streaming.api.operators.source.WatermarkToDataOutput and
//     org.apache.flink.streaming.runtime.operators.TimestampsAndWatermarksOperator.WatermarkEmitter.
//   - IdlenessTimer, WatermarksWithIdleness:
//     org.apache.flink.api.common.eventtime.WatermarksWithIdleness (and its IdlenessTimer).
//   - SplitMultiplexer: org.apache.flink.streaming.api.operators.SourceOperator,
//     org.apache.flink.streaming.api.operators.source.ProgressiveTimestampsAndWatermarks
//     (SplitLocalOutputs, StreamingReaderOutput, IdlenessManager),
//     org.apache.flink.streaming.api.operators.source.SourceOutputWithWatermarks,
//     org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer and
//     org.apache.flink.api.common.eventtime.CombinedWatermarkStatus.
//   - StatusWatermarkValve: org.apache.flink.streaming.runtime.watermarkstatus.StatusWatermarkValve.
//   - AlignmentGroup: org.apache.flink.runtime.source.coordinator.SourceCoordinator
//     (announceCombinedWatermark, handleReportedWatermark, WatermarkAggregator) and
//     org.apache.flink.api.common.eventtime.WatermarkAlignmentParams (FLIP-182).
//
// None of the types is safe for concurrent use; each belongs to one simulated task.
package watermark

import "math"

const (
	// MinWatermark is Java's Long.MIN_VALUE: the watermark before anything is known
	// (org.apache.flink.streaming.api.watermark.Watermark.UNINITIALIZED).
	MinWatermark int64 = math.MinInt64

	// MaxWatermark is Java's Long.MAX_VALUE: the end-of-input watermark
	// (Watermark.MAX_WATERMARK) that fires every event-time timer.
	MaxWatermark int64 = math.MaxInt64
)
