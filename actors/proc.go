package actors

import "github.com/anthdm/hollywood/actor"

// mailbox is a Hollywood process (Engine.SpawnProc, actor.Processer) whose
// inbox is a serial on the shared workers (workers.go): a message sent to
// its PID, from this process or from another through Hollywood's remote,
// is queued at once on the sender's goroutine and handled on a worker, one
// message at a time in the order they were queued, as Hollywood's own
// inbox would. Hollywood's inbox (Inbox, actor/inbox.go) instead starts a
// goroutine on every wake of an idle actor and copies its ring buffer into
// a fresh slice on every pop; a step is two such wakes per receiver (its
// Deliver, then its Done at the scheduler), which at parallelism 64 was a
// third of the CPU time. Hollywood's own remote stream writer is a process
// without an inbox too (remote/stream_writer.go), as are the remote
// transport's hub and gateway (cluster/remote/proc.go, inline: they
// handle a message on its sender's goroutine, with no queue).
//
// Processes of the run are never stopped through Hollywood (a component
// that stops is dropped by the kernel), so Shutdown has nothing to do and a
// poison pill is not expected; Hollywood's lifecycle messages (Initialized,
// Started) are sent by its own processes only.
type mailbox struct {
	pid *actor.PID
	box serial
	// quick, when set, may handle a message on the sender's goroutine
	// (serial.pushUnless) while nothing is queued or being handled
	quick func(any) bool
}

var _ actor.Processer = (*mailbox)(nil)

// spawnMailbox registers a mailbox process kind/id on e whose messages go
// to handle (and to quick first, when not nil).
func spawnMailbox(e *actor.Engine, kind, id string, handle func(any), quick func(any) bool) *actor.PID {
	p := &mailbox{pid: actor.NewPID(e.Address(), kind+"/"+id), quick: quick}
	p.box.handle = handle
	return e.SpawnProc(p)
}

func (p *mailbox) Start()          {}
func (p *mailbox) PID() *actor.PID { return p.pid }
func (p *mailbox) Shutdown()       {}

// Send queues msg; the sender is not kept (every message of the run names
// whom to answer, or goes to the scheduler).
func (p *mailbox) Send(_ *actor.PID, msg any, _ *actor.PID) {
	if p.quick != nil {
		p.box.pushUnless(msg, p.quick)
		return
	}
	p.box.push(msg)
}

// Invoke is how Hollywood's own inbox hands over messages; nothing calls
// it on a process without one, but it queues them all the same.
func (p *mailbox) Invoke(msgs []actor.Envelope) {
	for _, m := range msgs {
		p.Send(p.pid, m.Msg, m.Sender)
	}
}
