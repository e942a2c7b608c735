package config

import (
	"errors"
	"fmt"
	"github.com/flinksim/flinksim/sim/filter"
	"time"
)

// Slots returns the number of slots per TaskManager as Flink reads
// taskmanager.numberOfTaskSlots: -1 counts as 1 (ConfigurationParserUtils.getSlot).
func (c Config) Slots() int {
	if c.NumberOfTaskSlots == -1 {
		return 1
	}
	return c.NumberOfTaskSlots
}

// millis truncates d to whole milliseconds as Java's Duration.toMillis does
// for the non-negative durations Flink's window and TTL APIs take.
func millis(d time.Duration) int64 { return d.Milliseconds() }

// Validate first re-checks every field against its setting's range (so a
// Config built in code is held to the same rules as Set), then checks the
// rules that involve more than one setting, in a fixed order, and returns
// all broken rules joined (errors.Join), or nil. Each
// message names the keys involved and, where Flink refuses the same thing,
// ends with Flink's own message:
//   - parallelism.default <= pipeline.max-parallelism when the latter is set
//     ("Maximum parallelism must not be smaller than parallelism.",
//     KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex);
//   - window assigner arguments, in milliseconds as Flink takes them, with the
//     constructor messages of Tumbling/Sliding EventTime/ProcessingTime
//     windows and EventTime/ProcessingTime session windows; slide only for
//     sliding, gap only for session, offset not for session;
//   - an aggregate other than count needs job.window.aggregate-field;
//   - job.state.ttl, when set, is at least 1 ms ("TTL is expected to be
//     positive.", StateTtlConfig);
//   - watermark alignment, when on, needs an update interval of at least 1 ms;
//   - heartbeat.interval at least 1 ms and heartbeat.timeout not below it
//     (HeartbeatServicesImpl: "The heartbeat timeout should be larger or
//     equal than the heartbeat interval.");
//   - the memory fractions below 1 (RangeFraction);
//   - an input channel has at least one buffer (exclusive + floating).
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	for _, s := range registry {
		probe := c
		if err := s.set(&probe, s.get(&c)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // cross-field rules assume valid fields
	}

	if c.SegmentSize&(c.SegmentSize-1) != 0 {
		// ConfigurationParserUtils.checkConfigParameter on the page size
		add("taskmanager.memory.segment-size %s: Memory segment size must be a power of 2.", FormatMemorySize(c.SegmentSize))
	}
	if c.MinSegmentSize > c.SegmentSize {
		// the debloater's minimum buffer size can not exceed the segment
		add("taskmanager.memory.min-segment-size %s > taskmanager.memory.segment-size %s: the smallest debloated buffer cannot be larger than a buffer.",
			FormatMemorySize(c.MinSegmentSize), FormatMemorySize(c.SegmentSize))
	}
	if c.MaxParallelism != -1 && c.Parallelism > c.MaxParallelism {
		add("parallelism.default %d > pipeline.max-parallelism %d: Maximum parallelism must not be smaller than parallelism.",
			c.Parallelism, c.MaxParallelism)
	}

	if c.Filter != "" {
		if _, err := filter.Parse(c.Filter); err != nil {
			add("job.filter: %v", err)
		}
	}

	if c.Operator == OperatorWindow {
		errs = append(errs, c.validateWindow()...)
	}

	if c.StateTTL != 0 && millis(c.StateTTL) <= 0 {
		add("job.state.ttl %s: TTL is expected to be positive.", FormatDuration(c.StateTTL))
	}
	if c.AlignmentGroup != "" && millis(c.AlignmentUpdateInterval) <= 0 {
		add("job.watermark.alignment.update-interval %s: watermark alignment (job.watermark.alignment.group %q) needs an update interval of at least 1 ms",
			FormatDuration(c.AlignmentUpdateInterval), c.AlignmentGroup)
	}
	if c.CheckpointInterval > 0 && c.CheckpointInterval < 10*time.Millisecond {
		// CheckpointConfig.setCheckpointInterval, MINIMAL_CHECKPOINT_TIME
		add("execution.checkpointing.interval %s: Checkpoint interval must be larger than or equal to 10 ms", FormatDuration(c.CheckpointInterval))
	}
	// HeartbeatServicesImpl's preconditions, in milliseconds as Flink takes them
	if c.HeartbeatInterval.Milliseconds() <= 0 {
		add("heartbeat.interval %s: The heartbeat interval must be larger than 0.", FormatDuration(c.HeartbeatInterval))
	} else if c.HeartbeatTimeout.Milliseconds() < c.HeartbeatInterval.Milliseconds() {
		add("heartbeat.timeout %s < heartbeat.interval %s: The heartbeat timeout should be larger or equal than the heartbeat interval.",
			FormatDuration(c.HeartbeatTimeout), FormatDuration(c.HeartbeatInterval))
	}
	// RangeFraction's precondition
	for _, f := range []struct {
		key string
		v   float64
	}{{"taskmanager.memory.jvm-overhead.fraction", c.OverheadFraction}, {"taskmanager.memory.managed.fraction", c.ManagedFraction},
		{keyNetworkFraction, c.NetworkFraction}} {
		if widen(f.v) >= 1 {
			add("%s %v: fraction must be in range [0, 1)", f.key, f.v)
		}
	}
	if c.MemoryThreshold > 1<<20 {
		// FsCheckpointStorageAccess / FileSystemCheckpointStorage refuse a
		// larger threshold
		add("state.storage.fs.memory-threshold %s: The threshold for file state size must be in [-1, %d], but was %d",
			FormatMemorySize(c.MemoryThreshold), 1<<20, c.MemoryThreshold)
	}
	if c.BuffersPerChannel+c.FloatingBuffersPerGate < 1 {
		add("taskmanager.network.memory.buffers-per-channel 0 and taskmanager.network.memory.floating-buffers-per-gate 0: an input channel needs at least one buffer")
	}
	return errors.Join(errs...)
}

// MaxSlidingWindowsPerRecord bounds ceil(job.window.size / job.window.slide),
// the number of sliding windows one record belongs to. Flink has no such
// bound: with 1 d windows sliding every 1 ms it would put each record in 86.4
// million windows and run out of memory; the simulator refuses that before
// the run instead (a limit of the simulator, not Flink's). 10,000 leaves
// room for day-long windows sliding every 10 s.
const MaxSlidingWindowsPerRecord = 10000

func (c Config) validateWindow() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	timeName := "EventTime"
	if c.TimeCharacteristic == ProcessingTime {
		timeName = "ProcessingTime"
	}
	size, slide, gap, offset := millis(c.WindowSize), millis(c.WindowSlide), millis(c.WindowGap), millis(c.WindowOffset)
	absOffset := offset
	if absOffset < 0 {
		absOffset = -absOffset
	}
	if c.WindowType != WindowSliding && c.WindowSlide != 0 {
		add("job.window.slide %s is set but job.window.type is %s: a slide applies only to sliding windows",
			FormatDuration(c.WindowSlide), c.WindowType)
	}
	if c.WindowType != WindowSession && c.WindowGap != 0 {
		add("job.window.gap %s is set but job.window.type is %s: a gap applies only to session windows",
			FormatDuration(c.WindowGap), c.WindowType)
	}
	switch c.WindowType {
	case "tumbling":
		if absOffset >= size {
			add("job.window.size %s, job.window.offset %s: Tumbling%sWindows parameters must satisfy abs(offset) < size",
				FormatDuration(c.WindowSize), FormatDuration(c.WindowOffset), timeName)
		}
	case "sliding":
		if absOffset >= slide || size <= 0 {
			add("job.window.size %s, job.window.slide %s, job.window.offset %s: Sliding%sWindows parameters must satisfy abs(offset) < slide and size > 0",
				FormatDuration(c.WindowSize), FormatDuration(c.WindowSlide), FormatDuration(c.WindowOffset), timeName)
		} else if n := (size + slide - 1) / slide; n > MaxSlidingWindowsPerRecord {
			add("job.window.size %s, job.window.slide %s: each record would belong to %d windows (Sliding%sWindows.assignWindows adds it to every one that holds it), more than the simulator holds (%d per record); give a slide of at least %s",
				FormatDuration(c.WindowSize), FormatDuration(c.WindowSlide), n, timeName, MaxSlidingWindowsPerRecord,
				FormatDuration(time.Duration((size+MaxSlidingWindowsPerRecord-1)/MaxSlidingWindowsPerRecord)*time.Millisecond))
		}
	case "session":
		if gap <= 0 {
			add("job.window.gap %s: %sSessionWindows parameters must satisfy 0 < size", FormatDuration(c.WindowGap), timeName)
		}
		if c.WindowOffset != 0 {
			add("job.window.offset %s is set but job.window.type is session: session windows have no offset",
				FormatDuration(c.WindowOffset))
		}
	}
	if c.Aggregate != AggregateCount && c.AggregateField == "" {
		add("job.window.aggregate %s needs job.window.aggregate-field", c.Aggregate)
	}
	return errs
}
