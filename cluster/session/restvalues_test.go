//go:build !js

package session

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/taskexecutor"
	"github.com/flinksim/flinksim/sim/vt"
)

// num reads a JSON number of a decoded event or response.
func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// The accumulated times of /jobs/:jobid's vertices are cumulative: each
// vertex's accumulated-busy-time (and -backpressured-, -idle-) is the sum,
// over its subtasks and every metrics tick they logged (one a virtual
// second), of busyTimeMsPerSecond, read from the session's own log; ten
// seconds later it has grown by about ten seconds per subtask.
func TestRESTAccumulatedTimes(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=5 min", "sim.cost.window=400 µs"))
	check := func(at string) map[string][3]float64 {
		ts.mustPost(t, "/sim/seek", at)
		want := map[string][3]float64{}
		for _, e := range logEvents(t, ts.log(1)) {
			if e["event"] != string(eventlog.KindTaskMetrics) {
				continue
			}
			v, _, ok := splitSubtask(e["actor"].(string))
			if !ok {
				t.Fatalf("task_metrics of %v", e["actor"])
			}
			w := want[v]
			w[0] += num(e["busyTimeMsPerSecond"])
			w[1] += num(e["backPressuredTimeMsPerSecond"])
			w[2] += num(e["idleTimeMsPerSecond"])
			want[v] = w
		}
		_, b := ts.get(t, "/jobs/job-1")
		var job struct {
			Vertices []struct {
				ID      string         `json:"id"`
				Name    string         `json:"name"`
				Metrics map[string]any `json:"metrics"`
			} `json:"vertices"`
		}
		if err := json.Unmarshal(b, &job); err != nil || len(job.Vertices) != 2 {
			t.Fatalf("/jobs/job-1: %v %s", err, b)
		}
		got := map[string][3]float64{}
		for i, v := range job.Vertices {
			id := []string{jobgraph.VertexSource, jobgraph.VertexKeyed}[i]
			if v.ID != flinkID(id) {
				t.Fatalf("vertex %d is %s", i, v.ID)
			}
			m := v.Metrics
			got[id] = [3]float64{num(m["accumulated-busy-time"]), num(m["accumulated-backpressured-time"]), num(m["accumulated-idle-time"])}
			if got[id] != want[id] {
				t.Errorf("at %s %s: accumulated busy, backpressured, idle %v ms; the log's ticks add up to %v", at, id, got[id], want[id])
			}
		}
		return got
	}
	a := check("20s")
	b := check("30s")
	for v, x := range a {
		grew := (b[v][0] + b[v][1] + b[v][2]) - (x[0] + x[1] + x[2])
		if math.Abs(grew-2*10_000) > 2*10*2 { // two subtasks, ten ticks, under 2 ms of truncation each
			t.Errorf("%s: the accumulated times grew by %.0f ms in 10 s, want about 20,000 (two subtasks)", v, grew)
		}
	}
	if a[jobgraph.VertexKeyed][0] < 1000 {
		t.Errorf("the window vertex at 400 µs a record is busy for %v ms only", a[jobgraph.VertexKeyed][0])
	}
}

// /taskmanagers lists the TaskManagers registered with the ResourceManager:
// each with the data port it registered and, in timeSinceLastHeartbeat, the
// time of the last heartbeat the ResourceManager received (Flink's value,
// despite the name). A killed TaskManager stays listed, its heartbeat time
// frozen, until the ResourceManager's heartbeat to it times out.
func TestRESTTaskManagers(t *testing.T) {
	r := recipeOf(t, "sim.duration=5 min", "restart-strategy.type=fixed-delay")
	evs := logEvents(t, plainLog(t, r, "at=10s kill-taskmanager tm-1"))
	lost := firstEvent(t, evs, eventlog.KindTaskManagerLost, "resourcemanager", "task_manager", "tm-1")
	interval := r.Settings.HeartbeatInterval.Milliseconds()

	ts := newTestServer(t, r)
	type tmInfo struct {
		ID                     string `json:"id"`
		Path                   string `json:"path"`
		DataPort               int32  `json:"dataPort"`
		TimeSinceLastHeartbeat int64  `json:"timeSinceLastHeartbeat"`
		SlotsNumber, FreeSlots int
	}
	tms := func() map[string]tmInfo {
		_, b := ts.get(t, "/taskmanagers")
		var out struct {
			TaskManagers []tmInfo `json:"taskmanagers"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		m := map[string]tmInfo{}
		for _, x := range out.TaskManagers {
			m[x.ID] = x
		}
		return m
	}
	ts.mustPost(t, "/sim/seek", "9500 ms")
	now := int64(9500)
	got := tms()
	for _, name := range []string{"tm-1", "tm-2"} {
		x, ok := got[name]
		if !ok {
			t.Fatalf("/taskmanagers lacks %s: %v", name, got)
		}
		if x.DataPort != taskexecutor.DataPort(name) || x.DataPort < 32768 || x.DataPort > 60999 {
			t.Errorf("%s: dataPort %d", name, x.DataPort)
		}
		if x.TimeSinceLastHeartbeat <= now-interval-10 || x.TimeSinceLastHeartbeat > now {
			t.Errorf("%s: last heartbeat at %d ms, want within the last heartbeat.interval (%d ms) of %d", name, x.TimeSinceLastHeartbeat, interval, now)
		}
		if x.Path != taskexecutor.RPCAddress(name) || !strings.HasPrefix(x.Path, "pekko.tcp://flink@") {
			t.Errorf("%s: path %q", name, x.Path)
		}
	}
	if got["tm-1"].DataPort == got["tm-2"].DataPort {
		t.Errorf("tm-1 and tm-2 have the same data port %d", got["tm-1"].DataPort)
	}
	ts.mustPost(t, "/sim/seek", "10s")
	ts.mustPost(t, "/sim/action", "kill-taskmanager tm-1")
	ts.mustPost(t, "/sim/seek", seekTo(lost-vt.Millisecond))
	got = tms()
	if x, ok := got["tm-1"]; !ok || x.TimeSinceLastHeartbeat > 10_000 || x.TimeSinceLastHeartbeat < 10_000-interval-10 {
		t.Errorf("before the ResourceManager's timeout tm-1 is %+v, want listed with its last heartbeat before the kill", x)
	}
	if x := got["tm-2"]; x.TimeSinceLastHeartbeat < vt.Millis(lost)-interval-10 {
		t.Errorf("tm-2's last heartbeat %d ms is old at %d ms", x.TimeSinceLastHeartbeat, vt.Millis(lost))
	}
	ts.mustPost(t, "/sim/seek", seekTo(lost+vt.Millisecond))
	if _, ok := tms()["tm-1"]; ok {
		t.Errorf("tm-1 is still listed after the ResourceManager's heartbeat timed out")
	}
}

// The checkpoint history holds the last web.checkpoints.history (10)
// checkpoints, newest first; the counts and the summary cover every
// completed checkpoint, as the log reports them; the details of one
// checkpoint list each vertex's TaskCheckpointStatistics from its subtasks'
// snapshots.
func TestRESTCheckpointHistoryAndDetails(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=5 min", "execution.checkpointing.interval=1 s"))
	ts.mustPost(t, "/sim/seek", "25s")
	ts.mustPost(t, "/sim/speed", "step")

	trig := map[int64]float64{}
	var durations []int64
	type vx struct {
		acks        int
		state, ckpt float64
		latest      float64
	}
	snaps := map[int64]map[string]*vx{}
	for _, e := range logEvents(t, ts.log(1)) {
		id := int64(num(e["checkpoint_id"]))
		switch e["event"] {
		case string(eventlog.KindCheckpointTriggered):
			trig[id] = num(e["vt"])
		case string(eventlog.KindCheckpointCompleted):
			durations = append(durations, vt.Millis(vt.Of(int64(num(e["vt"])-trig[id]))))
		case string(eventlog.KindCheckpointSnapshot):
			v, _, _ := splitSubtask(e["actor"].(string))
			if snaps[id] == nil {
				snaps[id] = map[string]*vx{}
			}
			x := snaps[id][v]
			if x == nil {
				x = &vx{}
				snaps[id][v] = x
			}
			x.acks++
			x.state += num(e["state_size"])
			x.ckpt += num(e["checkpointed_size"])
			x.latest = max(x.latest, num(e["vt"]))
		}
	}
	if len(durations) < 15 {
		t.Fatalf("%d checkpoints completed in 25 s at a 1 s interval", len(durations))
	}
	_, b := ts.get(t, "/jobs/job-1/checkpoints")
	var cs struct {
		Counts struct {
			Completed, Total int64
		} `json:"counts"`
		Summary map[string]map[string]any `json:"summary"`
		History []struct {
			ID     int64          `json:"id"`
			Status string         `json:"status"`
			Tasks  map[string]any `json:"tasks"`
		} `json:"history"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs.History) != 10 {
		t.Fatalf("the history lists %d checkpoints, want web.checkpoints.history = 10", len(cs.History))
	}
	last := int64(len(trig))
	for i, h := range cs.History {
		if h.ID != last-int64(i) || len(h.Tasks) != 0 {
			t.Errorf("history[%d] is checkpoint %d with %d tasks, want %d, newest first, tasks empty as Flink's list has them", i, h.ID, len(h.Tasks), last-int64(i))
		}
	}
	if cs.Counts.Completed != int64(len(durations)) || cs.Counts.Total != int64(len(trig)) {
		t.Errorf("counts %+v; the log has %d triggered, %d completed", cs.Counts, len(trig), len(durations))
	}
	d := cs.Summary["end_to_end_duration"]
	var sum int64
	for _, x := range durations {
		sum += x
	}
	if num(d["min"]) != float64(slices.Min(durations)) || num(d["max"]) != float64(slices.Max(durations)) ||
		num(d["avg"]) != float64(sum/int64(len(durations))) {
		t.Errorf("end_to_end_duration summary %v; the log's %d checkpoints: min %d max %d avg %d", d, len(durations),
			slices.Min(durations), slices.Max(durations), sum/int64(len(durations)))
	}

	id := last - 2
	_, b = ts.get(t, "/jobs/job-1/checkpoints/details/"+jsonNum(id))
	var det struct {
		ID    int64 `json:"id"`
		Tasks map[string]struct {
			Acked    int   `json:"num_acknowledged_subtasks"`
			Subtasks int   `json:"num_subtasks"`
			State    int64 `json:"state_size"`
			Ckpt     int64 `json:"checkpointed_size"`
			Latest   int64 `json:"latest_ack_timestamp"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(b, &det); err != nil || det.ID != id || len(det.Tasks) != 2 {
		t.Fatalf("details of %d: %v %s", id, err, b)
	}
	for v, want := range snaps[id] {
		got, ok := det.Tasks[flinkID(v)]
		if !ok || got.Acked != want.acks || got.Subtasks != 2 || float64(got.State) != want.state || float64(got.Ckpt) != want.ckpt ||
			got.Latest != vt.Millis(vt.Of(int64(want.latest))) {
			t.Errorf("checkpoint %d vertex %s: %+v; the log's snapshots: %+v", id, v, got, *want)
		}
	}
	if st, b := ts.get(t, "/jobs/job-1/checkpoints/details/1"); st != http.StatusNotFound ||
		!strings.Contains(string(b), "Could not find checkpointing statistics for checkpoint 1.") {
		t.Errorf("a checkpoint no longer in the history: %d %s", st, b)
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Unknown paths and ids get Flink's JSON error body with Flink's status.
func TestRESTErrors(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=5 min"))
	ts.mustPost(t, "/sim/seek", "2s")
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/no/such/path?x=1", 404, "Not found: /no/such/path?x=1"},
		{"/v1/jobs/overview/extra", 404, "Not found: /v1/jobs/overview/extra"},
		{"/jobs/00000000000000000000000000000000", 404,
			"org.apache.flink.runtime.rest.NotFoundException: Job 00000000000000000000000000000000 not found"},
		{"/jobs/not-a-job", 400, `org.apache.flink.runtime.rest.handler.RestHandlerException: Bad request received. Cannot resolve path parameter (jobid) from value "not-a-job".`},
		{"/jobs/job-1/vertices/ffffffffffffffffffffffffffffffff/watermarks", 404,
			"org.apache.flink.runtime.rest.NotFoundException: JobVertex ffffffffffffffffffffffffffffffff not found"},
		{"/jobs/job-1/vertices/nope/backpressure", 400, `Cannot resolve path parameter (vertexid) from value "nope".`},
		{"/jobs/job-1/checkpoints/details/x", 400, `Cannot resolve path parameter (checkpointid) from value "x".`},
	} {
		st, b := ts.get(t, tc.path)
		var body struct {
			Errors []string `json:"errors"`
		}
		if err := json.Unmarshal(b, &body); err != nil || st != tc.status || len(body.Errors) != 1 || !strings.Contains(body.Errors[0], tc.want) {
			t.Errorf("GET %s: %d %s, want %d with %q", tc.path, st, b, tc.status, tc.want)
		}
	}
	// the simulator's API asked with another method says which it takes
	st, b := ts.post(t, "/sim/state", "")
	if st != http.StatusMethodNotAllowed || !strings.Contains(b, "use GET") {
		t.Errorf("POST /sim/state: %d %s", st, b)
	}
	resp, err := http.Get(ts.http.URL + "/sim/seek")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /sim/seek: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// percentile is Commons Math's Percentile with the LEGACY estimation.
func TestPercentileLegacy(t *testing.T) {
	ten := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		give []int64
		p    float64
		want float64
	}{
		{ten, 50, 5.5}, {ten, 90, 9.9}, {ten, 95, 10}, {ten, 99.9, 10}, {ten, 5, 1},
		{[]int64{1, 2, 3, 4}, 50, 2.5}, {[]int64{7}, 99, 7}, {[]int64{10, 20}, 50, 15},
	} {
		if got := percentile(tc.give, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.give, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("no value: want NaN")
	}
	empty := statsSummary(statsSummaryAcc{})
	if empty["p50"] != "NaN" || empty["min"] != int64(0) {
		t.Errorf("the summary of nothing: %v", empty)
	}
}

// Each job has its own checkpoint statistics, as each has its own
// CheckpointStatsTracker: after a rescale the new job lists only its own
// checkpoints, and its restored checkpoint is the savepoint it was
// submitted from.
func TestRESTCheckpointsPerJob(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=5 min", "execution.checkpointing.interval=2 s", "sim.taskmanagers=3"))
	ts.mustPost(t, "/sim/seek", "10s")
	ts.mustPost(t, "/sim/action", "rescale 3")
	ts.mustPost(t, "/sim/seek", "25s")
	type stats struct {
		Counts struct {
			Restored, Completed int
		} `json:"counts"`
		Latest struct {
			Restored *struct {
				ID          int64 `json:"id"`
				IsSavepoint bool  `json:"is_savepoint"`
			} `json:"restored"`
		} `json:"latest"`
		History []struct {
			ID            int64  `json:"id"`
			Type          string `json:"checkpoint_type"`
			IsSavepoint   bool   `json:"is_savepoint"`
			NumSubtasks   int    `json:"num_subtasks"`
			NumAcknowledg int    `json:"num_acknowledged_subtasks"`
		} `json:"history"`
	}
	get := func(job string) stats {
		_, b := ts.get(t, "/jobs/"+job+"/checkpoints")
		var s stats
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	one, two := get("job-1"), get("job-2")
	if len(one.History) == 0 || one.History[0].Type != "SYNC_SAVEPOINT" || one.Latest.Restored != nil {
		t.Fatalf("job-1's checkpoints: %+v", one)
	}
	savepoint := one.History[0].ID
	if two.Latest.Restored == nil || two.Latest.Restored.ID != savepoint || !two.Latest.Restored.IsSavepoint || two.Counts.Restored != 1 {
		t.Errorf("job-2 restored %+v, want the savepoint %d", two.Latest.Restored, savepoint)
	}
	if len(two.History) == 0 {
		t.Fatal("job-2 took no checkpoint")
	}
	for _, h := range two.History {
		if h.ID <= savepoint || h.NumSubtasks != 6 {
			t.Errorf("job-2 lists checkpoint %d of %d subtasks (the savepoint was %d; job-2 runs 6)", h.ID, h.NumSubtasks, savepoint)
		}
	}
}
