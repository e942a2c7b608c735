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
