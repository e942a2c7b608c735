package remote

import (
	"bytes"
	"crypto/hmac"
	"io"
	"net"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"google.golang.org/protobuf/proto"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
)

// memberJM is a jobmanager with one member, p, whose connection is one end
// of a pipe; Dones it hands on reach done.
func memberJM(t *testing.T) (*JobManager, *peer, chan *kernel.Done) {
	t.Helper()
	eng, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *kernel.Done, 16)
	j := &JobManager{started: true, cfg: JobManagerConfig{Stderr: io.Discard}, engine: eng, byAddr: map[string]*peer{},
		dropShown: map[string]int{}, dropWhy: map[string]uint64{}, byes: make(chan struct{}, 4)}
	j.self = spawnInline(eng, HubName, func(any, *actor.PID) {})
	j.scheduler = spawnInline(eng, "scheduler", func(m any, _ *actor.PID) {
		if d, ok := m.(*kernel.Done); ok {
			done <- d
		}
	})
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go io.Copy(io.Discard, b)
	p := &peer{id: "tm-proc", addr: "10.0.0.2:4000", c: newConn(a), names: map[string]bool{"tm-1": true},
		inspects: map[uint64]string{}, position: 1}
	j.peers = []*peer{p}
	j.byAddr[p.addr] = p
	return j, p, done
}

func reply(step uint64, dones ...*messages.Done) *messages.StepReply {
	b, _ := proto.Marshal(&messages.DoneBatch{Dones: dones})
	return &messages.StepReply{Step: step, DoneBatch: b}
}

// A member's messages out of the protocol are dropped and counted, and end
// nothing: an answer to a step it was not asked (a late one, or one played
// again), a Bye before RunOver, a view not asked, a message only a
// jobmanager sends. The answer to the step in flight goes to the
// scheduler, with what it spawned bound to the member's address.
func TestMemberOutOfProtocolDropped(t *testing.T) {
	j, p, done := memberJM(t)
	p.inflight = &inflight{batch: &messages.StepBatch{Step: 7}, to: []string{"tm-1"}}
	old := reply(6, &messages.Done{Step: 6, Actor: "tm-1"})
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_StepReply{StepReply: old}})
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_Bye{Bye: &messages.Bye{}}})
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_InspectReply{InspectReply: &messages.InspectReply{Id: 3, Actor: "tm-1"}}})
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_RunOver{RunOver: &messages.RunOver{Failed: true}}})
	if st := j.Stats(); st.Dropped != 4 {
		t.Fatalf("%d dropped, want 4", st.Dropped)
	}
	if len(done) != 0 || p.lost || len(j.Problems()) != 0 || len(j.byes) != 0 {
		t.Fatalf("a dropped message had an effect: %d Dones, lost %v, problems %v, byes %d", len(done), p.lost, j.Problems(), len(j.byes))
	}
	good := reply(7, &messages.Done{Step: 7, Actor: "tm-1", Spawned: []*messages.Spawned{{Name: "map-1#1", Address: "local", Id: "elsewhere"}}})
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_StepReply{StepReply: good}})
	d := <-done
	if d.Actor != "tm-1" || d.Spawned[0].Address != p.addr || d.Spawned[0].Id != "node/map-1#1" || !p.names["map-1#1"] {
		t.Fatalf("the answer reached the scheduler as %v (names %v)", d, p.names)
	}
	// the same answer again: it was not asked any more
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_StepReply{StepReply: good}})
	if st := j.Stats(); st.Dropped != 5 || len(done) != 0 {
		t.Fatalf("a replayed answer: %d dropped, %d Dones", st.Dropped, len(done))
	}
	if s := j.dropSummary(); s != "5 messages dropped from non-members or out of the protocol (out of protocol 1, unasked 4)" {
		t.Fatalf("summary %q", s)
	}
}

// An answer for actors the step did not go to (another member's, or one
// it does not host) is a broken member: lost, a problem, nothing handed on.
func TestMemberAnswerForOthersLoses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dones []*messages.Done
	}{
		{"another actor", []*messages.Done{{Step: 7, Actor: "tm-2"}}},
		{"twice one actor", []*messages.Done{{Step: 7, Actor: "tm-1"}, {Step: 7, Actor: "tm-1"}}},
		{"another step", []*messages.Done{{Step: 3, Actor: "tm-1"}}},
		{"none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, p, done := memberJM(t)
			p.inflight = &inflight{batch: &messages.StepBatch{Step: 7}, to: []string{"tm-1"}}
			j.fromMember(p, &messages.Frame{Body: &messages.Frame_StepReply{StepReply: reply(7, tc.dones...)}})
			if !p.lost || len(j.Problems()) != 1 || len(done) != 0 {
				t.Fatalf("lost %v, problems %v, %d Dones", p.lost, j.Problems(), len(done))
			}
		})
	}
}

// The join MAC binds the token, both nonces, the speaker and the fields.
func TestJoinMAC(t *testing.T) {
	tok, n1, n2 := []byte("token-token-token"), []byte("nonce-1"), []byte("nonce-2")
	m := joinMAC(tok, RoleTaskManager, n1, n2, "id", "fp")
	for name, other := range map[string][]byte{
		"token":   joinMAC([]byte("token-token-tokeN"), RoleTaskManager, n1, n2, "id", "fp"),
		"nonce":   joinMAC(tok, RoleTaskManager, []byte("nonce-3"), n2, "id", "fp"),
		"speaker": joinMAC(tok, RoleJobManager, n1, n2, "id", "fp"),
		"field":   joinMAC(tok, RoleTaskManager, n1, n2, "id2", "fp"),
		"split":   joinMAC(tok, RoleTaskManager, n1, n2, "idf", "p"),
	} {
		if bytes.Equal(m, other) {
			t.Errorf("another %s gives the same MAC", name)
		}
	}
}

// A process that joins from the address of one lost in this run is
// refused: the lost process's actors' PIDs name that address, so the
// newcomer would get the steps meant for them. One from another address
// joins.
func TestJoinAtLostAddressRefused(t *testing.T) {
	j, p, _ := memberJM(t)
	j.cfg.TaskManagers, j.cfg.Spares = 1, 2
	j.joined = make(chan struct{}, 1)
	j.lose(p, "test")
	newcomer := func() (*conn, net.Conn) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		go io.Copy(io.Discard, b)
		return newConn(a), b
	}
	req := &messages.JoinRequest{Version: Version(), Fingerprint: Fingerprint(), ResourceId: "new"}
	c, _ := newcomer()
	if q := j.join(c, req, nonce(), p.addr); q != nil || j.byAddr[p.addr] != p {
		t.Fatalf("a join from the lost process's address %s was let in (byAddr names %v)", p.addr, j.byAddr[p.addr])
	}
	c, _ = newcomer()
	if q := j.join(c, req, nonce(), "10.0.0.2:4001"); q == nil || j.byAddr["10.0.0.2:4001"] != q || j.byAddr[p.addr] != p {
		t.Fatalf("a join from another port: %v", q)
	}
}

// Two inspections of one actor in flight are both answered: each reply is
// matched by its request id; a reply to an id not asked is dropped.
func TestInspectsKeyedByRequest(t *testing.T) {
	j, p, _ := memberJM(t)
	views := make(chan *messages.InspectReply, 4)
	j.scheduler = spawnInline(j.engine, "views", func(m any, _ *actor.PID) {
		if r, ok := m.(*messages.InspectReply); ok {
			views <- r
		}
	})
	tr := (*transport)(j)
	pid := actor.NewPID(p.addr, "node/tm-1")
	tr.Send(j.engine, j.self, pid, &messages.InspectRequest{Id: 1})
	tr.Send(j.engine, j.self, pid, &messages.InspectRequest{Id: 2})
	for _, id := range []uint64{2, 1, 1, 3} {
		j.fromMember(p, &messages.Frame{Body: &messages.Frame_InspectReply{InspectReply: &messages.InspectReply{Id: id, Actor: "tm-1"}}})
	}
	var got []uint64
	for len(views) > 0 {
		got = append(got, (<-views).Id)
	}
	if len(got) != 2 || got[0] != 2 || got[1] != 1 || j.Stats().Dropped != 2 {
		t.Fatalf("views %v reached the scheduler, %d dropped; want [2 1] and 2 (the second 1, and 3)", got, j.Stats().Dropped)
	}
	// a view of another actor under an asked id is not the one asked
	tr.Send(j.engine, j.self, pid, &messages.InspectRequest{Id: 4})
	j.fromMember(p, &messages.Frame{Body: &messages.Frame_InspectReply{InspectReply: &messages.InspectReply{Id: 4, Actor: "tm-2"}}})
	if len(views) != 0 || j.Stats().Dropped != 3 {
		t.Fatalf("a view of tm-2 for a request to tm-1 was taken")
	}
}

// The jobmanager's MAC on its JoinAccepted covers the whole answer: a
// change of any field (settings, watchdog, position, expected, spare) or of
// the name fails the taskmanager's check.
func TestAcceptMACCoversTheAnswer(t *testing.T) {
	tok, jn, tn := []byte("token-token-token"), nonce(), nonce()
	a := &messages.JoinAccepted{Position: 1, Expected: 2, Header: []byte(`{"seed":1}`), WatchdogTimeoutMs: 5000}
	a.Mac = acceptMAC(tok, jn, tn, "tm", a)
	if again := acceptMAC(tok, jn, tn, "tm", a); !hmac.Equal(a.Mac, again) {
		t.Fatal("the MAC of the answer as sent does not check (its own mac field must not count)")
	}
	for name, change := range map[string]func(*messages.JoinAccepted){
		"header":   func(m *messages.JoinAccepted) { m.Header = []byte(`{"seed":2}`) },
		"watchdog": func(m *messages.JoinAccepted) { m.WatchdogTimeoutMs = 1 },
		"position": func(m *messages.JoinAccepted) { m.Position = 2 },
		"expected": func(m *messages.JoinAccepted) { m.Expected = 3 },
		"spare":    func(m *messages.JoinAccepted) { m.Spare = true },
	} {
		m := proto.Clone(a).(*messages.JoinAccepted)
		change(m)
		if hmac.Equal(a.Mac, acceptMAC(tok, jn, tn, "tm", m)) {
			t.Errorf("a changed %s keeps the MAC", name)
		}
	}
	if hmac.Equal(a.Mac, acceptMAC(tok, jn, tn, "tm2", a)) || hmac.Equal(a.Mac, acceptMAC(tok, jn, nonce(), "tm", a)) {
		t.Error("another name or nonce keeps the MAC")
	}
}
