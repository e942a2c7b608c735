//go:build !js

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// recipeOf is the default job with the given settings.
func recipeOf(t testing.TB, sets ...string) Recipe {
	t.Helper()
	cfg := config.Default()
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return Recipe{Settings: cfg}
}

// testServer is a Server behind an httptest server; logs collects each
// session's whole log by generation.
type testServer struct {
	*Server
	http *httptest.Server
	mu   sync.Mutex
	logs map[int]*bytes.Buffer
}

func newTestServer(t testing.TB, r Recipe) *testServer {
	t.Helper()
	ts := &testServer{logs: map[int]*bytes.Buffer{}}
	srv, err := New(Config{Recipe: r, Loopback: true, SessionLog: func(gen int) io.Writer {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		b := &bytes.Buffer{}
		ts.logs[gen] = b
		return lockedWriter{&ts.mu, b}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = srv
	ts.http = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close() // ends the streams first
		ts.http.Close()
	})
	return ts
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (ts *testServer) log(gen int) []byte {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return bytes.Clone(ts.logs[gen].Bytes())
}

// post sends a same-origin POST and returns the status and body.
func (ts *testServer) post(t testing.TB, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.http.URL+path, strings.NewReader(body))
	req.Header.Set("Origin", ts.http.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (ts *testServer) mustPost(t testing.TB, path, body string) map[string]any {
	t.Helper()
	st, b := ts.post(t, path, body)
	if st != http.StatusOK {
		t.Fatalf("POST %s %q: %d %s", path, body, st, b)
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(b), &m)
	return m
}

func (ts *testServer) get(t testing.TB, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(ts.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (ts *testServer) state(t testing.TB) State {
	t.Helper()
	st, b := ts.get(t, "/sim/state")
	if st != http.StatusOK {
		t.Fatalf("GET /sim/state: %d %s", st, b)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSecurityRules holds the server to its rules: state changes only by
// POST and only from this page's origin, loopback host names only, bodies
// size-limited, bad actions and settings refused with the CLI's message and
// nothing changed.
func TestSecurityRules(t *testing.T) {
	ts := newTestServer(t, recipeOf(t))
	ts.mustPost(t, "/sim/seek", "2s")
	before := ts.state(t)

	send := func(method, path, body string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	kill := "kill-taskmanager tm-1"
	for _, tc := range []struct {
		name       string
		method     string
		path, body string
		hdr        map[string]string
		want       int
		wantText   string
	}{
		{"another origin", "POST", "/sim/action", kill, map[string]string{"Origin": "http://evil.example"}, 403, "origin"},
		{"cross-site fetch", "POST", "/sim/action", kill, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross-site"},
		{"another port on localhost", "POST", "/sim/speed", "max", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "same-site"},
		{"null origin", "POST", "/sim/seek", "1s", map[string]string{"Origin": "null"}, 403, "origin"},
		{"rebound host name", "GET", "/sim/state", "", map[string]string{"Host": "evil.example:8081"}, 403, "localhost only"},
		{"rebound host name posting", "POST", "/sim/action", kill, map[string]string{"Host": "evil.example"}, 403, "localhost only"},
		{"GET does not act", "GET", "/sim/action", "", nil, 405, ""},
		{"PUT does not act", "PUT", "/sim/speed", "max", nil, 405, ""},
		{"DELETE does not act", "DELETE", "/sim/settings", "", nil, 405, ""},
		{"body too large", "POST", "/sim/action", "trigger-checkpoint " + strings.Repeat("x", maxActionBody), nil, 413, "larger than"},
		{"settings too large", "POST", "/sim/settings", "sim.seed=" + strings.Repeat("1", maxSettingsBody), nil, 413, "larger than"},
		{"malformed action", "POST", "/sim/action", "kill-taskmanager", nil, 400, "kill-taskmanager needs one task manager name"},
		{"unknown verb", "POST", "/sim/action", "explode tm-1", nil, 400, `unknown verb "explode"`},
		{"two lines", "POST", "/sim/action", "trigger-checkpoint\nkill-taskmanager tm-1", nil, 400, "one action"},
		{"action in the past", "POST", "/sim/action", "at=1s trigger-checkpoint", nil, 400, "in the past"},
		{"bad speed", "POST", "/sim/speed", "warp", nil, 400, "speed"},
		{"seek without a unit", "POST", "/sim/seek", "1500", nil, 400, "unit"},
		{"unknown setting", "POST", "/sim/settings", "parallelism.defualt=3", nil, 400, `did you mean "parallelism.default"`},
		{"setting out of range", "POST", "/sim/settings", "parallelism.default=0", nil, 400, "parallelism.default"},
		{"settings Flink refuses", "POST", "/sim/settings", "parallelism.default=200\npipeline.max-parallelism=128", nil, 400,
			"Maximum parallelism must not be smaller than parallelism."},
	} {
		st, body := send(tc.method, tc.path, tc.body, tc.hdr)
		if st != tc.want || !strings.Contains(body, tc.wantText) {
			t.Errorf("%s: %s %s: %d %q, want %d containing %q", tc.name, tc.method, tc.path, st, strings.TrimSpace(body), tc.want, tc.wantText)
		}
	}
	// the CLI's message, word for word
	_, cliErr := action.Parse("at=0s kill-taskmanager")
	if st, body := send("POST", "/sim/action", "kill-taskmanager", nil); st != 400 || strings.TrimSpace(body) != cliErr.Error() {
		t.Errorf("a malformed action answers %q, the CLI says %q", body, cliErr)
	}
	cfg := config.Default()
	if st, body := send("POST", "/sim/settings", "parallelism.default=0", nil); st != 400 || strings.TrimSpace(body) != cfg.Set("parallelism.default", "0").Error() {
		t.Errorf("a bad setting answers %q, want the CLI's %q", body, cfg.Set("parallelism.default", "0"))
	}
	after := ts.state(t)
	if after.VT != before.VT || after.Generation != before.Generation || after.Speed != before.Speed || len(after.TMs) != len(before.TMs) {
		t.Fatalf("refused requests changed the session: %+v -> %+v", before.Timeline, after.Timeline)
	}
	for _, tm := range after.TMs {
		if !tm.Alive {
			t.Fatalf("%s was killed by a refused request", tm.Name)
		}
	}
	// and this page's own requests work: loopback host names, same origin
	if st, body := send("POST", "/sim/speed", "pause", map[string]string{"Host": "localhost:8081", "Origin": "http://localhost:8081"}); st != 200 {
		t.Fatalf("same-origin POST from localhost: %d %s", st, body)
	}
	if st, body := send("POST", "/sim/speed", "pause", nil); st != 200 {
		t.Fatalf("curl (no Origin, no Sec-Fetch-Site): %d %s", st, body)
	}
}

// TestNonLoopbackServesAnyHost: with --listen on another interface the
// Host check is off (the CLI warns instead), the origin check stays.
func TestNonLoopbackServesAnyHost(t *testing.T) {
	srv, err := New(Config{Recipe: recipeOf(t), Loopback: false})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	req := httptest.NewRequest("GET", "/sim/state", nil)
	req.Host = "flinksim.example:8081"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET with another host name: %d", rec.Code)
	}
	req = httptest.NewRequest("POST", "/sim/speed", strings.NewReader("max"))
	req.Host = "flinksim.example:8081"
	req.Header.Set("Origin", "http://evil.example")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 403 {
		t.Fatalf("cross-origin POST: %d", rec.Code)
	}
}

// TestObservedEqualsUnobserved runs the same job twice: once with
// cluster.Run, once in the UI at max speed with stream clients reading
// (one fast, one that never reads, one that disconnects) and state polled;
// the logs are byte-identical.
func TestObservedEqualsUnobserved(t *testing.T) {
	r := recipeOf(t, "sim.duration=25 s", "execution.checkpointing.interval=4 s", "sink.delivery-guarantee=exactly-once")
	var plain bytes.Buffer
	opt := r.Options
	opt.Log = &plain
	if _, err := cluster.Run(r.Settings, opt); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, r)
	stopFast := readStream(t, ts.http.URL+"/sim/stream")
	defer stopFast()
	stuck, err := http.Get(ts.http.URL + "/sim/stream") // never read
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Body.Close()
	gone, err := http.Get(ts.http.URL + "/sim/stream")
	if err != nil {
		t.Fatal(err)
	}
	gone.Body.Close()
	ts.mustPost(t, "/sim/speed", "max")
	deadline := time.Now().Add(60 * time.Second)
	for !ts.state(t).Ended {
		if time.Now().After(deadline) {
			st := ts.state(t)
			t.Fatalf("the run did not end: vt %d speed %s ended %v job %s", st.VT, st.Speed, st.Ended, st.Job.Status)
		}
		ts.get(t, "/jobs/overview")
		time.Sleep(20 * time.Millisecond)
	}
	if a, b := plain.Bytes(), ts.log(1); !bytes.Equal(a, b) {
		t.Fatalf("watching changed the log: %s", firstDiff(a, b))
	}
}

// firstDiff names the first line where two logs differ.
func firstDiff(a, b []byte) string {
	line, x, y, differ := eventlog.FirstDifference(a, b)
	if !differ {
		return "no difference"
	}
	return fmt.Sprintf("line %d:\n  want: %.500s\n  got: %.500s", line, x, y)
}

// readStream reads frames from an SSE stream in the background until stop
// is called.
func readStream(t testing.TB, url string) (stop func()) {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
		}
	}()
	return func() {
		resp.Body.Close()
		<-done
	}
}

// frame is one parsed stream event.
type frame struct {
	ID    string
	Gen   int               `json:"gen"`
	Reset bool              `json:"reset"`
	Skip  int               `json:"skipped"`
	Evs   []json.RawMessage `json:"events"`
	State State             `json:"state"`
}

// nextFrames reads n frames from an SSE response.
func nextFrames(t testing.TB, sc *bufio.Scanner, n int) []frame {
	t.Helper()
	var out []frame
	var id string
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			var f frame
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f); err != nil {
				t.Fatalf("frame: %v", err)
			}
			f.ID = id
			out = append(out, f)
		}
	}
	return out
}

// TestStreamResumes: a reconnecting client that sends its Last-Event-ID
// gets the log lines after it, not the ones it had; a client of another
// generation is told to reset.
func TestStreamResumes(t *testing.T) {
	ts := newTestServer(t, recipeOf(t))
	ts.mustPost(t, "/sim/seek", "3s")
	resp, err := http.Get(ts.http.URL + "/sim/stream")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	f := nextFrames(t, sc, 1)[0]
	resp.Body.Close()
	if !f.Reset || len(f.Evs) == 0 || !strings.Contains(string(f.Evs[0]), `"event":"header"`) {
		t.Fatalf("a new client starts with the log from its header: reset=%v %d lines", f.Reset, len(f.Evs))
	}
	ts.mustPost(t, "/sim/seek", "6s")
	req, _ := http.NewRequest("GET", ts.http.URL+"/sim/stream", nil)
	req.Header.Set("Last-Event-ID", f.ID)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc = bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	g := nextFrames(t, sc, 1)[0]
	resp.Body.Close()
	if g.Reset || len(g.Evs) == 0 || g.State.VT != 6_000_000 {
		t.Fatalf("resume: reset=%v lines=%d vt=%d", g.Reset, len(g.Evs), g.State.VT)
	}
	for _, e := range g.Evs {
		var ev struct {
			VT int64 `json:"vt"`
		}
		_ = json.Unmarshal(e, &ev)
		if ev.VT < 3_000_000 {
			t.Fatalf("the resumed stream sent a line the client had: %s", e)
		}
	}
	// after a jump back the log starts over: the old cursor resets
	ts.mustPost(t, "/sim/seek", "1s")
	req.Header.Set("Last-Event-ID", g.ID)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc = bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	h := nextFrames(t, sc, 1)[0]
	resp.Body.Close()
	if !h.Reset || h.Gen == g.Gen {
		t.Fatalf("after a jump back: reset=%v gen %d -> %d", h.Reset, g.Gen, h.Gen)
	}
}

// TestManySlowAndVanishingClients: clients that never read, clients that
// go away mid-stream and more clients than allowed neither stop the run
// nor stay registered.
func TestManySlowAndVanishingClients(t *testing.T) {
	ts := newTestServer(t, recipeOf(t))
	var stuck []*http.Response
	for i := 0; i < 8; i++ {
		resp, err := http.Get(ts.http.URL + "/sim/stream")
		if err != nil {
			t.Fatal(err)
		}
		stuck = append(stuck, resp)
	}
	for i := 0; i < 8; i++ {
		stop := readStream(t, ts.http.URL+"/sim/stream")
		time.Sleep(5 * time.Millisecond)
		stop()
	}
	ts.mustPost(t, "/sim/speed", "max")
	time.Sleep(300 * time.Millisecond)
	a := ts.state(t).VT
	time.Sleep(300 * time.Millisecond)
	b := ts.state(t).VT
	if b <= a {
		t.Fatalf("the run stalled with slow clients: vt %d -> %d", a, b)
	}
	for _, r := range stuck {
		r.Body.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for ts.hub.count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d stream clients still registered after they left", ts.hub.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// more than MaxClients are refused, not queued
	small, err := New(Config{Recipe: recipeOf(t), MaxClients: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	hs := httptest.NewServer(small.Handler())
	defer hs.Close()
	first, err := http.Get(hs.URL + "/sim/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	second, err := http.Get(hs.URL + "/sim/stream")
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a client beyond the limit got %d", second.StatusCode)
	}
}

// comparable is a State without what depends on how the session got
// there (speed, generation, the slider).
func comparable(s State) State {
	s.Speed, s.Generation, s.Timeline, s.Mode, s.Lagging, s.Rerun, s.Notices = "", 0, Timeline{}, "", false, nil, nil
	return s
}

// TestTimeTravelSameState: jumping back re-runs the recipe and lands on the
// state a fresh run of it reaches at that time (views, traffic, stats,
// steps); an action given after the jump forks the timeline (the later
// actions are dropped), and the fork's log is what a fresh run of its
// recipe writes.
func TestTimeTravelSameState(t *testing.T) {
	r := recipeOf(t, "restart-strategy.type=fixed-delay", "execution.checkpointing.interval=7 s")
	ts := newTestServer(t, r)
	ts.mustPost(t, "/sim/seek", "10s")
	ts.mustPost(t, "/sim/action", "trigger-savepoint")
	ts.mustPost(t, "/sim/seek", "21s")
	ts.mustPost(t, "/sim/action", "kill-taskmanager tm-2")
	ts.mustPost(t, "/sim/seek", "40s")
	if st := ts.state(t); st.Stats.Restarts != 1 || st.Timeline.Max != 40_000_000 {
		t.Fatalf("before the jump: restarts %d, timeline %d", st.Stats.Restarts, st.Timeline.Max)
	}
	for _, at := range []string{"15s", "21s", "21001ms", "33s"} {
		ts.mustPost(t, "/sim/seek", at)
		got := ts.state(t)
		fresh := newTestServer(t, r)
		fresh.mustPost(t, "/sim/seek", "10s")
		fresh.mustPost(t, "/sim/action", "trigger-savepoint")
		d, _ := parseVT(at)
		if d > 21_000_000 {
			fresh.mustPost(t, "/sim/seek", "21s")
			fresh.mustPost(t, "/sim/action", "kill-taskmanager tm-2")
		}
		fresh.mustPost(t, "/sim/seek", at)
		want := fresh.state(t)
		a, _ := json.Marshal(comparable(got))
		b, _ := json.Marshal(comparable(want))
		if !bytes.Equal(a, b) {
			t.Fatalf("jump back to %s: the state differs from a fresh run's\n got:  %.600s\n want: %.600s", at, a, b)
		}
		if got.Timeline.Max != 40_000_000 {
			t.Fatalf("jump back to %s: the slider lost the future (max %d)", at, got.Timeline.Max)
		}
	}
	// at 15 s the kill at 21 s is still ahead; a new action forks
	ts.mustPost(t, "/sim/seek", "15s")
	if st := ts.state(t); st.Timeline.Future != 1 {
		t.Fatalf("at 15 s the timeline has %d actions ahead, want 1", st.Timeline.Future)
	}
	res := ts.mustPost(t, "/sim/action", "trigger-checkpoint")
	if res["dropped"].(float64) != 1 {
		t.Fatalf("the fork dropped %v actions, want 1", res["dropped"])
	}
	ts.mustPost(t, "/sim/seek", "30s")
	st := ts.state(t)
	if st.Stats.Restarts != 0 || st.Timeline.Future != 0 {
		t.Fatalf("after the fork the dropped kill still happened: restarts %d", st.Stats.Restarts)
	}
	for _, tm := range st.TMs {
		if !tm.Alive {
			t.Fatalf("%s died on the forked timeline", tm.Name)
		}
	}
	_, log := ts.get(t, "/sim/log")
	want, err := ts.loop.do(&command{kind: "download"}).recipe.Download(30_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(log, want) || !bytes.Contains(log, []byte(`"action":"at=15s trigger-checkpoint"`)) || bytes.Contains(log, []byte("kill-taskmanager")) {
		t.Fatalf("the forked timeline's log: %s", firstDiff(want, log))
	}
}

// TestSettingsRebuild: applying settings starts a new session with them;
// a rebuild keeps the page's streams.
func TestSettingsRebuild(t *testing.T) {
	ts := newTestServer(t, recipeOf(t))
	ts.mustPost(t, "/sim/seek", "5s")
	ts.mustPost(t, "/sim/settings", "parallelism.default=3\ntaskmanager.numberOfTaskSlots=2 # enough slots")
	ts.mustPost(t, "/sim/seek", "2s")
	st := ts.state(t)
	if st.Generation != 2 || st.VT != 2_000_000 {
		t.Fatalf("after new settings: generation %d at %d", st.Generation, st.VT)
	}
	for _, v := range st.Vertices {
		if len(v.Subtasks) != 3 {
			t.Fatalf("%s has %d subtasks, want 3", v.ID, len(v.Subtasks))
		}
	}
	ts.mustPost(t, "/sim/settings", `{"sim.source.rate": 500, "job.window.size": "30 s"}`)
	_, b := ts.get(t, "/sim/settings")
	var meta struct {
		Settings []SettingInfo `json:"settings"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	got := map[string]SettingInfo{}
	for _, s := range meta.Settings {
		got[s.Key] = s
	}
	if got["sim.source.rate"].Value != "500" || got["job.window.size"].Value != "30 s" || got["parallelism.default"].Value != "3" {
		t.Fatalf("settings now: rate %q size %q parallelism %q", got["sim.source.rate"].Value, got["job.window.size"].Value, got["parallelism.default"].Value)
	}
	if p := got["parallelism.default"]; p.FlinkDefault != "1" || p.SimDefault != "2" || p.Range == "" || !p.Seed {
		t.Fatalf("parallelism.default shows %+v", p)
	}
	// every setting the seed lists is offered with its label
	for key := range seedSettings {
		if _, ok := got[key]; !ok {
			t.Errorf("the seed's %s is not in the registry", key)
		}
	}
}

// count is the number of stream clients registered with the hub.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}
