package jobmaster

import (
	"math"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/source"
	"github.com/flinksim/flinksim/sim/vt"
	"github.com/flinksim/flinksim/sim/watermark"
)

// sourceCoordinator is the Kafka source's SourceCoordinator, which Flink runs
// in the JobManager (org.apache.flink.runtime.source.coordinator.SourceCoordinator):
// its split enumerator (KafkaSourceEnumerator, sim/source) and, with
// watermark alignment, the group's reported watermarks and the periodic
// announcement of the max allowed one (SourceCoordinator.announceCombinedWatermark).
// The readers are subtasks of the source vertex of the current attempt.
type sourceCoordinator struct {
	enum      *source.Enumerator
	bounded   bool
	alignment *watermark.AlignmentGroup // nil: no watermark alignment
	lastMax   int64
}

// startAlignment starts a new alignment group at now (the job's, or a job
// started from a savepoint, whose readers are aligned afresh); false when
// cfg's drift and interval make none.
func (s *sourceCoordinator) startAlignment(o *kernel.Out, cfg *config.Config) bool {
	g, err := watermark.NewAlignmentGroup(cfg.AlignmentMaxDrift.Milliseconds(), cfg.AlignmentUpdateInterval.Milliseconds())
	if err != nil {
		return false
	}
	g.Start(vt.Millis(o.Now()))
	s.alignment, s.lastMax = g, math.MinInt64
	return true
}

// reportWatermark records a current reader's ReportedWatermarkEvent.
func (s *sourceCoordinator) reportWatermark(m *messages.ReportedWatermarkEvent) {
	if s.alignment != nil {
		s.alignment.ReportWatermark(jobgraph.VertexSource, int(m.SubtaskIndex), m.Watermark)
	}
}

// announceAlignment is the periodic announcement of the alignment group's
// max allowed watermark (group minimum + max drift) to every reader
// (WatermarkAlignmentEvent); it sets the next one's timer.
func (s *sourceCoordinator) announceAlignment(o *kernel.Out, cfg *config.Config, g jobgraph.JobGraph, attempt int) {
	o.Timer(vt.FromDuration(cfg.AlignmentUpdateInterval), timerAlignment, 0)
	for _, a := range s.alignment.Tick(vt.Millis(o.Now())) {
		if a.MaxAllowedWatermark != s.lastMax {
			s.lastMax = a.MaxAllowedWatermark
			o.Log(eventlog.WatermarkAlignment{Group: cfg.AlignmentGroup, CombinedWatermark: s.alignment.CombinedWatermark(), MaxAllowedWatermark: a.MaxAllowedWatermark})
		}
		src, _ := g.Vertex(jobgraph.VertexSource)
		for i := 0; i < src.Parallelism; i++ {
			o.Send(jobgraph.SubtaskName(jobgraph.VertexSource, i, attempt), vt.FromDuration(cfg.RPCLatency()),
				&messages.Envelope_WatermarkAlignmentEvent{WatermarkAlignmentEvent: &messages.WatermarkAlignmentEvent{MaxWatermark: a.MaxAllowedWatermark}})
		}
	}
}

// offsets hands the enumerator the starting or (bounded) stopping offsets
// the broker resolved.
func (s *sourceCoordinator) offsets(m *messages.ListOffsetsResult) {
	if m.RequestId == reqStopOffsets {
		s.enum.SetStoppingOffsets(m.Offsets)
	} else {
		s.enum.SetStartingOffsets(m.Offsets)
	}
}

// assignSplits hands the registered readers the splits the enumerator
// assigns them, once the offsets are known; in bounded mode it then signals
// no more splits.
func (s *sourceCoordinator) assignSplits(o *kernel.Out, cfg *config.Config, g jobgraph.JobGraph, attempt int) {
	src, _ := g.Vertex(jobgraph.VertexSource)
	for _, a := range s.enum.Assign(src.Parallelism) {
		reader := jobgraph.SubtaskName(jobgraph.VertexSource, int(a.Reader), attempt)
		o.Log(eventlog.SplitsAssigned{Reader: reader, Partitions: eventlog.JSONInts(a.Partitions)})
		if len(a.Splits) == 0 && !s.bounded {
			o.Log(eventlog.ReaderNoSplits{Reader: reader, Note: "a reader without splits does not go idle by itself: it holds every downstream watermark at Long.MIN_VALUE unless withIdleness is set"})
		}
		o.Send(reader, vt.FromDuration(cfg.RPCLatency()), &messages.Envelope_AddSplits{AddSplits: &messages.AddSplits{Splits: a.Splits}})
		if a.NoMore {
			o.Send(reader, vt.FromDuration(cfg.RPCLatency()), &messages.Envelope_NoMoreSplits{NoMoreSplits: &messages.NoMoreSplits{}})
		}
	}
}
