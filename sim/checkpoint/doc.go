// Package checkpoint reproduces Flink 1.20's checkpointing as pure, deterministic state
// machines: the JobManager's CheckpointCoordinator (trigger decisions, acknowledgements,
// timeouts, subsumption, failure counting, statistics) and a task's barrier handling on its
// input gate (aligned, unaligned, and aligned with a timeout that switches to unaligned).
//
// Every timestamp and duration is an int64 of virtual milliseconds, passed in by the caller
// (nowMs) and never decreasing across calls to one machine. Nothing here reads a clock,
// starts a goroutine or draws a random number; when Flink draws one (the initial delay of
// the periodic trigger) the caller passes the drawn value. Iteration orders that reach an
// output are fixed (ids and channels ascending, tasks sorted).
//
// The Flink classes followed (apache/flink, release-1.20 line), read for this package:
//
//   - Coordinator: org.apache.flink.runtime.checkpoint.CheckpointCoordinator (triggering,
//     receiveAcknowledgeMessage, receiveDeclineMessage, CheckpointCanceller,
//     dropSubsumedCheckpoints, ScheduledTrigger, start/stopCheckpointScheduler),
//     CheckpointRequestDecider (queue order, max concurrent, min pause, queue limit),
//     PendingCheckpoint (acknowledgeTask, canBeSubsumed), CompletedCheckpoint,
//     CheckpointFailureManager (tolerable failures, EXCEEDED_CHECKPOINT_TOLERABLE_FAILURE_MESSAGE),
//     PendingCheckpointStats / DefaultCheckpointStatsTracker (history, sizes, durations),
//     CheckpointCoordinatorConfiguration and CheckpointConfig (limits and messages).
//   - FailureReason: CheckpointFailureReason (messages verbatim) and
//     CheckpointFailureManager.checkFailureCounter (which reasons count).
//   - BarrierHandler: org.apache.flink.streaming.runtime.io.checkpointing.SingleCheckpointBarrierHandler
//     with WaitingForFirstBarrier, CollectingBarriers, AlternatingWaitingForFirstBarrier,
//     AlternatingCollectingBarriers, AlternatingWaitingForFirstBarrierUnaligned,
//     AlternatingCollectingBarriersUnaligned, ChannelState and BarrierAlignmentUtil;
//     org.apache.flink.runtime.checkpoint.CheckpointOptions.forConfig for which barriers are
//     unaligned or time out.
//   - Defaults: CheckpointingOptions (Flink 1.20): interval unset (off), mode EXACTLY_ONCE,
//     timeout 10 min, max concurrent 1, min pause 0, unaligned off, aligned-checkpoint-timeout
//     0, tolerable failed checkpoints 0, checkpoints after tasks finish on.
//
// Only EXACTLY_ONCE is modelled (AT_LEAST_ONCE's CheckpointBarrierTracker is not).
package checkpoint
