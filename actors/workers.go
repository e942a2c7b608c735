package actors

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Actor handlers run on a few long-lived goroutines.
//
// Hollywood v1.0.5 starts a fresh goroutine whenever a message reaches an
// idle inbox (its goscheduler). A step's work is deep (a subtask's
// mailbox, the window operator, the exchange; the kernel's merge of a
// step), so on a fresh goroutine it regrew the stack on nearly every
// delivery: a quarter of the CPU time of the default job. So every actor
// of a run is a Hollywood process whose inbox is a serial (a mailbox,
// proc.go): every message still reaches it through the Hollywood engine
// (Engine.Send, or Hollywood's remote from another process), and a worker,
// whose stack stays grown, handles it. Nothing here touches what is
// delivered or its order: a component gets its next Deliver only after the
// scheduler has its Done, and each actor's messages are handled one at a
// time, in the order they reached it (serial).

// task is one piece of handler work.
type task interface{ run() }

var (
	tasks       = make(chan task, 1024)
	workersOnce sync.Once
)

// submit has t run on a worker, or runs t itself when the queue is full:
// the caller may be a worker (a step's Delivers are sent from workers, and
// a Done is sent from the worker that ran its step), and workers that all
// waited for room would wait for each other.
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

// How the Go runtime is set for a run, when the scheduler is asked to
// choose (Scheduler.AdaptProcs, Scheduler.AdaptGC): how many Ps
// (GOMAXPROCS) its goroutines get, and how much the heap may grow between
// two collections (the GC percent, GOGC).
//
// Ps: a step is a chain of hand-offs: the scheduler's Deliver reaches a
// receiver's Hollywood inbox, a worker runs the component, its Done goes
// back to the scheduler's inbox, the last Done merges the step and sends
// the next. With two or more Ps every hand-off readies a goroutine that
// another, idle P is woken to run (a futex wake and its spinning), which
// costs more than the work of a narrow step; on one P each hand-off is a
// switch on the same thread. Only a wide step (a keyBy edge of many
// channels) has enough work in parallel to pay for the wakes. Measured on
// 2 cores (README.md, "Speed"): the default job (1.75 deliveries per step)
// and the 20,000 records/s job run 1.2-1.6x faster on one P; parallelism 64
// (~97 deliveries per step) 1.5x slower.
//
// GC: a run allocates per delivery and keeps little (the default job's live
// heap is ~15 MB), so collecting at twice the live heap spends a tenth of
// the CPU time on the collector; while the live heap is small it may grow
// to three times itself (GOGC=200: ~1.1x faster), and a large one (a
// million keys' window state) is collected as the process's setting says,
// so its peak stays where it was.
//
// A burst (a watermark that fires a window for each of a million keys: one
// step holding every firing's log event and result record) leaves the heap
// goal at twice the burst's live heap, and the collector then waits for the
// heap to grow that far although most of the burst died when its step
// ended: 1M keys at 20,000 records/s peaked at ~1.6 GB RSS with ~550 MB
// live. So tuneWindow steps after a burst (when its log events and result
// records are gone: the subtasks' outputs are reused at their next
// delivery, the records appended to the sink topic) the scheduler starts a
// collection of its own (runtime.GC on a goroutine of its own: the run goes
// on while it marks), and the next goal is set from what is live after it.
//
// Nothing here reaches the log: the delivery order is the kernel's
// whatever runs where, and when the collector runs changes no value.
const (
	tuneWindow = 256 // steps between two choices
	// a window averaging at least wideSteps deliveries per step gets every
	// P, one below narrowSteps one P; in between it keeps what it has
	wideSteps   = 24
	narrowSteps = 12
	// the GC percent while the live heap is small: below smallHeap it is
	// set, at or above largeHeap the process's own comes back
	smallHeapGC = 200
	smallHeap   = 192 << 20
	largeHeap   = 256 << 20
	// a step that logs at least burstEvents events (a watermark that fires
	// a window for each of a great many keys) is a burst
	burstEvents = 1 << 16
)

// processProcs and processGC are GOMAXPROCS and the GC percent as the first
// run that chose found them: what every later run goes back to, whatever
// an earlier run (say, a UI session left paused) set.
var (
	processProcs, processGC int
	processOnce             sync.Once
)

// tuning is the scheduler's choice of Ps and GC percent.
type tuning struct {
	procs, gc  bool // what it chooses
	begun      bool // begin was called
	max, now   int  // the most Ps it may set; what it set
	gcNow      int  // the GC percent it set
	collectIn  int  // steps until the collection after a burst (0: none due)
	steps      int  // steps of the current window
	deliveries int  // their deliveries
	// the runtime's setters and the live heap (a test's stand-ins)
	gomaxprocs func(int) int
	gcPercent  func(int) int
	liveHeap   func() uint64
	collect    func()
}

// begin reads what the process has; the tuning chooses the Ps if procs,
// the GC percent if gc.
func (t *tuning) begin(procs, gc bool) {
	t.begun, t.procs, t.gc = true, procs, gc
	processOnce.Do(func() { processProcs, processGC = runtime.GOMAXPROCS(0), gcPercentNow() })
	t.gomaxprocs, t.gcPercent, t.liveHeap = runtime.GOMAXPROCS, debug.SetGCPercent, readLiveHeap
	t.collect = func() { go runtime.GC() }
	t.max, t.now, t.gcNow = processProcs, runtime.GOMAXPROCS(0), gcPercentNow()
}

// gcPercentNow is the GC percent in force (debug.SetGCPercent is the only
// way to read it: it is set to off and back at once).
func gcPercentNow() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// step counts a step of n deliveries (after begin) and, at the end of a
// window, sets GOMAXPROCS to what the window's width asks for and the GC
// percent to what the live heap asks for.
func (t *tuning) step(n int) {
	if t.collectIn > 0 {
		if t.collectIn--; t.collectIn == 0 {
			t.collect()
		}
	}
	t.steps++
	t.deliveries += n
	if t.steps < tuneWindow {
		return
	}
	if t.procs {
		want := t.now
		switch {
		case t.deliveries >= wideSteps*t.steps:
			want = t.max
		case t.deliveries < narrowSteps*t.steps:
			want = 1
		}
		t.setProcs(want)
	}
	if t.gc && processGC > 0 {
		switch live := t.liveHeap(); {
		case live < smallHeap:
			t.setGC(max(smallHeapGC, processGC))
		case live >= largeHeap:
			t.setGC(processGC)
		}
	}
	t.steps, t.deliveries = 0, 0
}

// logged counts the log events of a step that ended (after begin): when
// the tuning chooses the GC percent, a burst has a collection started
// tuneWindow steps later (a later burst puts it off again).
func (t *tuning) logged(events int) {
	if t.gc && events >= burstEvents {
		t.collectIn = tuneWindow
	}
}

// setProcs makes GOMAXPROCS n and setGC the GC percent p (each a stop of
// the world, so only on a change).
func (t *tuning) setProcs(n int) {
	if n != t.now {
		t.gomaxprocs(n)
		t.now = n
	}
}

func (t *tuning) setGC(p int) {
	if p != t.gcNow {
		t.gcPercent(p)
		t.gcNow = p
	}
}

// restore gives the process back its own Ps and GC percent.
func (t *tuning) restore() {
	if !t.begun {
		return
	}
	if t.procs {
		t.setProcs(t.max)
	}
	if t.gc {
		t.setGC(processGC)
	}
}

// liveHeapSample is the runtime metric readLiveHeap reads.
var liveHeapSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// readLiveHeap is the heap the last collection found live, in bytes (the
// largest uint64 when the runtime does not say: the process's own GC
// percent then stays). Called by the scheduler only, one step at a time.
func readLiveHeap() uint64 {
	metrics.Read(liveHeapSample)
	if liveHeapSample[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxUint64
	}
	return liveHeapSample[0].Value.Uint64()
}
