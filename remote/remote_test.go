package remote

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
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
			r.tmErrs <- RunTaskManager(TaskManagerConfig{Join: jm.Address(), Host: "127.0.0.1", Interrupt: stop, Stderr: r.stderr})
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
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf("line %d:\n  local:  %.400s\n  remote: %.400s", i+1, x, y)
		}
	}
	return ""
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
	_ = action.KillTaskManager
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

func TestInProcessLossReplays(t *testing.T) {
	cfg := settings(t, "sim.duration=2min", "restart-strategy.type=fixed-delay", "execution.checkpointing.interval=10s")
	opt := cluster.Options{}
	r, run := startRemote(t, cfg, opt, 2)
	go func() {
		time.Sleep(time.Second)
		r.jm.mu.Lock()
		p := r.jm.initial[1]
		r.jm.mu.Unlock()
		r.jm.engine.Send(r.jm.self, &unreachable{p: p})
	}()
	res, got := run()
	live := liveActions(t, got)
	t.Logf("job %s, %d steps, live actions %v\n%s", res.JobStatus, res.Steps, live, r.stderr)
	if len(live) != 1 {
		t.Fatalf("want one live kill, got %v", live)
	}
	opt.LiveActions = live
	_, want := local(t, cfg, opt)
	if d := firstDiff(want, got); d != "" {
		t.Fatalf("logs differ at %s", d)
	}
}
