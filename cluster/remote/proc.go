package remote

import "github.com/anthdm/hollywood/actor"

// inline is a Hollywood process without an inbox: a message sent to its PID
// is handled at once, on the sender's goroutine (for a message from another
// process, the goroutine that decoded it), like Hollywood's own stream
// writer (Engine.SpawnProc). The hub and the gateway are inline, so that a
// step crossing between processes costs no goroutine wake-up of theirs;
// handle must be safe for concurrent use and must not block.
type inline struct {
	pid    *actor.PID
	handle func(msg any, sender *actor.PID)
}

var _ actor.Processer = (*inline)(nil)

// spawnInline registers handle as process kind/kind on e.
func spawnInline(e *actor.Engine, kind string, handle func(msg any, sender *actor.PID)) *actor.PID {
	return e.SpawnProc(&inline{pid: actor.NewPID(e.Address(), kind+"/"+kind), handle: handle})
}

func (p *inline) Start()                                      {}
func (p *inline) PID() *actor.PID                             { return p.pid }
func (p *inline) Send(_ *actor.PID, msg any, from *actor.PID) { p.handle(msg, from) }
func (p *inline) Invoke([]actor.Envelope)                     {}
func (p *inline) Shutdown()                                   {}
