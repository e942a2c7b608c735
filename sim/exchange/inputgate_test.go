package exchange

import (
	"reflect"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

func data(key string) *messages.Buffer {
	return &messages.Buffer{Kinds: []byte{byte(KindRecord)}, Keys: []string{key}, Timestamps: []int64{0}, Values: []float64{1}, SizeBytes: 100}
}

func endOfPartition() *messages.Buffer {
	return &messages.Buffer{IsEvent: true, Kinds: []byte{byte(KindEndOfPartition)}}
}

// The gate serves channels in the order their data arrived, skips a channel
// held back by checkpoint alignment, and moves a channel with more buffers
// to the back (SingleInputGate's inputChannelsWithData).
func TestInputGateServesInArrivalOrder(t *testing.T) {
	g := NewInputGate(3, 0, nil)
	g.Enqueue(2, data("a"))
	g.Enqueue(0, data("b"))
	g.Enqueue(2, data("c"))
	g.Enqueue(1, data("d"))
	blocked := func(ci int) bool { return ci == 0 }
	var got []string
	for {
		ci, b, ok := g.Next(blocked)
		if !ok {
			break
		}
		got = append(got, b.Keys[0]+"@"+string(rune('0'+ci)))
	}
	if want := []string{"a@2", "d@1", "c@2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
	if !g.HasData() || g.Ready(blocked) {
		t.Fatal("the blocked channel's buffer must stay, and not count as ready")
	}
	if _, b, _ := g.Next(func(int) bool { return false }); b.Keys[0] != "b" {
		t.Fatal("unblocked, channel 0 is served")
	}
}

// A barrier for a channel whose producer finished goes right before its
// queued EndOfPartition, behind the data (insertBarrierBeforeEndOfPartition).
func TestInputGateInsertBeforeEnd(t *testing.T) {
	g := NewInputGate(1, 0, nil)
	g.Enqueue(0, data("x"))
	if g.InsertBeforeEnd(0, &messages.Buffer{IsEvent: true, Kinds: []byte{byte(KindBarrier)}, CheckpointId: 3}) {
		t.Fatal("inserted without an EndOfPartition queued")
	}
	g.Enqueue(0, endOfPartition())
	if !g.HasEndQueued(0) || !g.InsertBeforeEnd(0, &messages.Buffer{IsEvent: true, Kinds: []byte{byte(KindBarrier)}, CheckpointId: 3}) {
		t.Fatal("no insertion before the queued EndOfPartition")
	}
	q := g.Channel(0).Buffers
	if len(q) != 3 || q[0].Keys[0] != "x" || q[1].CheckpointId != 3 || q[2].Kinds[0] != byte(KindEndOfPartition) || !g.BarrierQueued(0, 3) {
		t.Fatalf("queue %v", q)
	}
}

// Floating buffers go to the channels in the order they asked, partially
// when the pool runs short; returned ones go to whoever still waits. The
// pool's use counts queued data buffers only.
func TestInputGateFloatingBuffers(t *testing.T) {
	g := NewInputGate(2, 3, nil)
	if got := g.RequestFloating(1, 2); !reflect.DeepEqual(got, []Grant{{1, 2}}) {
		t.Fatalf("first grant %v", got)
	}
	if got := g.RequestFloating(0, 3); !reflect.DeepEqual(got, []Grant{{0, 1}}) {
		t.Fatalf("second grant %v, want the 1 left", got)
	}
	if got := g.ReturnFloating(3); !reflect.DeepEqual(got, []Grant{{0, 2}}) {
		t.Fatalf("after a return %v, want channel 0's remaining 2", got)
	}
	g.Enqueue(0, data("a"))
	g.Enqueue(0, endOfPartition())
	g.Count(data("a"))
	// in use: channel 0's exclusive buffer holding data, and the 2 floating
	// buffers lent (3 granted, 3 returned, 2 granted again) of 2x2 + 3
	usage, queued, lengths := g.InPoolUsage(2)
	if queued != 1 || usage != 3.0/7 || !reflect.DeepEqual(lengths, []int64{1, 0}) || g.BuffersIn != 1 || g.BytesIn != 100 {
		t.Fatalf("usage %v queued %d lengths %v in %d/%d", usage, queued, lengths, g.BuffersIn, g.BytesIn)
	}
}
