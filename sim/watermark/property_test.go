package watermark

import (
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// Valve: the output never goes backwards, aligned channels never sit below it, the valve
// is idle exactly when every channel is idle, and once every channel is active and has
// caught up, the output equals the naive minimum over the channels.
func TestPropertyValve(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "channels")
		v, err := NewStatusWatermarkValve(n)
		if err != nil {
			t.Fatal(err)
		}
		last := v.LastOutputWatermark()
		const bound = 1_000_000
		steps := rapid.IntRange(0, 60).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			ch := rapid.IntRange(0, n-1).Draw(t, fmt.Sprintf("ch%d", i))
			if rapid.Bool().Draw(t, fmt.Sprintf("isWm%d", i)) {
				w := rapid.Int64Range(-bound, bound).Draw(t, fmt.Sprintf("wm%d", i))
				out, changed := v.InputWatermark(ch, w)
				if changed && out != minAligned(v) {
					t.Fatalf("emitted %d, min over aligned channels is %d", out, minAligned(v))
				}
			} else {
				v.InputWatermarkStatus(ch, rapid.Bool().Draw(t, fmt.Sprintf("idle%d", i)))
			}
			checkValveInvariants(t, v, last)
			last = v.LastOutputWatermark()
		}
		// Settle: every channel active, then each given a watermark above everything seen
		// so far, in ascending order (a channel whose new watermark were below an output
		// already emitted would rightly stay unaligned until it catches up).
		for ch := 0; ch < n; ch++ {
			v.InputWatermarkStatus(ch, false)
			checkValveInvariants(t, v, last)
			last = v.LastOutputWatermark()
		}
		finals := make([]int64, n)
		for ch := range finals {
			finals[ch] = 2*bound + rapid.Int64Range(0, bound).Draw(t, fmt.Sprintf("final%d", ch))
		}
		order := make([]int, n)
		for ch := range order {
			order[ch] = ch
		}
		sort.Slice(order, func(i, j int) bool { return finals[order[i]] < finals[order[j]] })
		want := MaxWatermark
		for _, ch := range order {
			v.InputWatermark(ch, finals[ch])
			want = min(want, finals[ch])
			checkValveInvariants(t, v, last)
			last = v.LastOutputWatermark()
		}
		for ch := 0; ch < n; ch++ {
			if _, idle, aligned, _ := v.ChannelStatus(ch); idle || !aligned {
				t.Fatalf("channel %d not active and aligned after settling", ch)
			}
		}
		if got := v.LastOutputWatermark(); got != want || v.IsIdle() {
			t.Fatalf("settled output %d idle=%v, want naive min %d, active", got, v.IsIdle(), want)
		}
	})
}

func minAligned(v *StatusWatermarkValve) int64 {
	m := MaxWatermark
	for ch := 0; ch < v.NumChannels(); ch++ {
		if w, _, aligned, _ := v.ChannelStatus(ch); aligned {
			m = min(m, w)
		}
	}
	return m
}

func checkValveInvariants(t *rapid.T, v *StatusWatermarkValve, previous int64) {
	out := v.LastOutputWatermark()
	if out < previous {
		t.Fatalf("output went back from %d to %d", previous, out)
	}
	allIdle := true
	for ch := 0; ch < v.NumChannels(); ch++ {
		w, idle, aligned, _ := v.ChannelStatus(ch)
		if !idle {
			allIdle = false
		}
		if aligned && (idle || w < out) {
			t.Fatalf("channel %d aligned with idle=%v wm=%d below output %d", ch, idle, w, out)
		}
	}
	if v.IsIdle() != allIdle {
		t.Fatalf("valve idle=%v but all channels idle=%v", v.IsIdle(), allIdle)
	}
}

// Multiplexer: the reader's watermark never goes backwards, a reader without
// withIdleness is never idle, "changed" is reported whenever the output moved, and once
// every split has a fresh record above everything seen, one periodic emit makes the
// reader ACTIVE at the naive minimum over its splits.
func TestPropertyMultiplexer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := SplitMultiplexerConfig{
			OutOfOrdernessMs: rapid.Int64Range(0, 5000).Draw(t, "bound"),
			IdleTimeoutMs:    rapid.SampledFrom([]int64{0, 300, 1000}).Draw(t, "idle"),
		}
		m, err := NewSplitMultiplexer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const bound = 1_000_000
		now := int64(0)
		nextID := 0
		lastWm, lastIdle := m.CurrentWatermark(), m.IsIdle()
		steps := rapid.IntRange(0, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("op%d", i)) {
			case 0:
				m.AddSplit(fmt.Sprintf("s%d", nextID))
				nextID++
			case 1:
				if ids := m.Splits(); len(ids) > 0 {
					m.RemoveSplit(rapid.SampledFrom(ids).Draw(t, fmt.Sprintf("rm%d", i)))
				}
			case 2:
				if ids := m.Splits(); len(ids) > 0 {
					id := rapid.SampledFrom(ids).Draw(t, fmt.Sprintf("ev%d", i))
					ts := rapid.Int64Range(-bound, bound).Draw(t, fmt.Sprintf("ts%d", i))
					if err := m.OnEvent(id, ts, now); err != nil {
						t.Fatal(err)
					}
				}
			default:
				now += 200
				wm, idle, changed := m.OnPeriodicEmit(now)
				if wm < lastWm {
					t.Fatalf("t=%d: watermark went back from %d to %d", now, lastWm, wm)
				}
				if (wm != lastWm || idle != lastIdle) && !changed {
					t.Fatalf("t=%d: output moved to (%d, %v) without changed", now, wm, idle)
				}
				if idle && cfg.IdleTimeoutMs == 0 {
					t.Fatalf("t=%d: idle without withIdleness", now)
				}
				lastWm, lastIdle = wm, idle
			}
		}
		ids := m.Splits()
		want := MinWatermark
		if len(ids) > 0 {
			want = MaxWatermark
			for i, id := range ids {
				ts := 3*bound + rapid.Int64Range(0, bound).Draw(t, fmt.Sprintf("final%d", i))
				if err := m.OnEvent(id, ts, now); err != nil {
					t.Fatal(err)
				}
				want = min(want, ts-cfg.OutOfOrdernessMs-1)
			}
		}
		now += 200
		wm, idle, _ := m.OnPeriodicEmit(now)
		if len(ids) > 0 && (wm != want || idle) {
			t.Fatalf("settled (%d, idle=%v), want (%d, active) over %d splits", wm, idle, want, len(ids))
		}
		if len(ids) == 0 && wm != lastWm {
			t.Fatalf("no split: watermark moved from %d to %d", lastWm, wm)
		}
	})
}
