package actors

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// TestMailboxOneAtATimeInOrder sends to one mailbox from several goroutines
// at once through the Hollywood engine: its handler never runs twice at a
// time, and each sender's messages are handled in the order it sent them.
func TestMailboxOneAtATimeInOrder(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	const senders, each = 4, 5000
	var (
		running atomic.Int32
		overlap atomic.Bool
		last    [senders]int
		wrong   atomic.Int32
		done    = make(chan struct{})
		handled int
	)
	type msg struct{ from, n int }
	pid := spawnMailbox(e, "test", "box", func(m any) {
		if running.Add(1) != 1 {
			overlap.Store(true)
		}
		x := m.(msg)
		if x.n != last[x.from]+1 {
			wrong.Add(1)
		}
		last[x.from] = x.n
		handled++
		if handled == senders*each {
			close(done)
		}
		running.Add(-1)
	}, nil)
	if got := e.Registry.GetPID("test", "box"); got == nil || got.ID != pid.ID {
		t.Fatalf("the mailbox is not in Hollywood's registry: %v", got)
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= each; n++ {
				e.Send(pid, msg{s, n})
			}
		}()
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("handled %d of %d messages", handled, senders*each)
	}
	if overlap.Load() {
		t.Error("the handler ran twice at a time")
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d messages handled out of their sender's order", n)
	}
}

// TestFanOutWiderThanTheQueue has every worker at once send to more
// mailboxes than the task queue holds (a step's Delivers are sent from
// workers): submit runs a task itself when the queue is full, so the run
// goes on; workers that waited for room would all wait for each other.
func TestFanOutWiderThanTheQueue(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	width := 3 * cap(tasks)
	fanners := max(2, runtime.GOMAXPROCS(0)) + 1
	var count atomic.Int64
	all := make(chan struct{})
	want := int64(width * fanners)
	leaves := make([]*actor.PID, width)
	for i := range leaves {
		leaves[i] = spawnMailbox(e, "leaf", fmt.Sprint(i), func(any) {
			if count.Add(1) == want {
				close(all)
			}
		}, nil)
	}
	for f := range fanners {
		pid := spawnMailbox(e, "fan", fmt.Sprint(f), func(any) {
			for _, l := range leaves {
				e.Send(l, struct{}{})
			}
		}, nil)
		e.Send(pid, struct{}{})
	}
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d messages handled: the workers are stuck", count.Load(), want)
	}
}
