package watermark

import (
	"cmp"
	"errors"
	"slices"
)

// DefaultAlignmentUpdateIntervalMs is the update interval of
// WatermarkStrategy.withWatermarkAlignment(group, maxAllowedDrift): 1 s.
const DefaultAlignmentUpdateIntervalMs int64 = 1000

// ErrAlignmentDisabled refuses a drift of Long.MAX_VALUE, which Flink reads as
// "alignment disabled" (WatermarkAlignmentParams.isEnabled is drift < Long.MAX_VALUE).
var ErrAlignmentDisabled = errors.New("watermark alignment is disabled: maxAllowedWatermarkDrift is Long.MAX_VALUE")

// ErrNegativeUpdateInterval refuses a negative update interval (Flink's periodic
// scheduling would throw IllegalArgumentException).
var ErrNegativeUpdateInterval = errors.New("watermark alignment update interval must not be negative")

// aggregator is SourceCoordinator.WatermarkAggregator: the smallest watermark over keys,
// Long.MIN_VALUE with no key.
type aggregator[K cmp.Ordered] struct {
	watermarks map[K]int64
}

func newAggregator[K cmp.Ordered]() aggregator[K] {
	return aggregator[K]{watermarks: make(map[K]int64)}
}

// aggregate replaces key's watermark and returns the new aggregate and whether it changed.
func (a aggregator[K]) aggregate(key K, wm int64) (int64, bool) {
	old := a.aggregated()
	a.watermarks[key] = wm
	now := a.aggregated()
	return now, now != old
}

func (a aggregator[K]) aggregated() int64 {
	if len(a.watermarks) == 0 {
		return MinWatermark
	}
	minimum := MaxWatermark
	for _, wm := range a.watermarks {
		minimum = min(minimum, wm)
	}
	return minimum
}

func (a aggregator[K]) sortedKeys() []K {
	keys := make([]K, 0, len(a.watermarks))
	for k := range a.watermarks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Announcement is one source coordinator's WatermarkAlignmentEvent round: the
// maxAllowedWatermark (event-time ms) sent to every listed subtask of Source.
type Announcement struct {
	Source              string
	MaxAllowedWatermark int64
	// Subtasks are the reader subtasks that have reported a watermark, ascending.
	Subtasks []int
}

// AlignmentGroup is the coordinator side of watermark alignment for one alignment group
// (FLIP-182, withWatermarkAlignment(group, maxAllowedDrift, updateInterval)), following
// SourceCoordinator.handleReportedWatermark and announceCombinedWatermark:
//
//   - every reader reports its watermark every update interval (see
//     SplitMultiplexer.ReportedWatermark: none while it has none, Long.MAX_VALUE while
//     idle or finished);
//   - each source keeps the minimum over its reporting subtasks, and the group the
//     minimum over its sources, a source being updated in the group only when its own
//     minimum changes (WatermarkAggregator; Long.MIN_VALUE when nothing was reported);
//   - every update interval each source coordinator computes
//     maxAllowedWatermark = groupMinimum + maxAllowedDrift, using Long.MAX_VALUE when the
//     addition overflows either way (Math.addExact in a try/catch), and sends it to the
//     subtasks that have reported.
//
// Readers then pause splits above maxAllowedWatermark, or stop polling altogether (see
// SplitMultiplexer.OnWatermarkAlignment and WaitingForAlignment). The zero value is not
// usable; use NewAlignmentGroup.
type AlignmentGroup struct {
	maxAllowedDriftMs int64
	updateIntervalMs  int64

	perSource map[string]aggregator[int] // SourceCoordinator.combinedWatermark per source
	group     aggregator[string]         // the coordinator store's group aggregator

	started    bool
	nextTickMs int64
}

// NewAlignmentGroup returns a group allowing maxAllowedDriftMs of event-time drift and
// announcing every updateIntervalMs of virtual processing time; 0 selects
// DefaultAlignmentUpdateIntervalMs. Flink does not validate the drift, so a negative
// drift is accepted; Long.MAX_VALUE means alignment is disabled and is refused with
// ErrAlignmentDisabled; a negative interval gives ErrNegativeUpdateInterval.
func NewAlignmentGroup(maxAllowedDriftMs, updateIntervalMs int64) (*AlignmentGroup, error) {
	if maxAllowedDriftMs == MaxWatermark {
		return nil, ErrAlignmentDisabled
	}
	if updateIntervalMs < 0 {
		return nil, ErrNegativeUpdateInterval
	}
	if updateIntervalMs == 0 {
		updateIntervalMs = DefaultAlignmentUpdateIntervalMs
	}
	return &AlignmentGroup{
		maxAllowedDriftMs: maxAllowedDriftMs,
		updateIntervalMs:  updateIntervalMs,
		perSource:         make(map[string]aggregator[int]),
		group:             newAggregator[string](),
	}, nil
}

// UpdateIntervalMs is the announcement (and reporting) period in virtual ms.
func (g *AlignmentGroup) UpdateIntervalMs() int64 { return g.updateIntervalMs }

// MaxAllowedDriftMs is the allowed drift in event-time ms.
func (g *AlignmentGroup) MaxAllowedDriftMs() int64 { return g.maxAllowedDriftMs }

// ReportWatermark records a ReportedWatermarkEvent of wm (event-time ms) from reader
// subtask of source.
func (g *AlignmentGroup) ReportWatermark(source string, subtask int, wm int64) {
	agg, ok := g.perSource[source]
	if !ok {
		agg = newAggregator[int]()
		g.perSource[source] = agg
	}
	if combined, changed := agg.aggregate(subtask, wm); changed {
		g.group.aggregate(source, combined)
	}
}

// CombinedWatermark is the group's minimum watermark (Long.MIN_VALUE before any
// effective report).
func (g *AlignmentGroup) CombinedWatermark() int64 { return g.group.aggregated() }

// MaxAllowedWatermark is CombinedWatermark + the drift, or Long.MAX_VALUE when that sum
// overflows in either direction (as Flink's Math.addExact catch does, so an idle group at
// Long.MAX_VALUE, or a negative drift below Long.MIN_VALUE, allows everything).
func (g *AlignmentGroup) MaxAllowedWatermark() int64 {
	sum, overflow := addExact(g.group.aggregated(), g.maxAllowedDriftMs)
	if overflow {
		return MaxWatermark
	}
	return sum
}

func addExact(a, b int64) (int64, bool) {
	sum := a + b
	// overflow iff a and b have the same sign and the sum's sign differs
	return sum, (a >= 0) == (b >= 0) && (sum >= 0) != (a >= 0)
}

// Announce is one announceCombinedWatermark of source's coordinator, now.
func (g *AlignmentGroup) Announce(source string) Announcement {
	a := Announcement{Source: source, MaxAllowedWatermark: g.MaxAllowedWatermark()}
	if agg, ok := g.perSource[source]; ok {
		a.Subtasks = agg.sortedKeys()
	}
	return a
}

// Start begins the periodic announcements at virtual time nowMs (SourceCoordinator.start
// schedules the first one updateInterval later).
func (g *AlignmentGroup) Start(nowMs int64) {
	g.started = true
	g.nextTickMs = nowMs + g.updateIntervalMs
}

// Tick returns the announcements due at virtual time nowMs: none before Start or before
// the next period, else one per source that has reported, sorted by source name. A Tick
// that comes several periods late announces once (the state did not change in between)
// and the schedule stays on the grid Start + k*interval.
func (g *AlignmentGroup) Tick(nowMs int64) []Announcement {
	if !g.started || nowMs < g.nextTickMs {
		return nil
	}
	late := (nowMs - g.nextTickMs) / g.updateIntervalMs
	g.nextTickMs += (late + 1) * g.updateIntervalMs
	sources := make([]string, 0, len(g.perSource))
	for s := range g.perSource {
		sources = append(sources, s)
	}
	slices.Sort(sources)
	out := make([]Announcement, 0, len(sources))
	for _, s := range sources {
		out = append(out, g.Announce(s))
	}
	return out
}
