//go:build !js

package session

import (
	"bytes"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// drawnCount is an oracle of what the traffic tap must account for, written
// from the message types the page draws (README.md, "The live diagram"),
// without the tap's classification: envelopes, records and barriers.
type drawnCount struct {
	envelopes, records, barriers, watermarks, credits, rpcs int
}

func (c *drawnCount) observe(_ vt.Time, e *messages.Envelope) {
	if e.From == e.To || e.From == "scheduler" || e.From == "user" {
		return
	}
	switch b := e.Body.(type) {
	case *messages.Envelope_BufferResponse:
		buf := b.BufferResponse.Buffer
		recs, wm, cp, end := 0, false, buf.GetIsEvent() && buf.GetCheckpointId() > 0, false
		for _, k := range buf.GetKinds() {
			switch k {
			case 0:
				recs++
			case 1:
				wm = true
			case 4:
				end = true
			case 5:
				cp = true
			}
		}
		if recs == 0 && !wm && !cp && !end {
			return
		}
		c.envelopes++
		c.records += recs
		if cp {
			c.barriers++
		}
		if wm {
			c.watermarks++
		}
	case *messages.Envelope_FetchResponse:
		for _, p := range b.FetchResponse.Partitions {
			if len(p.Records) > 0 {
				c.envelopes++
				c.records += len(p.Records)
			}
		}
	case *messages.Envelope_Produce:
		if len(b.Produce.Records) > 0 {
			c.envelopes++
			c.records += len(b.Produce.Records)
		}
	case *messages.Envelope_AddCredit, *messages.Envelope_BacklogAnnouncement, *messages.Envelope_ResumeConsumption:
		c.envelopes++
		c.credits++
	case *messages.Envelope_PartitionRequest:
		if !b.PartitionRequest.Local {
			c.envelopes++
			c.credits++
		}
	case *messages.Envelope_TriggerCheckpoint, *messages.Envelope_AcknowledgeCheckpoint, *messages.Envelope_NotifyCheckpointComplete,
		*messages.Envelope_SubmitTask, *messages.Envelope_TaskExecutionState, *messages.Envelope_AddSplits, *messages.Envelope_RegisterTaskExecutor,
		*messages.Envelope_RegistrationResponse, *messages.Envelope_RequestSlot, *messages.Envelope_OfferSlots,
		*messages.Envelope_SlotOfferResponse, *messages.Envelope_DeclareResourceRequirements, *messages.Envelope_ReaderRegistration,
		*messages.Envelope_TxnRequest, *messages.Envelope_CancelTask, *messages.Envelope_DeclineCheckpoint,
		*messages.Envelope_NotifyCheckpointAborted, *messages.Envelope_NoMoreSplits, *messages.Envelope_ReportedWatermarkEvent,
		*messages.Envelope_WatermarkAlignmentEvent:
		c.envelopes++
		c.rpcs++
	}
}

// TestTrafficAccountsForEveryDelivery runs the default job with
// checkpoints, taking the traffic in frames of 50 ms and of 5 s of virtual
// time (1x and far beyond max speed), and holds the batches to an oracle
// that counts the same deliveries from the envelopes: every drawn delivery
// is listed or merged into its link's stream (envelopes and records add
// up), every barrier is listed, every kind shows, and no batch exceeds its
// caps. The tapped run's log is the log of the same run without a tap,
// byte for byte.
func TestTrafficAccountsForEveryDelivery(t *testing.T) {
	var untapped bytes.Buffer
	{
		r := recipeOf(t, "sim.duration=20 s", "execution.checkpointing.interval=3 s")
		opt := r.Options
		opt.Log = &untapped
		if _, err := cluster.Run(r.Settings, opt); err != nil {
			t.Fatal(err)
		}
	}
	for _, frame := range []vt.Time{50 * vt.Millisecond, 5 * vt.Second} {
		r := recipeOf(t, "sim.duration=20 s", "execution.checkpointing.interval=3 s")
		tap := newTrafficTap()
		var want drawnCount
		var log bytes.Buffer
		opt := r.Options
		opt.Log = &log
		opt.ObserveDelivery = func(now vt.Time, e *messages.Envelope) {
			want.observe(now, e)
			tap.observe(now, e)
		}
		s, err := cluster.NewSession(r.Settings, opt)
		if err != nil {
			t.Fatal(err)
		}
		var got drawnCount
		kinds := map[string]int{}
		streamed, dropped := 0, 0
		prev := int64(0)
		for at := frame; at <= 20*vt.Second; at += frame {
			s.RunUntil(at)
			b := tap.take(at)
			if b.From != prev || b.To != at.Micros() {
				t.Fatalf("batch %d spans %d..%d, want %d..%d", b.Seq, b.From, b.To, prev, at.Micros())
			}
			prev = b.To
			if len(b.Deliveries) > maxDeliveries || len(b.Streams) > maxStreams {
				t.Fatalf("batch %d: %d deliveries, %d streams", b.Seq, len(b.Deliveries), len(b.Streams))
			}
			for _, d := range b.Deliveries {
				if d.At <= b.From || d.At > b.To || d.Sent > d.At {
					t.Fatalf("delivery %+v outside its batch %d..%d", d, b.From, b.To)
				}
				got.envelopes++
				got.records += d.Records
				switch {
				case d.Kind == trafficData && d.Barrier > 0:
					got.barriers++
					kinds["barrier"]++
				case d.Kind == trafficData && d.Records > 0:
					kinds["record"]++
				}
				if d.Watermark != nil {
					kinds["watermark"]++
				}
				if d.Kind == trafficCredit || d.Kind == trafficRPC {
					kinds[d.Kind]++
				}
			}
			for _, st := range b.Streams {
				got.envelopes += st.Envelopes
				got.records += st.Records
				streamed += st.Envelopes
				n := st.Other
				for _, k := range st.Keys {
					n += k.Count
				}
				if st.Kind == trafficData && n != st.Records {
					t.Fatalf("stream %s -> %s: %d records, keys count %d", st.From, st.To, st.Records, n)
				}
			}
			dropped += b.Dropped
		}
		s.Finish()
		if !bytes.Equal(log.Bytes(), untapped.Bytes()) {
			t.Errorf("frame %v: the tap changed the log: %s", frame, firstDiff(untapped.Bytes(), log.Bytes()))
		}
		got.envelopes += dropped
		// watermark-only buffers past the first of a link in a frame are
		// replaced by the newest: count them out of both sides
		if got.records != want.records || got.barriers != want.barriers {
			t.Errorf("frame %v: records %d barriers %d, oracle %d and %d", frame, got.records, got.barriers, want.records, want.barriers)
		}
		if got.envelopes > want.envelopes || got.envelopes < want.envelopes-want.watermarks {
			t.Errorf("frame %v: %d envelopes accounted for, oracle %d (%d with a watermark)", frame, got.envelopes, want.envelopes, want.watermarks)
		}
		for _, k := range []string{"record", "watermark", "barrier", trafficCredit, trafficRPC} {
			if kinds[k] == 0 {
				t.Errorf("frame %v: no %s listed (%v)", frame, k, kinds)
			}
		}
		if frame == 5*vt.Second && streamed == 0 {
			t.Errorf("5 s frames merged nothing into streams")
		}
		t.Logf("frame %v: %d envelopes (%d records, %d barriers), %d merged into streams; listed %v", frame, got.envelopes, got.records, got.barriers, streamed, kinds)
	}
}
