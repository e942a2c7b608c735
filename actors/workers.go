package actors

import (
	"runtime"
	"sync"
)

// Actor handlers run on a few long-lived goroutines.
//
// Hollywood v1.0.5 starts a fresh goroutine whenever a message reaches an
// idle inbox (its goscheduler), and the scheduler cannot be swapped. A
// step's work is deep (a subtask's mailbox, the window operator, the
// exchange; the kernel's merge of a step), so on a fresh goroutine it
// regrew the stack on nearly every delivery: a quarter of the CPU time of
// the default job. Every message still arrives through the actor's
// Hollywood inbox; the actor's Receive hands the work to a worker, whose
// stack stays grown. Nothing here touches what is delivered or its order:
// a component gets its next Deliver only after the scheduler has its Done,
// and the scheduler's own messages are handled one at a time, in the order
// its inbox received them (serial).

// task is one piece of handler work.
type task interface{ run() }

var (
	tasks       = make(chan task, 1024)
	workersOnce sync.Once
)

// submit has t run on a worker.
func submit(t task) {
	workersOnce.Do(func() {
		for range max(2, runtime.GOMAXPROCS(0)) {
			go func() {
				for t := range tasks {
					t.run()
				}
			}()
		}
	})
	tasks <- t
}

// trySubmit is submit for a worker's own tasks: when the queue is full it
// runs t itself rather than wait for a worker that may be waiting too.
func trySubmit(t task) {
	select {
	case tasks <- t:
	default:
		t.run()
	}
}

// serial runs handle on the workers for each pushed message, one message at
// a time and in push order: an actor's mailbox on the shared workers.
type serial struct {
	handle    func(any)
	mu        sync.Mutex
	queue     []any
	spare     []any
	scheduled bool
}

// push queues m; a worker handles it after everything pushed before.
func (q *serial) push(m any) {
	q.mu.Lock()
	q.queue = append(q.queue, m)
	if q.scheduled {
		q.mu.Unlock()
		return
	}
	q.scheduled = true
	q.mu.Unlock()
	submit(q)
}

// pushUnless is push, unless nothing is queued or being handled and quick
// handles m on the caller's goroutine at once (quick reports whether it
// did): the same order as push, without a worker's wake for a message
// that needs next to no work.
func (q *serial) pushUnless(m any, quick func(any) bool) {
	q.mu.Lock()
	if !q.scheduled && len(q.queue) == 0 && quick(m) {
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	q.push(m)
}

func (q *serial) run() {
	for {
		q.mu.Lock()
		batch := q.queue
		if len(batch) == 0 {
			q.scheduled = false
			q.mu.Unlock()
			return
		}
		q.queue, q.spare = q.spare[:0], nil
		q.mu.Unlock()
		for i, m := range batch {
			q.handle(m)
			batch[i] = nil
		}
		q.mu.Lock()
		if q.spare == nil {
			q.spare = batch[:0]
		}
		q.mu.Unlock()
	}
}

// How many Ps (GOMAXPROCS) a run's goroutines get, when the scheduler is
// asked to choose (Scheduler.AdaptProcs).
//
// A step is a chain of hand-offs: the scheduler's Deliver reaches a
// receiver's Hollywood inbox, a worker runs the component, its Done goes
// back to the scheduler's inbox, the last Done merges the step and sends
// the next. With two or more Ps every hand-off readies a goroutine that
// another, idle P is woken to run (a futex wake and its spinning), which
// costs more than the work of a narrow step; on one P each hand-off is a
// switch on the same thread. Only a wide step (a keyBy edge of many
// channels) has enough work in parallel to pay for the wakes. Measured on
// 2 cores (README.md, "Speed"): the default job (1.75 deliveries per step)
// and the 20,000 records/s job run 1.2-1.6x faster on one P; parallelism 64
// (~97 deliveries per step) 1.5x slower. Nothing here reaches the log: the
// delivery order is the kernel's whatever runs where.
const (
	procsWindow = 256 // steps between two choices
	// a window averaging at least wideSteps deliveries per step gets every
	// P, one below narrowSteps one P; in between it keeps what it has
	wideSteps   = 24
	narrowSteps = 12
)

// processProcs is GOMAXPROCS as the first run that chose found it: what
// every later run may go back up to, whatever an earlier run (say, a UI
// session left paused) set.
var (
	processProcs     int
	processProcsOnce sync.Once
)

// procs is the scheduler's choice of Ps.
type procs struct {
	max        int // the most it may set (0: not begun)
	now        int // what it is set to now
	steps      int // steps of the current window
	deliveries int // their deliveries
	// gomaxprocs is runtime.GOMAXPROCS, or a test's stand-in (set with max)
	gomaxprocs func(int) int
}

// step counts a step of n deliveries and, at the end of a window, sets
// GOMAXPROCS to what the window's width asks for.
func (p *procs) step(n int) {
	if p.max == 0 {
		p.gomaxprocs = runtime.GOMAXPROCS
		processProcsOnce.Do(func() { processProcs = runtime.GOMAXPROCS(0) })
		p.max, p.now = processProcs, runtime.GOMAXPROCS(0)
	}
	p.steps++
	p.deliveries += n
	if p.steps < procsWindow {
		return
	}
	want := p.now
	switch {
	case p.deliveries >= wideSteps*p.steps:
		want = p.max
	case p.deliveries < narrowSteps*p.steps:
		want = 1
	}
	p.set(want)
	p.steps, p.deliveries = 0, 0
}

// set makes GOMAXPROCS n (a stop of the world, so only on a change).
func (p *procs) set(n int) {
	if n != p.now {
		p.gomaxprocs(n)
		p.now = n
	}
}

// restore gives the process back its Ps (processProcs).
func (p *procs) restore() {
	if p.max != 0 {
		p.set(p.max)
	}
}
