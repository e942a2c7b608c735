package tests

import (
	"runtime"
	"testing"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
)

// The floor of a scheduler step: a gated Hollywood round trip, with nothing
// simulated. A gate actor sends one Deliver to one receiver and waits for
// its Done before the next; each message wakes an idle Hollywood inbox, as
// in a run. A step of the simulator can cost no less; the README gives the
// benchmarks' ns/step against this one measured in the same run.

type floorGate struct {
	receiver *actor.PID
	left     int
	done     chan struct{}
}

func (g *floorGate) Receive(ctx *actor.Context) {
	switch m := ctx.Message().(type) {
	case int: // start: m steps
		g.left = m
		ctx.Engine().SendWithSender(g.receiver, &messages.Deliver{Step: 1}, ctx.PID())
	case *kernel.Done:
		g.left--
		if g.left == 0 {
			close(g.done)
			return
		}
		ctx.Engine().SendWithSender(g.receiver, &messages.Deliver{Step: m.Step + 1}, ctx.PID())
	}
}

type floorReceiver struct{}

func (floorReceiver) Receive(ctx *actor.Context) {
	if m, ok := ctx.Message().(*messages.Deliver); ok {
		ctx.Engine().SendWithSender(ctx.Sender(), &kernel.Done{Step: m.Step}, ctx.PID())
	}
}

func BenchmarkGatedRoundTrip(b *testing.B) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	recv := e.Spawn(func() actor.Receiver { return floorReceiver{} }, "receiver")
	g := &floorGate{receiver: recv, done: make(chan struct{})}
	gate := e.Spawn(func() actor.Receiver { return g }, "gate")
	b.ResetTimer()
	e.Send(gate, b.N)
	<-g.done
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
}

// BenchmarkGatedRoundTripOneP is BenchmarkGatedRoundTrip on one P: the floor
// of a job whose steps are narrow, which the scheduler runs on one P
// (cluster.Options.AdaptProcs).
func BenchmarkGatedRoundTripOneP(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	BenchmarkGatedRoundTrip(b)
}
