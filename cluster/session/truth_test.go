//go:build !js

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/vt"
)

// logEvents reads a JSON log into one map per line.
func logEvents(t *testing.T, log []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// firstEvent is the virtual time of the first event of kind from actor
// with field=value (µs); the test fails when there is none.
func firstEvent(t *testing.T, evs []map[string]any, kind eventlog.Kind, actor, field, value string) vt.Time {
	t.Helper()
	for _, e := range evs {
		if e["event"] == string(kind) && e["actor"] == actor && (field == "" || e[field] == value) {
			return vt.Of(int64(e["vt"].(float64)))
		}
	}
	t.Fatalf("the log has no %s event of %s with %s=%s", kind, actor, field, value)
	return 0
}

// plainLog runs the recipe with actions on the plain driver, to its end,
// and returns its log: the oracle for when things happen.
func plainLog(t *testing.T, r Recipe, acts ...string) []byte {
	t.Helper()
	opt := r.Options
	for _, a := range acts {
		x, err := action.Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		opt.Actions = append(opt.Actions, x)
	}
	var buf bytes.Buffer
	opt.Log = &buf
	s, err := cluster.NewPlainSession(r.Settings, opt)
	if err != nil {
		t.Fatal(err)
	}
	s.Finish()
	return buf.Bytes()
}

// seekTo is a virtual time as POST /sim/seek takes it.
func seekTo(t vt.Time) string { return strconv.FormatInt(t.Micros(), 10) + " µs" }

func subtaskOf(s State, name string) *Subtask {
	for _, v := range s.Vertices {
		for i := range v.Subtasks {
			if v.Subtasks[i].Name == name {
				return &v.Subtasks[i]
			}
		}
	}
	return nil
}

func tmOf(s State, name string) *TMState {
	for i := range s.TMs {
		if s.TMs[i].Name == name {
			return &s.TMs[i]
		}
	}
	return nil
}

// jobsOverview is GET /jobs/overview's one job.
func jobsOverview(t *testing.T, ts *testServer) (state string, tasks map[string]int) {
	t.Helper()
	_, b := ts.get(t, "/jobs/overview")
	var ov struct {
		Jobs []struct {
			State string         `json:"state"`
			Tasks map[string]int `json:"tasks"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b, &ov); err != nil || len(ov.Jobs) == 0 {
		t.Fatalf("/jobs/overview: %v %s", err, b)
	}
	j := ov.Jobs[len(ov.Jobs)-1]
	return j.State, j.Tasks
}

// A killed TaskManager is lost but not yet detected: its subtasks stay as
// the JobManager believes them (RUNNING, with the figures they last
// reported) until the JobManager's heartbeat times out; then they are
// CANCELED, and without a restart strategy the job reads FAILED everywhere:
// the JobManager box, Stats, /sim/state and the REST task counts. The
// moments come from a plain run of the same recipe (its heartbeat_timeout
// and job_status events).
func TestKilledTaskManagerAsFlinkShowsIt(t *testing.T) {
	r := recipeOf(t, "sim.duration=5 min", "restart-strategy.type=none")
	evs := logEvents(t, plainLog(t, r, "at=10s kill-taskmanager tm-1"))
	detected := firstEvent(t, evs, eventlog.KindHeartbeatTimeout, "jobmanager", "task_manager", "tm-1")
	failed := firstEvent(t, evs, eventlog.KindJobStatus, "jobmanager", "status", "FAILED")
	if detected <= 10*vt.Second || failed < detected {
		t.Fatalf("detected at %s, failed at %s", detected, failed)
	}

	ts := newTestServer(t, r)
	ts.mustPost(t, "/sim/seek", "10s")
	ts.mustPost(t, "/sim/action", "kill-taskmanager tm-1")
	ts.mustPost(t, "/sim/seek", seekTo(detected-vt.Millisecond))
	s := ts.state(t)
	tm1 := tmOf(s, "tm-1")
	if tm1 == nil || tm1.Alive || tm1.LossDetected {
		t.Fatalf("before the heartbeat timeout tm-1 is %+v, want killed and not yet detected", tm1)
	}
	if !slices.Equal(tm1.Tasks, []string{"source-0", "window-0"}) {
		t.Errorf("tm-1's tasks as the JobManager believes them: %v", tm1.Tasks)
	}
	for _, name := range []string{"source-0", "window-0"} {
		st := subtaskOf(s, name)
		if st == nil || st.Status != "RUNNING" || !st.Lost || st.Planned || st.TaskManager != "tm-1" || st.RecordsIn == 0 {
			t.Errorf("before the heartbeat timeout %s is %+v, want RUNNING on tm-1, lost, with its last figures", name, st)
		}
	}
	if s.Job.Status != "RUNNING" || s.Stats.JobStatus != "RUNNING" {
		t.Errorf("the job reads %s / %s before the timeout", s.Job.Status, s.Stats.JobStatus)
	}
	if state, tasks := jobsOverview(t, ts); state != "RUNNING" || tasks["running"] != 4 || tasks["total"] != 4 {
		t.Errorf("/jobs/overview before the timeout: %s %v", state, tasks)
	}

	ts.mustPost(t, "/sim/seek", seekTo(failed+vt.Second))
	s = ts.state(t)
	if !s.Ended || s.Job.Status != "FAILED" || s.Stats.JobStatus != "FAILED" {
		t.Fatalf("after the failure: ended %v, JobManager box %s, Stats %s, want FAILED", s.Ended, s.Job.Status, s.Stats.JobStatus)
	}
	for _, v := range s.Vertices {
		for _, st := range v.Subtasks {
			if st.Status != "CANCELED" || st.Lost || st.Planned {
				t.Errorf("after the failure %s is %s (lost %v, planned %v), want CANCELED", st.Name, st.Status, st.Lost, st.Planned)
			}
		}
	}
	if tm1 := tmOf(s, "tm-1"); tm1 == nil || !tm1.LossDetected || len(tm1.Tasks) != 0 {
		t.Errorf("after the timeout tm-1 is %+v, want its loss detected and no task", tm1)
	}
	if tm2 := tmOf(s, "tm-2"); tm2 == nil || !tm2.Alive || len(tm2.Tasks) != 0 {
		t.Errorf("after the failure tm-2 is %+v: the canceled attempt's tasks are not the job's any more", tm2)
	}
	if state, tasks := jobsOverview(t, ts); state != "FAILED" || tasks["canceled"] != 4 || tasks["running"] != 0 || tasks["total"] != 4 {
		t.Errorf("/jobs/overview after the failure: %s %v", state, tasks)
	}
	_, b := ts.get(t, "/jobs/job-1")
	var job struct {
		State        string         `json:"state"`
		StatusCounts map[string]int `json:"status-counts"`
		Vertices     []struct {
			Status string `json:"status"`
		} `json:"vertices"`
	}
	if err := json.Unmarshal(b, &job); err != nil || job.State != "FAILED" || job.StatusCounts["CANCELED"] != 2 || job.StatusCounts["RUNNING"] != 0 {
		t.Errorf("/jobs/job-1 after the failure: %v %s", err, b)
	}
	_, b = ts.get(t, "/overview")
	var ov map[string]any
	_ = json.Unmarshal(b, &ov)
	if ov["jobs-failed"] != 1.0 || ov["jobs-running"] != 0.0 {
		t.Errorf("/overview after the failure: %s", b)
	}
}

// With a restart strategy the canceled attempt shows CANCELED through the
// restart backoff, and after the restart every TaskManager box lists only
// the new attempt's tasks.
func TestRestartShowsCanceledThenTheNewAttempt(t *testing.T) {
	r := recipeOf(t, "sim.duration=5 min", "restart-strategy.type=fixed-delay", "restart-strategy.fixed-delay.delay=2 s")
	evs := logEvents(t, plainLog(t, r, "at=10s kill-taskmanager tm-1"))
	restarting := firstEvent(t, evs, eventlog.KindJobStatus, "jobmanager", "status", "RESTARTING")
	running := firstEvent(t, evs, eventlog.KindTaskState, "jobmanager", "task", "window-1#1")

	ts := newTestServer(t, r)
	ts.mustPost(t, "/sim/seek", "10s")
	ts.mustPost(t, "/sim/action", "kill-taskmanager tm-1")
	ts.mustPost(t, "/sim/seek", seekTo(restarting+500*vt.Millisecond))
	s := ts.state(t)
	if s.Job.Status != "RESTARTING" {
		t.Fatalf("job %s during the backoff", s.Job.Status)
	}
	for _, v := range s.Vertices {
		for _, st := range v.Subtasks {
			if st.Status != "CANCELED" || st.Attempt != 0 {
				t.Errorf("during the backoff %s is %s (attempt %d), want the canceled attempt 0", st.Name, st.Status, st.Attempt)
			}
		}
	}
	ts.mustPost(t, "/sim/seek", seekTo(running+5*vt.Second))
	s = ts.state(t)
	var tasks []string
	for _, tm := range s.TMs {
		if !tm.Alive {
			continue
		}
		for _, x := range tm.Tasks {
			st := subtaskOf(s, x)
			if st == nil || st.Attempt != 1 || st.Status != "RUNNING" {
				t.Errorf("%s lists %s, which is not a running execution of attempt 1", tm.Name, x)
			}
			tasks = append(tasks, x)
		}
		if len(tm.Tasks) > 2*len(tm.Slots) {
			t.Errorf("%s lists %d tasks in %d slots", tm.Name, len(tm.Tasks), len(tm.Slots))
		}
	}
	slices.Sort(tasks)
	if !slices.Equal(tasks, []string{"source-0#1", "source-1#1", "window-0#1", "window-1#1"}) {
		t.Errorf("the TaskManagers list %v, want the four executions of attempt 1", tasks)
	}
}

// A bounded job that ends FINISHED reads so everywhere, and its REST task
// counts are its executions, FINISHED.
func TestFinishedJobReadsFinished(t *testing.T) {
	r := recipeOf(t)
	path := filepath.Join("..", "..", "examples", "data", "orders-sample.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := events.Parse(data, path, events.Options{KeyField: r.Settings.KeyField, TimeField: r.Settings.TimeField, Partitions: r.Settings.SourcePartitions})
	if err != nil {
		t.Fatal(err)
	}
	r.Options = cluster.Options{Events: recs}
	ts := newTestServer(t, r)
	ts.mustPost(t, "/sim/seek", "1 h")
	s := ts.state(t)
	if !s.Ended || s.Job.Status != "FINISHED" || s.Stats.JobStatus != "FINISHED" {
		t.Fatalf("ended %v, JobManager box %s, Stats %s, want FINISHED", s.Ended, s.Job.Status, s.Stats.JobStatus)
	}
	for _, v := range s.Vertices {
		for _, st := range v.Subtasks {
			if st.Status != "FINISHED" {
				t.Errorf("%s is %s", st.Name, st.Status)
			}
		}
	}
	if state, tasks := jobsOverview(t, ts); state != "FINISHED" || tasks["finished"] != 4 || tasks["total"] != 4 {
		t.Errorf("/jobs/overview: %s %v", state, tasks)
	}
}

// A long jump never holds the session: a pause answers at once and stops
// the jump where it is (the seek answers with where it got and why it
// stopped); the session then stays paused there.
func TestSeekIsInterruptible(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=365 d"))
	type answer struct {
		status int
		body   string
	}
	seek := make(chan answer, 1)
	go func() {
		st, b := ts.post(t, "/sim/seek", "30 d")
		seek <- answer{st, b}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for ts.loop.latest.Load().state.Rerun == nil { // the jump is under way
		if time.Now().After(deadline) {
			t.Fatal("the jump never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	st, b := ts.post(t, "/sim/speed", "pause")
	if st != 200 || time.Since(start) > 2*time.Second {
		t.Fatalf("pause during a jump: %d %s after %v", st, b, time.Since(start))
	}
	var a answer
	select {
	case a = <-seek:
	case <-time.After(5 * time.Second):
		t.Fatal("the jump did not answer after the pause")
	}
	var body struct {
		VT          int64  `json:"vt"`
		Target      int64  `json:"target"`
		Interrupted string `json:"interrupted"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil || a.status != 200 || body.Interrupted != "speed pause" ||
		body.VT <= 0 || body.VT >= body.Target || body.Target != int64(30*24*3600*vt.Second) {
		t.Fatalf("the interrupted jump answered %d %s", a.status, a.body)
	}
	s := ts.state(t)
	if s.Rerun != nil || s.Speed != "pause" || int64(s.VT) != body.VT {
		t.Fatalf("after the pause: rerun %v, speed %s, vt %d (the jump stopped at %d)", s.Rerun, s.Speed, s.VT, body.VT)
	}
}

// A settings body in JSON with a key given twice is refused, naming the
// key, and changes nothing; so is a nested value or a null. A good object
// starts a new session.
func TestSettingsJSONRefusesDuplicateKeys(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=5 min"))
	gen := ts.state(t).Generation
	for _, tc := range []struct{ body, want string }{
		{`{"parallelism.default": 2, "sim.source.rate": 10, "parallelism.default": 3}`, `key "parallelism.default" is given twice ("2" and "3")`},
		{`{"parallelism.default": {"value": 3}}`, "parallelism.default: give a string, number or boolean, not an object"},
		{`{"job.filter": null}`, "job.filter: give a string, number or boolean, not null"},
		{`{"parallelism.default": 3} {"parallelism.default": 4}`, "text after the JSON object"},
		{`{"parallelism.default": 3`, "settings:"},
	} {
		st, b := ts.post(t, "/sim/settings", tc.body)
		if st != http.StatusBadRequest || !strings.Contains(b, tc.want) {
			t.Errorf("POST /sim/settings %s: %d %s, want 400 with %q", tc.body, st, b, tc.want)
		}
	}
	if g := ts.state(t).Generation; g != gen {
		t.Fatalf("a refused body started session %d", g)
	}
	ts.mustPost(t, "/sim/settings", `{"parallelism.default": 3, "taskmanager.numberOfTaskSlots": 2, "pipeline.operator-chaining.enabled": true}`)
	if s := ts.state(t); s.Generation != gen+1 || len(s.Vertices) == 0 || s.Vertices[0].Parallelism != 3 {
		t.Fatalf("a good object: generation %d, vertices %v", s.Generation, s.Vertices)
	}
}

// Before the JobMaster runs, the JobManager box and the Stats read
// INITIALIZING, as Flink's Dispatcher lists a job whose JobMaster is not up
// yet (and as /jobs/overview says), never an empty state.
func TestJobInitializingBeforeTheJobMaster(t *testing.T) {
	ts := newTestServer(t, recipeOf(t))
	s := ts.state(t)
	if s.Job.Status != "INITIALIZING" || s.Stats.JobStatus != "INITIALIZING" {
		t.Errorf("at vt %d the JobManager box reads %q, Stats %q, want INITIALIZING", s.VT, s.Job.Status, s.Stats.JobStatus)
	}
	ts.mustPost(t, "/sim/seek", "10s")
	if s = ts.state(t); s.Job.Status != "RUNNING" {
		t.Errorf("at 10 s the job reads %q", s.Job.Status)
	}
}
