//go:build !js

package session

import (
	"crypto/md5"
	"encoding/hex"
	"github.com/flinksim/flinksim/sim/jobmaster"
	"github.com/flinksim/flinksim/sim/vt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/resourcemanager"
)

// Flink's REST API, in the shapes of Flink 1.20's rest_v1_dispatcher: the
// same paths and JSON field names, read-only, with virtual time for every
// timestamp (milliseconds since the run started). Each handler names the
// response class it follows (flink-runtime org.apache.flink.runtime.rest.
// messages...); testdata/flink_rest_fields.json lists their field names and
// the tests hold every response to it.
//
// Identifiers: Flink's JobID and JobVertexID are 32 hex digits; here they are
// the MD5 of the simulator's names (job-1, source, window), so they are
// stable across runs, and the simulator's names are accepted as well.

// FlinkVersion is the Flink version the simulator follows.
const FlinkVersion = "1.20.0"

// flinkID is the 32-hex-digit id standing for a simulator name.
func flinkID(name string) string {
	sum := md5.Sum([]byte(name))
	return hex.EncodeToString(sum[:])
}

func ms(t vt.Time) int64 { return vt.Millis(t) }

// executionStates are Flink's ExecutionState values in declaration order.
var executionStates = []string{"CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING", "CANCELED",
	"FAILED", "RECONCILING", "INITIALIZING"}

// jobStatuses are Flink's JobStatus values in declaration order.
var jobStatuses = []string{"INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED",
	"FINISHED", "RESTARTING", "SUSPENDED", "RECONCILING"}

// flinkOverview is GET /overview: ClusterOverviewWithVersion
// (rest.handler.legacy.messages.ClusterOverviewWithVersion, extending
// messages.webmonitor.ClusterOverview and JobsOverview).
func (s *Server) flinkOverview(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	total, free := 0, 0
	regs := registeredTMs(snap)
	for _, t := range regs {
		total += t.Slots
		free += t.FreeSlots
	}
	tms := len(regs)
	counts := map[string]int{}
	for _, j := range jobsOf(snap) {
		counts[j.state]++
	}
	running := 0
	for st, n := range counts {
		if !terminal(st) {
			running += n
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"taskmanagers": tms, "slots-total": total, "slots-available": free,
		"jobs-running": running, "jobs-finished": counts["FINISHED"], "jobs-cancelled": counts["CANCELED"],
		"jobs-failed": counts["FAILED"], "flink-version": FlinkVersion, "flink-commit": "flinksim",
	})
}

// flinkConfig is GET /config: DashboardConfiguration
// (rest.messages.DashboardConfiguration with its Features).
func (s *Server) flinkConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"refresh-interval": 3000, "timezone-name": "Coordinated Universal Time", "timezone-offset": 0,
		"flink-version": FlinkVersion, "flink-revision": "flinksim",
		"features": map[string]bool{"web-submit": false, "web-cancel": false, "web-rescale": false, "web-history": false},
	})
}

// jobInfo is one job the run had, from its job_status events.
type jobInfo struct {
	id, state    string
	start, end   vt.Time // end -1 while running
	lastModified vt.Time
	times        map[string]vt.Time
}

// jobsOf lists the run's jobs in the order they started.
func jobsOf(snap *snapshot) []*jobInfo {
	var out []*jobInfo
	by := map[string]*jobInfo{}
	for _, st := range snap.obs.statuses {
		j := by[st.Job]
		if j == nil {
			j = &jobInfo{id: st.Job, start: st.VT, end: -1, times: map[string]vt.Time{}}
			by[st.Job] = j
			out = append(out, j)
		}
		j.state, j.lastModified = st.Status, st.VT
		if _, ok := j.times[st.Status]; !ok || st.Status == "RUNNING" || st.Status == "RESTARTING" {
			j.times[st.Status] = st.VT
		}
		if terminal(st.Status) {
			j.end = st.VT
		}
	}
	if jm := snap.views.jm; jm != nil && by[jm.JobID] == nil {
		j := &jobInfo{id: jm.JobID, state: jm.Status, end: -1, times: map[string]vt.Time{}}
		if j.state == "" {
			// submitted, its JobMaster not running yet: the Dispatcher
			// lists such a job as INITIALIZING (JobStatus.INITIALIZING)
			j.state = "INITIALIZING"
		}
		out = append(out, j)
	}
	return out
}

// findJob resolves :jobid (a Flink JobID or the simulator's name).
func findJob(snap *snapshot, id string) *jobInfo {
	for _, j := range jobsOf(snap) {
		if id == j.id || strings.EqualFold(id, flinkID(j.id)) {
			return j
		}
	}
	return nil
}

func jobDuration(j *jobInfo, now vt.Time) int64 {
	if j.end >= 0 {
		return ms(j.end - j.start)
	}
	return ms(now - j.start)
}

// taskCounts is JobDetails' "tasks": total and one count per execution
// state, lower-case (JobDetails.JobDetailsSerializer).
func taskCounts(states []string) map[string]int {
	m := map[string]int{"total": len(states)}
	for _, s := range executionStates {
		m[strings.ToLower(s)] = 0
	}
	for _, s := range states {
		m[strings.ToLower(s)]++
	}
	return m
}

// currentTasks are the executions of the current attempt by vertex id.
func currentTasks(snap *snapshot) map[string][]Subtask {
	out := map[string][]Subtask{}
	for _, v := range snap.state.Vertices {
		out[v.ID] = v.Subtasks
	}
	return out
}

func jobTaskStates(snap *snapshot, j *jobInfo) []string {
	var states []string
	if jm := snap.views.jm; jm != nil && jm.JobID == j.id {
		for _, t := range jm.Tasks {
			states = append(states, executionState(t.State))
		}
	}
	return states
}

// executionState maps a task state to Flink's ExecutionState.
func executionState(s string) string {
	if slices.Contains(executionStates, s) {
		return s
	}
	return "CREATED"
}

// flinkJobs is GET /jobs: JobIdsWithStatusOverview
// (messages.webmonitor.JobIdsWithStatusOverview).
func (s *Server) flinkJobs(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	jobs := []map[string]any{}
	for _, j := range jobsOf(snap) {
		jobs = append(jobs, map[string]any{"id": flinkID(j.id), "status": j.state})
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": jobs})
}

// flinkJobsOverview is GET /jobs/overview: MultipleJobsDetails of
// JobDetails (messages.webmonitor.JobDetails).
func (s *Server) flinkJobsOverview(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	jobs := []map[string]any{}
	for _, j := range jobsOf(snap) {
		jobs = append(jobs, map[string]any{
			"jid": flinkID(j.id), "name": jobName(snap, j), "state": j.state, "start-time": ms(j.start),
			"end-time": endMs(j), "duration": jobDuration(j, snap.state.VT), "last-modification": ms(j.lastModified),
			"tasks": taskCounts(jobTaskStates(snap, j)),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": jobs})
}

func endMs(j *jobInfo) int64 {
	if j.end < 0 {
		return -1
	}
	return ms(j.end)
}

func jobName(snap *snapshot, j *jobInfo) string {
	if jm := snap.views.jm; jm != nil {
		return jm.JobName
	}
	return j.id
}

// ioMetrics is IOMetricsInfo (rest.messages.job.metrics.IOMetricsInfo) of
// a set of subtasks, summed as MutableIOMetrics.addIOMetrics sums the
// current execution attempts: records from the views, bytes from the record
// size, and the accumulated busy (a double, as Flink's gauge), backpressured
// and idle time in ms since each execution started, as of its last metrics
// tick.
func ioMetrics(subs []Subtask, recordBytes int) map[string]any {
	var in, out, bp, idle int64
	var busy float64
	for _, s := range subs {
		in += s.RecordsIn
		out += s.RecordsOut
		busy += s.AccBusyMs
		bp += s.AccBackPressuredMs
		idle += s.AccIdleMs
	}
	return map[string]any{
		"read-bytes": in * int64(recordBytes), "read-bytes-complete": true,
		"write-bytes": out * int64(recordBytes), "write-bytes-complete": true,
		"read-records": in, "read-records-complete": true,
		"write-records": out, "write-records-complete": true,
		"accumulated-backpressured-time": bp, "accumulated-idle-time": idle, "accumulated-busy-time": busy,
	}
}

// vertexStatus aggregates the subtasks' states as ExecutionJobVertex.getAggregateState.
func vertexStatus(subs []Subtask, jm *jobmaster.JobMasterView) string {
	if len(subs) == 0 {
		return "CREATED"
	}
	counts := map[string]int{}
	for _, s := range subs {
		counts[executionState(taskState(jm, s.Name))]++
	}
	for _, st := range []string{"FAILED", "CANCELING", "CANCELED", "RUNNING", "INITIALIZING", "DEPLOYING", "SCHEDULED"} {
		if counts[st] > 0 {
			return st
		}
	}
	if counts["FINISHED"] == len(subs) {
		return "FINISHED"
	}
	return "CREATED"
}

func taskState(jm *jobmaster.JobMasterView, name string) string {
	if jm != nil {
		for _, t := range jm.Tasks {
			if t.Name == name {
				return t.State
			}
		}
	}
	return "CREATED"
}

// flinkJob is GET /jobs/:jobid: JobDetailsInfo
// (rest.messages.job.JobDetailsInfo) with its vertices
// (JobDetailsInfo.JobVertexDetailsInfo) and plan (JobPlanInfo: the JSON
// plan of JsonPlanGenerator, whose nodes[].inputs the web UI draws).
func (s *Server) flinkJob(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	j, rerr := lookupJob(snap, r.PathValue("jobid"))
	if rerr != nil {
		writeRestError(w, rerr)
		return
	}
	jm := snap.views.jm
	now := snap.state.VT
	times := map[string]int64{}
	for _, st := range jobStatuses {
		times[st] = 0
	}
	for st, t := range j.times {
		times[st] = ms(t)
	}
	vertices := []map[string]any{}
	nodes := []map[string]any{}
	perState := map[string]int{}
	for _, st := range executionStates {
		perState[st] = 0
	}
	maxP := 0
	if jm != nil && jm.JobID == j.id {
		maxP = jm.Graph.MaxParallelism
		tasks := currentTasks(snap)
		for _, v := range jm.Graph.Vertices {
			subs := tasks[v.ID]
			counts := map[string]int{}
			for _, st := range executionStates {
				counts[st] = 0
			}
			for _, sub := range subs {
				counts[executionState(taskState(jm, sub.Name))]++
			}
			status := vertexStatus(subs, jm)
			perState[status]++
			vertices = append(vertices, map[string]any{
				"id": flinkID(v.ID), "slotSharingGroupId": flinkID("slot-sharing-group-default"), "name": v.Name,
				"maxParallelism": jm.Graph.MaxParallelism, "parallelism": v.Parallelism, "status": status,
				"start-time": ms(j.start), "end-time": -1, "duration": ms(now - j.start), "tasks": counts,
				"metrics": ioMetrics(subs, snap.settings.RecordBytes),
			})
			node := map[string]any{"id": flinkID(v.ID), "parallelism": v.Parallelism, "operator": "",
				"operator_strategy": "", "description": v.Name, "optimizer_properties": map[string]any{}}
			var inputs []map[string]any
			for _, e := range jm.Graph.Edges {
				if e.To == v.ID {
					inputs = append(inputs, map[string]any{"num": len(inputs), "id": flinkID(e.From),
						"ship_strategy": e.Partitioner, "exchange": "pipelined_bounded"})
				}
			}
			if inputs != nil {
				node["inputs"] = inputs
			}
			nodes = append(nodes, node)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"jid": flinkID(j.id), "name": jobName(snap, j), "isStoppable": false, "state": j.state, "job-type": "STREAMING",
		"start-time": ms(j.start), "end-time": endMs(j), "duration": jobDuration(j, now), "maxParallelism": maxP,
		"now": ms(now), "timestamps": times, "vertices": vertices, "status-counts": perState,
		"plan": map[string]any{"jid": flinkID(j.id), "name": jobName(snap, j), "type": "STREAMING", "nodes": nodes},
	})
}

// restError is an error answer of Flink's REST API: ErrorResponseBody
// (rest.messages.ErrorResponseBody, {"errors": [...]}) with its status.
type restError struct {
	status int
	msg    string
}

// Flink's REST errors. A handler's exception is sent as its toString, the
// exception class and its message (AbstractHandler.handleException sends
// ExceptionUtils.stringifyException, which goes on with the Java stack
// trace: the simulator has none to give).
func notFound(msg string) *restError {
	return &restError{http.StatusNotFound, "org.apache.flink.runtime.rest.NotFoundException: " + msg}
}

// badPathParameter is HandlerRequest's refusal of a path parameter that
// does not convert (JobID.fromHexString, JobVertexID.fromHexString,
// Long.valueOf), which AbstractHandler turns into a 400.
func badPathParameter(key, value string) *restError {
	return &restError{http.StatusBadRequest, "org.apache.flink.runtime.rest.handler.RestHandlerException: Bad request received. " +
		"Cannot resolve path parameter (" + key + ") from value \"" + value + "\"."}
}

func writeRestError(w http.ResponseWriter, e *restError) {
	writeJSON(w, e.status, map[string]any{"errors": []string{e.msg}})
}

// flinkUnknownPath answers a path no handler serves as Flink's
// RouterHandler.respondNotFound does: 404 {"errors":["Not found: URI"]}; a
// path of the simulator's own API asked with another method gets 405 with
// the methods it takes.
func (s *Server) flinkUnknownPath(w http.ResponseWriter, r *http.Request) {
	if allow := s.simMethods(r.URL.Path); allow != "" {
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"errors": []string{r.Method + " " + r.URL.Path + ": use " + allow}})
		return
	}
	writeRestError(w, &restError{http.StatusNotFound, "Not found: " + r.URL.RequestURI()})
}

// isHexID reports whether id has the form of Flink's JobID and
// JobVertexID (AbstractID.fromHexString: 32 hex digits).
func isHexID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// lookupJob resolves :jobid: a Flink JobID (the MD5 of the simulator's
// name) or the simulator's name; 404 for a JobID no job of the run has, 400
// for what is neither.
func lookupJob(snap *snapshot, id string) (*jobInfo, *restError) {
	if j := findJob(snap, id); j != nil {
		return j, nil
	}
	if !isHexID(id) {
		return nil, badPathParameter("jobid", id)
	}
	return nil, notFound("Job " + id + " not found")
}

// findVertex resolves :vertexid of the current job.
func findVertex(snap *snapshot, jobid, vid string) (*Vertex, *restError) {
	j, err := lookupJob(snap, jobid)
	if err != nil {
		return nil, err
	}
	if jm := snap.views.jm; jm == nil || jm.JobID != j.id {
		return nil, notFound("Job " + jobid + " has no vertices any more: it ran before the current one")
	}
	for i, v := range snap.state.Vertices {
		if v.ID == vid || strings.EqualFold(vid, flinkID(v.ID)) {
			return &snap.state.Vertices[i], nil
		}
	}
	if !isHexID(vid) {
		return nil, badPathParameter("vertexid", vid)
	}
	return nil, notFound("JobVertex " + vid + " not found")
}

// flinkBackPressure is GET /jobs/:jobid/vertices/:vertexid/backpressure:
// JobVertexBackPressureInfo (rest.messages.JobVertexBackPressureInfo) as
// JobVertexBackPressureHandler builds it from backPressuredTimeMsPerSecond,
// idleTimeMsPerSecond and busyTimeMsPerSecond: ratio <= 0.10 ok, <= 0.5
// low, above high; the vertex's level is its highest subtask's.
func (s *Server) flinkBackPressure(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	v, rerr := findVertex(snap, r.PathValue("jobid"), r.PathValue("vertexid"))
	if rerr != nil {
		writeRestError(w, rerr)
		return
	}
	var maxRatio float64
	subs := []map[string]any{}
	for _, st := range v.Subtasks {
		ratio := float64(st.BackPressured) / 1000
		maxRatio = math.Max(maxRatio, ratio)
		subs = append(subs, map[string]any{"subtask": st.Index, "attempt-number": st.Attempt,
			"backpressure-level": backPressureLevel(st.BackPressured), "ratio": ratio,
			"idleRatio": float64(st.Idle) / 1000, "busyRatio": float64(st.Busy) / 1000})
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "backpressure-level": backPressureLevel(int64(maxRatio * 1000)),
		"end-timestamp": ms(snap.state.VT), "subtasks": subs})
}

// flinkWatermarks is GET /jobs/:jobid/vertices/:vertexid/watermarks:
// MetricCollectionResponseBody (rest.messages.job.metrics), an array of
// {"id": "<subtask>.currentInputWatermark", "value": "<ms>"} as
// JobVertexWatermarksHandler answers; a source reports its output
// watermark under the same name.
func (s *Server) flinkWatermarks(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	v, rerr := findVertex(snap, r.PathValue("jobid"), r.PathValue("vertexid"))
	if rerr != nil {
		writeRestError(w, rerr)
		return
	}
	out := []map[string]string{}
	for _, st := range v.Subtasks {
		out = append(out, map[string]string{"id": strconv.Itoa(st.Index) + ".currentInputWatermark",
			"value": strconv.FormatInt(st.Watermark, 10)})
	}
	writeJSON(w, http.StatusOK, out)
}

// subtaskMetric reads one metric of a subtask by Flink's name.
var subtaskMetrics = map[string]func(s Subtask) float64{
	"busyTimeMsPerSecond":          func(s Subtask) float64 { return float64(s.Busy) },
	"backPressuredTimeMsPerSecond": func(s Subtask) float64 { return float64(s.BackPressured) },
	"idleTimeMsPerSecond":          func(s Subtask) float64 { return float64(s.Idle) },
	"numRecordsIn":                 func(s Subtask) float64 { return float64(s.RecordsIn) },
	"numRecordsOut":                func(s Subtask) float64 { return float64(s.RecordsOut) },
	"currentInputWatermark":        func(s Subtask) float64 { return float64(s.Watermark) },
	"currentOutputWatermark":       func(s Subtask) float64 { return float64(s.Watermark) },
	"numLateRecordsDropped":        func(s Subtask) float64 { return float64(s.LateDropped) },
	"outPoolUsage":                 func(s Subtask) float64 { return s.OutPoolUsage },
	"isBackPressured": func(s Subtask) float64 {
		if s.BlockedNow {
			return 1
		}
		return 0
	},
}

// flinkSubtaskMetrics is GET
// /jobs/:jobid/vertices/:vertexid/subtasks/metrics[?get=a,b][&agg=min,max,avg,sum,skew][&subtasks=0,2-3]:
// AggregatedMetricsResponseBody of AggregatedMetric
// (rest.messages.job.metrics), as AggregatingSubtasksMetricsHandler
// answers: without get the ids of the metrics there are; skew is
// DoubleAccumulator.DoubleDataSkew (average absolute deviation over the
// average, in percent, at most 100).
func (s *Server) flinkSubtaskMetrics(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	v, rerr := findVertex(snap, r.PathValue("jobid"), r.PathValue("vertexid"))
	if rerr != nil {
		writeRestError(w, rerr)
		return
	}
	q := r.URL.Query()
	get := splitList(q.Get("get"))
	if len(get) == 0 {
		var names []string
		for n := range subtaskMetrics {
			names = append(names, n)
		}
		sort.Strings(names)
		out := []map[string]string{}
		for _, n := range names {
			out = append(out, map[string]string{"id": n})
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	aggs := splitList(strings.ToLower(q.Get("agg")))
	if len(aggs) == 0 {
		aggs = []string{"min", "max", "sum", "avg", "skew"}
	}
	subs := selectSubtasks(v.Subtasks, q.Get("subtasks"))
	out := []map[string]any{}
	for _, name := range get {
		f, ok := subtaskMetrics[name]
		if !ok || len(subs) == 0 {
			continue
		}
		vals := make([]float64, len(subs))
		for i, st := range subs {
			vals[i] = f(st)
		}
		m := map[string]any{"id": name}
		for _, a := range aggs {
			switch a {
			case "min":
				m["min"] = slices.Min(vals)
			case "max":
				m["max"] = slices.Max(vals)
			case "sum":
				m["sum"] = sum(vals)
			case "avg":
				m["avg"] = sum(vals) / float64(len(vals))
			case "skew":
				m["skew"] = skew(vals)
			}
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, out)
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// skew is DoubleDataSkew.getValue.
func skew(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	avg := sum(xs) / float64(len(xs))
	if avg == 0 {
		return 0
	}
	dev := 0.0
	for _, x := range xs {
		dev += math.Abs(avg - x)
	}
	return math.Min(dev/float64(len(xs))/avg*100, 100)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// selectSubtasks applies ?subtasks=0,2-3 (SubtasksFilterQueryParameter).
func selectSubtasks(all []Subtask, filter string) []Subtask {
	if strings.TrimSpace(filter) == "" {
		return all
	}
	want := map[int]bool{}
	for _, p := range splitList(filter) {
		lo, hi, isRange := strings.Cut(p, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			continue
		}
		for i := a; i <= b; i++ {
			want[i] = true
		}
	}
	var out []Subtask
	for _, s := range all {
		if want[s.Index] {
			out = append(out, s)
		}
	}
	return out
}

// registeredTMs are the TaskManagers registered with the ResourceManager,
// which is whom Flink's /overview and /taskmanagers ask: a killed
// TaskManager stays until the ResourceManager's heartbeat to it times out.
func registeredTMs(snap *snapshot) []resourcemanager.TaskManagerView {
	if rm := snap.views.rm; rm != nil {
		return rm.Registered
	}
	return nil
}

// flinkTaskManagers is GET /taskmanagers: TaskManagersInfo of
// TaskManagerInfo (rest.messages.taskmanager) as
// ResourceManager.requestTaskManagerInfo answers: every registered
// TaskManager with the address and data port it registered, its
// timeSinceLastHeartbeat, which despite its name is the time of the last
// heartbeat the ResourceManager received (HeartbeatManager.
// getLastHeartbeatFrom; the web UI shows it as a date; here virtual ms since
// the run started, 0 before the first), its slots and free slots, and the
// resources of ResourceProfileInfo (MB) and TaskExecutorMemoryConfiguration
// (bytes) from the settings.
func (s *Server) flinkTaskManagers(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	c := snap.settings
	slots := c.Slots()
	mb := func(b int64) int64 { return b >> 20 }
	per := func(b int64) int64 { return b / int64(max(1, slots)) }
	cores := c.TaskManagerCPUCores
	if cores == 0 {
		cores = float64(slots)
	}
	profile := func(n int) map[string]any {
		return map[string]any{"cpuCores": cores / float64(slots) * float64(n), "taskHeapMemory": mb(per(c.TaskHeapBytes) * int64(n)),
			"taskOffHeapMemory": mb(per(c.TaskOffHeapBytes) * int64(n)), "managedMemory": mb(per(c.ManagedMemoryBytes) * int64(n)),
			"networkMemory": mb(per(c.NetworkMemoryBytes) * int64(n)), "extendedResources": map[string]any{}}
	}
	tms := []map[string]any{}
	for _, t := range registeredTMs(snap) {
		total := c.TaskHeapBytes + c.TaskOffHeapBytes + c.ManagedMemoryBytes + c.NetworkMemoryBytes
		tms = append(tms, map[string]any{
			"id": t.ID, "path": t.Address, "dataPort": t.DataPort, "jmxPort": -1, "timeSinceLastHeartbeat": t.LastHeartbeatMs,
			"slotsNumber": t.Slots, "freeSlots": t.FreeSlots, "totalResource": profile(t.Slots), "freeResource": profile(t.FreeSlots),
			"hardware": map[string]any{"cpuCores": int(math.Ceil(cores)), "physicalMemory": total, "freeMemory": c.TaskHeapBytes,
				"managedMemory": c.ManagedMemoryBytes},
			"memoryConfiguration": map[string]any{"frameworkHeap": 128 << 20, "taskHeap": c.TaskHeapBytes,
				"frameworkOffHeap": 128 << 20, "taskOffHeap": c.TaskOffHeapBytes, "networkMemory": c.NetworkMemoryBytes,
				"managedMemory": c.ManagedMemoryBytes, "jvmMetaspace": 256 << 20, "jvmOverhead": 192 << 20,
				"totalFlinkMemory": total + 256<<20, "totalProcessMemory": total + 704<<20},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"taskmanagers": tms})
}

var _ = jobgraph.VertexSource

// webCheckpointsHistory is web.checkpoints.history's default: how many
// recent checkpoints a job's CheckpointStatsTracker lists
// (CheckpointStatsHistory). Not a setting here: the page's Checkpoints
// panel lists more.
const webCheckpointsHistory = 10

// statsSummary is StatsSummaryDto (rest.messages.util.stats) of a
// StatsSummary: min, max and average (sum / count, a long) over every value
// added, percentiles over its window as Commons Math's Percentile
// (estimation LEGACY) computes them for DescriptiveStatisticsHistogram;
// NaN, which Jackson writes as the string "NaN", when nothing was added.
func statsSummary(acc statsSummaryAcc) map[string]any {
	out := map[string]any{"min": acc.min, "max": acc.max, "avg": int64(0)}
	if acc.count > 0 {
		out["avg"] = acc.sum / acc.count
	}
	sorted := slices.Clone(acc.window)
	slices.Sort(sorted)
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p999", 99.9}} {
		if v := percentile(sorted, p.q); math.IsNaN(v) {
			out[p.name] = "NaN"
		} else {
			out[p.name] = v
		}
	}
	return out
}

// percentile is org.apache.commons.math3.stat.descriptive.rank.Percentile
// with its default estimation (LEGACY) of sorted at p in (0, 100]: position
// p·(n+1)/100, the first value below position 1, the last from position n,
// linear interpolation between the two neighbours in between; NaN for no
// value.
func percentile(sorted []int64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return float64(sorted[0])
	}
	pos := p * float64(n+1) / 100
	fpos := math.Floor(pos)
	if pos < 1 {
		return float64(sorted[0])
	}
	if pos >= float64(n) {
		return float64(sorted[n-1])
	}
	lower, upper := float64(sorted[int(fpos)-1]), float64(sorted[int(fpos)])
	return lower + (pos-fpos)*(upper-lower)
}

// checkpointStats is CheckpointStatistics (rest.messages.checkpoints) of
// one checkpoint: className completed, failed or in_progress (Jackson's
// type property), with CompletedCheckpointStatistics' external_path and
// discarded or FailedCheckpointStatistics' failure_timestamp and
// failure_message. tasks is the per-JobVertex TaskCheckpointStatistics
// when withTasks (the details endpoint; CheckpointingStatisticsHandler
// leaves it empty, as generateCheckpointStatistics(stats, false) does).
func checkpointStats(c Checkpoint, numSubtasks int, withTasks bool, recordBytes int) map[string]any {
	if c.Tasks > 0 {
		numSubtasks = c.Tasks
	}
	typ := "CHECKPOINT"
	switch {
	case c.Kind == "savepoint":
		typ = "SAVEPOINT"
	case c.Kind == "stop-with-savepoint":
		typ = "SYNC_SAVEPOINT"
	case c.Unaligned:
		typ = "UNALIGNED_CHECKPOINT"
	}
	var format any
	if c.IsSavepoint() {
		format = "CANONICAL"
	}
	end := c.EndVT
	if end == 0 {
		end = c.TriggerVT
	}
	tasks := map[string]any{}
	if withTasks {
		for _, v := range c.Vertices {
			tasks[flinkID(v.Vertex)] = taskCheckpointStats(c, v, recordBytes)
		}
	}
	m := map[string]any{
		"id": c.ID, "status": c.Status, "is_savepoint": c.IsSavepoint(), "savepointFormat": format,
		"trigger_timestamp": ms(c.TriggerVT), "latest_ack_timestamp": ms(end), "checkpointed_size": c.CheckpointedSize,
		"state_size": c.StateSize, "end_to_end_duration": ms(end - c.TriggerVT), "alignment_buffered": 0,
		"processed_data": 0, "persisted_data": c.PersistedBytes, "num_subtasks": numSubtasks,
		"num_acknowledged_subtasks": c.Acknowledged, "checkpoint_type": typ, "tasks": tasks,
	}
	switch c.Status {
	case "COMPLETED":
		m["className"] = "completed"
		m["external_path"] = c.SavepointPath
		if c.SavepointPath == "" {
			m["external_path"] = "<checkpoint-not-externally-addressable>"
		}
		m["discarded"] = false
	case "FAILED":
		m["className"] = "failed"
		m["failure_timestamp"] = ms(c.EndVT)
		m["failure_message"] = c.Message
	default:
		m["className"] = "in_progress"
	}
	return m
}

// taskCheckpointStats is TaskCheckpointStatistics of one JobVertex for
// checkpoint c, from its subtasks' snapshots: latest_ack_timestamp is when
// the last of them took its snapshot (the log reports the snapshot, not
// the acknowledgement that follows the asynchronous upload), sizes are
// summed, persisted data is the persisted in-flight records at the record
// size (as the subtask counts it for its acknowledgement).
func taskCheckpointStats(c Checkpoint, v VertexCheckpoint, recordBytes int) map[string]any {
	latest := int64(-1)
	if v.Acknowledged > 0 {
		latest = ms(v.LatestVT)
	}
	dur := int64(-1)
	if latest >= 0 {
		dur = max(0, latest-ms(c.TriggerVT))
	}
	n := v.Subtasks
	if n == 0 {
		n = v.Acknowledged
	}
	return map[string]any{"id": c.ID, "status": c.Status, "latest_ack_timestamp": latest, "checkpointed_size": v.CheckpointedSize,
		"state_size": v.StateSize, "end_to_end_duration": dur, "alignment_buffered": 0, "processed_data": 0,
		"persisted_data": v.PersistedRecords * int64(recordBytes), "num_subtasks": n, "num_acknowledged_subtasks": v.Acknowledged}
}

// jobCheckpointsOf are the checkpoints the snapshot lists for job, oldest
// first.
func jobCheckpointsOf(snap *snapshot, job string) []Checkpoint {
	var out []Checkpoint
	for _, c := range snap.obs.ckpts {
		if c.Job == job {
			out = append(out, c)
		}
	}
	return out
}

// flinkCheckpoints is GET /jobs/:jobid/checkpoints: CheckpointingStatistics
// (rest.messages.checkpoints.CheckpointingStatistics) of the job's
// CheckpointStatsTracker: its Counts, the Summary of every completed
// checkpoint (StatsSummaryDto), LatestCheckpoints (completed, savepoint,
// failed, restored: RestoredCheckpointStatistics) and the history of the
// last web.checkpoints.history (10) checkpoints, newest first.
func (s *Server) flinkCheckpoints(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	j, rerr := lookupJob(snap, r.PathValue("jobid"))
	if rerr != nil {
		writeRestError(w, rerr)
		return
	}
	n := 0
	if jm := snap.views.jm; jm != nil {
		n = len(jm.Tasks)
	}
	js := snap.obs.jobs[j.id]
	if js == nil {
		js = &jobCheckpoints{}
	}
	rb := snap.settings.RecordBytes
	ckpts := jobCheckpointsOf(snap, j.id)
	inProgress := 0
	latest := map[string]any{"completed": nil, "savepoint": nil, "failed": nil, "restored": nil}
	history := []map[string]any{}
	for i := len(ckpts) - 1; i >= 0; i-- {
		c := ckpts[i]
		st := checkpointStats(c, n, false, rb)
		if len(history) < webCheckpointsHistory {
			history = append(history, st)
		}
		switch c.Status {
		case "IN_PROGRESS":
			inProgress++
		case "COMPLETED":
			if c.IsSavepoint() {
				if latest["savepoint"] == nil {
					latest["savepoint"] = st
				}
			} else if latest["completed"] == nil {
				latest["completed"] = st
			}
		case "FAILED":
			if latest["failed"] == nil {
				latest["failed"] = st
			}
		}
	}
	if rc := js.restored; rc != nil {
		path := rc.SavepointPath
		if path == "" {
			path = "<checkpoint-not-externally-addressable>"
		}
		latest["restored"] = map[string]any{"id": rc.ID, "restore_timestamp": ms(js.restoredVT), "is_savepoint": rc.IsSavepoint(),
			"external_path": path}
	}
	// alignment_buffered is no longer measured (Flink 1.11): the handler
	// reports a summary of zeros
	zeros := map[string]any{"min": 0, "max": 0, "avg": 0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0}
	writeJSON(w, http.StatusOK, map[string]any{
		"counts": map[string]any{"restored": js.counts.restored, "total": js.counts.triggered, "in_progress": inProgress,
			"completed": js.counts.completed, "failed": js.counts.failed},
		"summary": map[string]any{"checkpointed_size": statsSummary(js.checkpointedSize), "state_size": statsSummary(js.stateSize),
			"end_to_end_duration": statsSummary(js.duration), "alignment_buffered": zeros,
			"processed_data": statsSummary(js.processed), "persisted_data": statsSummary(js.persisted)},
		"latest":  latest,
		"history": history,
	})
}

// flinkCheckpointDetails is GET /jobs/:jobid/checkpoints/details/:checkpointid:
// CheckpointStatistics of one checkpoint of the history with its tasks, one
// TaskCheckpointStatistics per JobVertex (CheckpointStatisticDetailsHandler).
// A checkpoint no longer in the history (web.checkpoints.history) is not
// found, as in Flink.
func (s *Server) flinkCheckpointDetails(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	j, rerr := lookupJob(snap, r.PathValue("jobid"))
	if rerr != nil {
		writeRestError(w, rerr)
		return
	}
	raw := r.PathValue("checkpointid")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		writeRestError(w, badPathParameter("checkpointid", raw))
		return
	}
	ckpts := jobCheckpointsOf(snap, j.id)
	ckpts = ckpts[max(0, len(ckpts)-webCheckpointsHistory):]
	for _, c := range ckpts {
		if c.ID == id {
			n := 0
			if jm := snap.views.jm; jm != nil {
				n = len(jm.Tasks)
			}
			writeJSON(w, http.StatusOK, checkpointStats(c, n, true, snap.settings.RecordBytes))
			return
		}
	}
	writeRestError(w, notFound("Could not find checkpointing statistics for checkpoint "+raw+"."))
}
