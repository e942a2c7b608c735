package exchange

import "testing"

// With 2 exclusive buffers (Flink's buffers-per-channel default) a channel
// starts with credit 2. A producer with a backlog of 3 makes it ask its
// gate for 3 floating buffers (backlog + exclusive - free); the gate grants
// 2, the channel keeps both (2 new credits). After two buffers arrive and
// are recycled while the backlog is 0, the floating ones go back first.
func TestBufferManagerCreditAndFloating(t *testing.T) {
	b := NewBufferManager(2)
	if b.Available != 2 || b.Required != 2 {
		t.Fatalf("initial %+v", b)
	}
	if want := b.OnSenderBacklog(3, 8); want != 3 || b.Required != 5 || b.Requested != 3 {
		t.Fatalf("asked for %d floating (%+v), want 3", want, b)
	}
	if again := b.OnSenderBacklog(3, 8); again != 0 {
		t.Fatalf("asked again for %d while 3 are requested", again)
	}
	if credit, back := b.OnFloatingGranted(2); credit != 2 || back != 0 || b.Available != 4 || b.Floating != 2 || b.Requested != 1 {
		t.Fatalf("grant of 2: credit %d back %d, %+v", credit, back, b)
	}
	for i := 0; i < 2; i++ {
		if !b.Take() {
			t.Fatal("no credit for a buffer")
		}
	}
	b.OnSenderBacklog(0, 8) // the producer's backlog is served
	if credit, back := b.Recycle(2); credit != 0 || back != 2 || b.Floating != 0 || b.Available != 2 {
		t.Fatalf("recycle: credit %d back %d, %+v; want the 2 floating buffers back", credit, back, b)
	}
	// a late grant the channel no longer needs goes straight back
	if credit, back := b.OnFloatingGranted(1); credit != 0 || back != 1 {
		t.Fatalf("late grant: credit %d back %d", credit, back)
	}
}

// A data buffer without credit is refused; a gate without floating
// buffers is never asked.
func TestBufferManagerWithoutCredit(t *testing.T) {
	b := NewBufferManager(1)
	if !b.Take() || b.Take() {
		t.Fatal("one exclusive buffer must take exactly one data buffer")
	}
	if want := b.OnSenderBacklog(5, 0); want != 0 {
		t.Fatalf("asked a gate with no floating buffers for %d", want)
	}
	if credit, back := b.Recycle(1); credit != 1 || back != 0 || b.InUse != 0 {
		t.Fatalf("recycle: credit %d back %d, %+v", credit, back, b)
	}
}

// Without exclusive buffers (buffers-per-channel 0) an aligned barrier
// gives the channel's free floating buffers back and its credit restarts
// from 0 after ResumeConsumption; with exclusive buffers nothing changes.
func TestBufferManagerAlignedBarrier(t *testing.T) {
	b := NewBufferManager(0)
	b.OnSenderBacklog(2, 8)
	b.OnFloatingGranted(2)
	b.Take()
	if back := b.OnAlignedBarrier(); back != 1 || b.Floating != 1 || b.Available != 0 || b.Required != 0 {
		t.Fatalf("barrier: back %d, %+v; want the one free floating buffer back", back, b)
	}
	b.Recycle(1)
	b.OnResumeConsumption()
	if b.Available != 0 {
		t.Fatalf("after ResumeConsumption %+v, want no credit", b)
	}
	e := NewBufferManager(2)
	if back := e.OnAlignedBarrier(); back != 0 || e.Available != 2 {
		t.Fatalf("exclusive channel changed on a barrier: %d, %+v", back, e)
	}
}

// A floating buffer that held data goes back to the gate when the task
// recycles it, even while the channel's backlog still wants it: its
// recycler is the gate's LocalBufferPool, which gives it to the channel
// waiting longest. The channel asks again with its next backlog. (It kept
// it as a credit before, so channels with a long backlog held every
// floating buffer and a channel that asked later starved: swarm seed
// 4000833.) An exclusive buffer comes back as a credit; a data buffer takes
// a floating buffer before an exclusive one.
func TestBufferManagerUsedFloatingBufferGoesBackToTheGate(t *testing.T) {
	b := NewBufferManager(1)
	b.OnSenderBacklog(5, 8) // wants 5 + 1 - 1 = 5 floating
	b.OnFloatingGranted(2)  // credit 3: 1 exclusive, 2 floating
	for i := 0; i < 3; i++ {
		if !b.Take() {
			t.Fatalf("take %d: no credit", i)
		}
	}
	if b.InUseFloating != 2 {
		t.Fatalf("%d floating buffers in use, want 2 (taken before the exclusive one)", b.InUseFloating)
	}
	b.OnSenderBacklog(4, 8)
	credit, back := b.Recycle(3)
	if back != 2 || credit != 1 || b.Floating != 0 || b.Available != 1 || b.InUse != 0 {
		t.Fatalf("recycle of 3 with backlog 4: credit %d back %d, %+v; want both floating back, the exclusive one a credit", credit, back, b)
	}
}
