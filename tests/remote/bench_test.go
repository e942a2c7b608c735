package remote_test

import (
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"

	"github.com/flinksim/flinksim/messages"
)

// BenchmarkRemoteDefaultJob runs the default job (5 minutes of virtual
// time) in one process (flinksim run) and over a jobmanager with two
// taskmanager processes on loopback, and reports steps and records per wall
// second of each, the heartbeat round trip between the processes during the
// remote run, and an idle loopback round trip between two Hollywood engines
// (one 300-byte StepBatch out, one StepReply back; the transport before
// issue 28's framed connections) measured next to them;
// and records per CPU second (user and system, of the three processes for
// the remote run), which moves far less with the machine's load.
//
//	go test ./tests/remote -run XXX -bench RemoteDefaultJob -benchtime 1x
func BenchmarkRemoteDefaultJob(b *testing.B) {
	var local, remote []float64 // steps/s
	var localRec, remoteRec []float64
	var hb []float64
	var localCPU, remoteCPU []float64 // records per CPU second (of all three processes)
	for i := 0; i < b.N; i++ {
		tmp := b.TempDir()
		one := start(b, "flinksim run", repo, "", bin, "run", "--log", filepath.Join(tmp, "one.log"))
		if code := one.wait(b, 5*time.Minute); code != 0 {
			b.Fatalf("flinksim run: exit %d\n%s", code, one.stderr)
		}
		steps, recs := summary(b, read(b, filepath.Join(tmp, "one.log")))
		wall := number(b, one.stderr.String(), `([0-9.]+) ?s wall`)
		local, localRec = append(local, steps/wall), append(localRec, recs/wall)
		localCPU = append(localCPU, recs/one.cpu().Seconds())

		c := startCluster(b, repo, spec{tms: 2, args: []string{"--log", filepath.Join(tmp, "remote.log")}})
		if code := c.jm.wait(b, 5*time.Minute); code != 0 {
			b.Fatalf("jobmanager: exit %d\n%s", code, c.jm.stderr)
		}
		s := c.jm.stderr.String()
		remote = append(remote, number(b, s, `steps \(([0-9]+) per second\)`))
		remoteRec = append(remoteRec, number(b, s, `records read \(([0-9]+) per second\)`))
		hb = append(hb, float64(duration(b, s, `heartbeat round trip median ([0-9.]+[µm]?s)`).Microseconds()))
		cpu := c.jm.cpu()
		for _, p := range c.tms {
			p.wait(b, 30*time.Second)
			cpu += p.cpu()
		}
		remoteCPU = append(remoteCPU, recs/cpu.Seconds())
		b.Logf("%s", lastLine(s[:len(s)-len(lastLine(s))-1]))
	}
	b.ReportMetric(median(local), "local-steps/s")
	b.ReportMetric(median(localRec), "local-records/s")
	b.ReportMetric(median(remote), "remote-steps/s")
	b.ReportMetric(median(remoteRec), "remote-records/s")
	b.ReportMetric(median(hb), "heartbeat-rtt-µs")
	b.ReportMetric(median(localCPU), "local-records/cpu-s")
	b.ReportMetric(median(remoteCPU), "remote-records/cpu-s")
	b.ReportMetric(float64(idleRoundTrip(b).Nanoseconds())/1e3, "idle-rtt-µs")
}

// idleRoundTrip is the median of 2000 sequential round trips between two
// Hollywood engines on loopback in this process.
func idleRoundTrip(b testing.TB) time.Duration {
	engine := func() *actor.Engine {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(hremote.New(addr, hremote.NewConfig())))
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	ea, eb := engine(), engine()
	back := make(chan struct{}, 1)
	echo := eb.SpawnFunc(func(c *actor.Context) {
		if m, ok := c.Message().(*messages.StepBatch); ok {
			c.Engine().SendWithSender(c.Sender(), &messages.StepReply{Step: m.Step}, c.PID())
		}
	}, "echo", actor.WithID("echo"))
	self := ea.SpawnFunc(func(c *actor.Context) {
		if _, ok := c.Message().(*messages.StepReply); ok {
			back <- struct{}{}
		}
	}, "bench", actor.WithID("bench"))
	payload := make([]byte, 300)
	var rtts []time.Duration
	for i := 0; i < 2200; i++ {
		t0 := time.Now()
		ea.SendWithSender(echo, &messages.StepBatch{Step: uint64(i), DeliverBatch: payload}, self)
		<-back
		if i >= 200 { // the first ones dial
			rtts = append(rtts, time.Since(t0))
		}
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2]
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func number(b testing.TB, s, re string) float64 {
	b.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		b.Fatalf("no %s in:\n%s", re, s)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func duration(b testing.TB, s, re string) time.Duration {
	b.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		b.Fatalf("no %s in:\n%s", re, s)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// summary is the steps and records read of a log's summary line.
func summary(b testing.TB, log []byte) (float64, float64) {
	s := string(log[len(log)-2000:])
	return number(b, s, `"scheduler_steps":([0-9]+)`), number(b, s, `"records_read":([0-9]+)`)
}
