package watermark

import (
	"fmt"
	"reflect"
	"testing"
)

// valveStep is one input to the valve and the exact outputs it must produce, in order:
// "wm N", "idle", "active". Optional channel checks mirror getInputChannelStatus.
type valveStep struct {
	op       string // "wm" or "status"
	ch       int
	wm       int64 // for "wm"
	idle     bool  // for "status"
	want     []string
	checkCh  int   // channel to inspect after the step, -1 for none
	wantChWm int64 // expected watermark of checkCh (if checkWm)
	checkWm  bool
	wantAlig *bool
}

func wm(ch int, v int64, want ...string) valveStep {
	return valveStep{op: "wm", ch: ch, wm: v, want: want, checkCh: -1}
}

func st(ch int, idle bool, want ...string) valveStep {
	return valveStep{op: "status", ch: ch, idle: idle, want: want, checkCh: -1}
}

func (s valveStep) chWm(ch int, v int64) valveStep {
	s.checkCh, s.wantChWm, s.checkWm = ch, v, true
	return s
}

func (s valveStep) chAligned(ch int, aligned bool) valveStep {
	s.checkCh, s.wantAlig = ch, &aligned
	return s
}

const idle, active = true, false

// flinkValveCases carries org.apache.flink.streaming.runtime.watermarkstatus.StatusWatermarkValveTest
// over as data: same inputs, same expected outputs after each input.
var flinkValveCases = []struct {
	name     string
	channels int
	steps    []valveStep
}{
	{"testSingleInputIncreasingWatermarks", 1, []valveStep{
		wm(0, 0, "wm 0"),
		wm(0, 25, "wm 25"),
	}},
	{"testSingleInputDecreasingWatermarksYieldsNoOutput", 1, []valveStep{
		wm(0, 25, "wm 25"),
		wm(0, 18),
		wm(0, 42, "wm 42"),
	}},
	{"testSingleInputWatermarkStatusToggling", 1, []valveStep{
		st(0, active), // channels start ACTIVE
		st(0, idle, "idle"),
		st(0, idle),
		st(0, active, "active"),
	}},
	{"testSingleInputWatermarksIntactDuringIdleness", 1, []valveStep{
		wm(0, 25, "wm 25"),
		st(0, idle, "idle"),
		wm(0, 50).chWm(0, 25),
		st(0, active, "active"),
		wm(0, 50, "wm 50"),
	}},
	{"testMultipleInputYieldsWatermarkOnlyWhenAllChannelsReceivesWatermarks", 3, []valveStep{
		wm(0, 0),
		wm(1, 0),
		wm(2, 0, "wm 0"),
	}},
	{"testMultipleInputIncreasingWatermarks", 3, []valveStep{
		wm(0, 0), wm(1, 0), wm(2, 0, "wm 0"),
		wm(0, 12), wm(2, 8), wm(2, 10),
		wm(1, 15, "wm 10"),
		wm(2, 17, "wm 12"),
		wm(0, 20, "wm 15"),
	}},
	{"testMultipleInputDecreasingWatermarksYieldsNoOutput", 3, []valveStep{
		wm(0, 25), wm(1, 10), wm(2, 17, "wm 10"),
		wm(0, 12), wm(1, 8), wm(2, 15),
	}},
	{"testMultipleInputWatermarkStatusToggling", 2, []valveStep{
		st(0, active), st(1, active),
		st(1, idle),
		st(0, idle, "idle"),
		st(0, idle), st(1, idle),
		st(1, active, "active"),
		st(0, active),
	}},
	{"testMultipleInputWatermarkAdvancingWithPartiallyIdleChannels", 3, []valveStep{
		wm(0, 15), wm(1, 10),
		st(2, idle, "wm 10"),
		wm(1, 18, "wm 15"),
		wm(0, 20, "wm 18"),
	}},
	{"testMultipleInputWatermarkAdvancingAsChannelsIndividuallyBecomeIdle", 3, []valveStep{
		wm(0, 25), wm(1, 10), wm(2, 17, "wm 10"),
		st(1, idle, "wm 17"),
		st(2, idle, "wm 25"),
	}},
	{"testMultipleInputFlushMaxWatermarkAndWatermarkStatusOnceAllInputsBecomeIdle", 3, []valveStep{
		wm(0, 10), wm(1, 5), wm(2, 3, "wm 3"),
		st(0, idle), st(1, idle),
		st(2, idle, "wm 10", "idle"),
	}},
	{"testMultipleInputWatermarkRealignmentAfterResumeActive", 3, []valveStep{
		wm(0, 10), wm(1, 7), wm(2, 3, "wm 3"),
		st(2, idle, "wm 7"),
		st(2, active).chAligned(2, false),
		wm(2, 5).chWm(2, 5),
		wm(2, 9).chAligned(2, true),
		wm(1, 12, "wm 9"),
	}},
	{"testNoOutputWhenAllActiveChannelsAreUnaligned", 3, []valveStep{
		wm(0, 10), wm(1, 7),
		st(2, idle, "wm 7"),
		st(2, active),
		st(0, idle), st(1, idle),
	}},
}

// sourceDerivedValveCases are not in StatusWatermarkValveTest; their expectations are
// read off StatusWatermarkValve.inputWatermarkStatus.
var sourceDerivedValveCases = []struct {
	name     string
	channels int
	steps    []valveStep
}{
	// The last active channel is unaligned (below the output) when it goes idle: its
	// watermark is not the last output, so no maximum is flushed; only IDLE is emitted.
	{"lastChannelUnalignedGoingIdleDoesNotFlush", 3, []valveStep{
		wm(0, 10), wm(1, 7),
		st(2, idle, "wm 7"),
		st(2, active),
		st(0, idle), st(1, idle),
		st(2, idle, "idle"),
		// Reactivating a channel above the output aligns it but emits no watermark.
		st(0, active, "active").chAligned(0, true),
		wm(0, 11, "wm 11"),
	}},
	// A channel that held the minimum going idle lets the remaining aligned channels
	// advance the output; a channel above the minimum going idle changes nothing.
	{"idleAboveMinimumChangesNothing", 3, []valveStep{
		wm(0, 5), wm(1, 9), wm(2, 12, "wm 5"),
		st(2, idle),
		st(0, idle, "wm 9"),
		st(2, active).chAligned(2, true),
		wm(1, 20, "wm 12"),
	}},
}

func TestStatusWatermarkValveSourceDerivedCases(t *testing.T) {
	for _, tc := range sourceDerivedValveCases {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := NewStatusWatermarkValve(tc.channels)
			for i, s := range tc.steps {
				got := applyValveStep(v, s)
				if !reflect.DeepEqual(got, s.want) && !(len(got) == 0 && len(s.want) == 0) {
					t.Fatalf("step %d (%s ch=%d wm=%d idle=%v): outputs %q, want %q", i, s.op, s.ch, s.wm, s.idle, got, s.want)
				}
				if s.wantAlig != nil {
					if _, _, aligned, _ := v.ChannelStatus(s.checkCh); aligned != *s.wantAlig {
						t.Errorf("step %d: channel %d aligned %v, want %v", i, s.checkCh, aligned, *s.wantAlig)
					}
				}
			}
		})
	}
}

func applyValveStep(v *StatusWatermarkValve, s valveStep) []string {
	var got []string
	switch s.op {
	case "wm":
		if out, changed := v.InputWatermark(s.ch, s.wm); changed {
			got = append(got, fmt.Sprintf("wm %d", out))
		}
	case "status":
		outWm, wmChanged, outIdle, statusChanged := v.InputWatermarkStatus(s.ch, s.idle)
		if wmChanged {
			got = append(got, fmt.Sprintf("wm %d", outWm))
		}
		if statusChanged {
			if outIdle {
				got = append(got, "idle")
			} else {
				got = append(got, "active")
			}
		}
	}
	return got
}

func TestStatusWatermarkValveFlinkCases(t *testing.T) {
	for _, tc := range flinkValveCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewStatusWatermarkValve(tc.channels)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				got := applyValveStep(v, s)
				if !reflect.DeepEqual(got, s.want) && !(len(got) == 0 && len(s.want) == 0) {
					t.Fatalf("step %d (%s ch=%d wm=%d idle=%v): outputs %q, want %q", i, s.op, s.ch, s.wm, s.idle, got, s.want)
				}
				if s.checkCh >= 0 {
					chWm, _, aligned, ok := v.ChannelStatus(s.checkCh)
					if !ok {
						t.Fatalf("step %d: channel %d missing", i, s.checkCh)
					}
					if s.checkWm && chWm != s.wantChWm {
						t.Errorf("step %d: channel %d watermark %d, want %d", i, s.checkCh, chWm, s.wantChWm)
					}
					if s.wantAlig != nil && aligned != *s.wantAlig {
						t.Errorf("step %d: channel %d aligned %v, want %v", i, s.checkCh, aligned, *s.wantAlig)
					}
				}
			}
		})
	}
}

func TestStatusWatermarkValveEdges(t *testing.T) {
	if _, err := NewStatusWatermarkValve(-1); err == nil {
		t.Error("negative channel count must be refused")
	}
	v, _ := NewStatusWatermarkValve(2)
	// Out-of-range channels are ignored.
	if out, changed := v.InputWatermark(2, 5); changed || out != MinWatermark {
		t.Errorf("out-of-range watermark: (%d, %v)", out, changed)
	}
	if _, wc, _, sc := v.InputWatermarkStatus(-1, true); wc || sc {
		t.Error("out-of-range status must change nothing")
	}
	// A valve with no channel never emits.
	empty, _ := NewStatusWatermarkValve(0)
	if out, changed := empty.InputWatermark(0, 1); changed || out != MinWatermark {
		t.Error("an empty valve must not emit")
	}
	// Watermarks arriving while the whole valve is idle are ignored even for the
	// channel's own state.
	v.InputWatermarkStatus(0, true)
	v.InputWatermarkStatus(1, true)
	if !v.IsIdle() {
		t.Fatal("all channels idle: valve idle")
	}
	v.InputWatermark(0, 100)
	if w, _, _, _ := v.ChannelStatus(0); w != MinWatermark {
		t.Errorf("idle channel watermark moved to %d", w)
	}
}
