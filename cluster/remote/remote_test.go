package remote

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// syncBuffer is a bytes.Buffer safe for the goroutines that write stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.b, "%s ", time.Now().Format("05.000"))
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func settings(t *testing.T, kv ...string) config.Config {
	t.Helper()
	cfg := config.Default()
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// remoteRun runs (cfg, opt) with a jobmanager and n taskmanagers on their own
// engines in this process, over loopback; tms[i] runs before taskmanager i
// joins (nil: nothing).
type remoteRun struct {
	jm     *JobManager
	stderr *syncBuffer
	tmErrs chan error
	stop   []chan struct{}
}

func startRemote(t *testing.T, cfg config.Config, opt cluster.Options, n int) (*remoteRun, func() (*cluster.Result, []byte)) {
	t.Helper()
	r := &remoteRun{stderr: &syncBuffer{}, tmErrs: make(chan error, n)}
	jm, err := StartJobManager(JobManagerConfig{Endpoint: Endpoint{Advertise: "127.0.0.1:0"}, TaskManagers: cfg.TaskManagers,
		Spares: n - cfg.TaskManagers, Header: cluster.HeaderLine(cfg, opt), Stderr: r.stderr})
	if err != nil {
		t.Fatal(err)
	}
	r.jm = jm
	for i := 0; i < n; i++ {
		stop := make(chan struct{})
		r.stop = append(r.stop, stop)
		go func() {
			r.tmErrs <- RunTaskManager(TaskManagerConfig{Join: jm.addr, Host: "127.0.0.1", Interrupt: stop, Stderr: r.stderr})
		}()
	}
	return r, func() (*cluster.Result, []byte) {
		if err := jm.WaitForTaskManagers(20*time.Second, nil); err != nil {
			t.Fatalf("%v\n%s", err, r.stderr)
		}
		var log bytes.Buffer
		opt.Log = &log
		res, err := jm.Run(cfg, opt)
		if err != nil {
			t.Fatalf("%v\n%s", err, r.stderr)
		}
		return res, log.Bytes()
	}
}

func local(t *testing.T, cfg config.Config, opt cluster.Options) (*cluster.Result, []byte) {
	var log bytes.Buffer
	opt.Log = &log
	res, err := cluster.Run(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, log.Bytes()
}

func firstDiff(a, b []byte) string {
	line, x, y, differ := eventlog.FirstDifference(a, b)
	if !differ {
		return ""
	}
	return fmt.Sprintf("line %d:\n  local: %.500s\n  remote: %.500s", line, x, y)
}

func TestInProcessRemoteSameLog(t *testing.T) {
	cfg := settings(t, "sim.duration=20s")
	opt := cluster.Options{}
	_, want := local(t, cfg, opt)
	r, run := startRemote(t, cfg, opt, 2)
	start := time.Now()
	res, got := run()
	t.Logf("remote run: %s wall, %d steps; %+v", time.Since(start), res.Steps, r.jm.Stats())
	if d := firstDiff(want, got); d != "" {
		t.Fatalf("logs differ at %s\n%s", d, r.stderr)
	}
	for i := 0; i < 2; i++ {
		if err := <-r.tmErrs; err != nil {
			t.Errorf("taskmanager: %v", err)
		}
	}
}

// liveActions are the actions the log's action events record.
func liveActions(t *testing.T, log []byte) []action.Action {
	t.Helper()
	var out []action.Action
	for _, line := range bytes.Split(log, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"event":"action"`)) {
			continue
		}
		i := bytes.Index(line, []byte(`"action":"`))
		rest := line[i+len(`"action":"`):]
		a, err := action.Parse(string(rest[:bytes.IndexByte(rest, '"')]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// loseAfter declares the processes at positions lost (as a closed
// connection does) once `batches` step batches went out.
func loseAfter(r *remoteRun, batches uint64, positions ...int) {
	go func() {
		for r.jm.Stats().Batches < batches {
			time.Sleep(time.Millisecond)
		}
		r.jm.mu.Lock()
		var ps []*peer
		for _, i := range positions {
			ps = append(ps, r.jm.initial[i-1])
		}
		r.jm.mu.Unlock()
		for _, p := range ps {
			r.jm.receive(&unreachable{p: p}, nil)
		}
	}()
}

// A process lost mid-run is killed at the virtual time it is noticed, its
// actors are rebuilt in the jobmanager process, and the log replays in one
// process.
func TestInProcessLossReplays(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose []int
	}{{"one", []int{2}}, {"both", []int{1, 2}}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := settings(t, "sim.duration=40s", "restart-strategy.type=fixed-delay", "execution.checkpointing.interval=10s")
			opt := cluster.Options{}
			r, run := startRemote(t, cfg, opt, 2)
			loseAfter(r, 3000, tc.lose...)
			res, got := run()
			live := liveActions(t, got)
			t.Logf("job %s, %d steps, live actions %v\n%s", res.JobStatus, res.Steps, live, r.stderr)
			if len(live) != len(tc.lose) {
				t.Fatalf("want %d live kills, got %v", len(tc.lose), live)
			}
			opt.LiveActions = live
			_, want := local(t, cfg, opt)
			if d := firstDiff(want, got); d != "" {
				t.Fatalf("logs differ at %s", d)
			}
		})
	}
}

// Which lost processes one re-run rebuilds: those that answered no step
// from the first step that needs one of them; a process lost after it
// answered that step waits for a later re-run.
func TestRebuildTargets(t *testing.T) {
	type call struct {
		steps uint64
		names string
	}
	calls := make(chan call, 4)
	eng, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	j := &JobManager{started: true, cfg: JobManagerConfig{Stderr: io.Discard}, engine: eng,
		self: spawnInline(eng, HubName, func(any, *actor.PID) {}),
		rebuild: func(steps uint64, names []string) ([]string, error) {
			slices.Sort(names)
			calls <- call{steps, strings.Join(names, " ")}
			return nil, nil
		}}
	batch := func(step uint64) *inflight { return &inflight{batch: &messages.StepBatch{Step: step}} }
	a := &peer{id: "a", lost: true, answered: 41, names: map[string]bool{"tm-1": true}, pending: []*inflight{batch(42)}}
	b := &peer{id: "b", lost: true, answered: 42, names: map[string]bool{"tm-2": true}}          // answered step 42, then lost
	c := &peer{id: "c", lost: true, answered: 30, names: map[string]bool{"tm-3": true}}          // idle since step 30
	d := &peer{id: "d", lost: true, adopted: true, names: map[string]bool{"tm-4": true}}         // rebuilt already
	e := &peer{id: "e", answered: 42, inflight: batch(43), names: map[string]bool{"tm-5": true}} // alive
	j.peers = []*peer{a, b, c, d, e}
	j.startRebuild()
	if got := <-calls; got != (call{41, "tm-1 tm-3"}) {
		t.Fatalf("re-run %+v, want 41 steps for tm-1 and tm-3", got)
	}
	if !a.rebuilds || b.rebuilds || !c.rebuilds {
		t.Fatalf("rebuilding a=%v b=%v c=%v", a.rebuilds, b.rebuilds, c.rebuilds)
	}
	j.startRebuild() // one at a time
	select {
	case got := <-calls:
		t.Fatalf("a second re-run %+v while one is under way", got)
	default:
	}
	a.rebuilds, c.rebuilds, a.adopted, c.adopted, a.pending = false, false, true, true, nil
	b.pending = []*inflight{batch(50)}
	j.startRebuild()
	if got := <-calls; got != (call{49, "tm-2"}) {
		t.Fatalf("re-run %+v, want 49 steps for tm-2", got)
	}
}
