//go:build !js

package session

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// restFixture is testdata/flink_rest_fields.json: the field names of
// Flink 1.20's REST response classes.
type restFixture struct {
	Shapes map[string]struct {
		Class  string            `json:"class"`
		Fields map[string]string `json:"fields"`
		Array  string            `json:"array"`
	} `json:"shapes"`
	Endpoints []struct {
		Path   string `json:"path"`
		Shape  string `json:"shape"`
		Status int    `json:"status"`
	} `json:"endpoints"`
}

func loadRestFixture(t *testing.T) restFixture {
	b, err := os.ReadFile("testdata/flink_rest_fields.json")
	if err != nil {
		t.Fatal(err)
	}
	var f restFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// checkShape holds v to a fixture type: every field the response has is
// one of the class's (no invented names), every field the class always
// writes is there, and nested values have their types.
func checkShape(f restFixture, typ string, v any, path string) []string {
	optional := strings.HasSuffix(typ, "?")
	typ = strings.TrimSuffix(typ, "?")
	if v == nil {
		if optional {
			return nil
		}
		return []string{path + ": null, want " + typ}
	}
	switch {
	case strings.HasPrefix(typ, "[]"):
		arr, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an array of %s", path, v, typ[2:])}
		}
		var errs []string
		for i, x := range arr {
			errs = append(errs, checkShape(f, typ[2:], x, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	case strings.HasPrefix(typ, "{}"):
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want a map of %s", path, v, typ[2:])}
		}
		var errs []string
		for k, x := range m {
			errs = append(errs, checkShape(f, typ[2:], x, path+"."+k)...)
		}
		return errs
	}
	switch typ {
	case "double":
		if x, ok := v.(string); ok && (x == "NaN" || x == "Infinity" || x == "-Infinity") {
			return nil
		}
		if _, ok := v.(float64); !ok {
			return []string{fmt.Sprintf("%s: %T, want a number or NaN", path, v)}
		}
		return nil
	case "number":
		if _, ok := v.(float64); !ok {
			return []string{fmt.Sprintf("%s: %T, want a number", path, v)}
		}
		return nil
	case "string":
		if _, ok := v.(string); !ok {
			return []string{fmt.Sprintf("%s: %T, want a string", path, v)}
		}
		return nil
	case "bool":
		if _, ok := v.(bool); !ok {
			return []string{fmt.Sprintf("%s: %T, want a bool", path, v)}
		}
		return nil
	case "object":
		if _, ok := v.(map[string]any); !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", path, v)}
		}
		return nil
	}
	sh, ok := f.Shapes[typ]
	if !ok {
		return []string{path + ": the fixture has no shape " + typ}
	}
	if sh.Array != "" {
		return checkShape(f, "[]"+sh.Array, v, path)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: %T, want %s", path, v, typ)}
	}
	var errs []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ft, known := sh.Fields[k]
		if !known {
			errs = append(errs, fmt.Sprintf("%s.%s: not a field of %s", path, k, sh.Class))
			continue
		}
		errs = append(errs, checkShape(f, ft, m[k], path+"."+k)...)
	}
	for k, ft := range sh.Fields {
		if _, there := m[k]; !there && !strings.HasSuffix(ft, "?") {
			errs = append(errs, fmt.Sprintf("%s.%s: missing (%s)", path, k, sh.Class))
		}
	}
	return errs
}

// TestFlinkRESTShapes calls every Flink REST endpoint of a job that ran,
// restarted, checkpointed and took a savepoint, and holds each answer to
// the field names of Flink's class (testdata/flink_rest_fields.json).
func TestFlinkRESTShapes(t *testing.T) {
	fx := loadRestFixture(t)
	ts := newTestServer(t, recipeOf(t, "restart-strategy.type=fixed-delay", "execution.checkpointing.interval=5 s"))
	ts.mustPost(t, "/sim/seek", "12s")
	ts.mustPost(t, "/sim/action", "trigger-savepoint")
	ts.mustPost(t, "/sim/seek", "16s")
	ts.mustPost(t, "/sim/action", "kill-taskmanager tm-1")
	ts.mustPost(t, "/sim/seek", "31s")
	ts.mustPost(t, "/sim/action", "trigger-checkpoint")
	ts.mustPost(t, "/sim/speed", "step") // the trigger

	_, b := ts.get(t, "/jobs/overview")
	var ov struct {
		Jobs []struct {
			JID string `json:"jid"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b, &ov); err != nil || len(ov.Jobs) != 1 || len(ov.Jobs[0].JID) != 32 {
		t.Fatalf("/jobs/overview: %s", b)
	}
	jid := ov.Jobs[0].JID
	_, b = ts.get(t, "/jobs/"+jid)
	var job struct {
		State    string `json:"state"`
		Vertices []struct {
			ID string `json:"id"`
		} `json:"vertices"`
		Plan struct {
			Nodes []struct {
				Inputs []struct {
					ID string `json:"id"`
				} `json:"inputs"`
			} `json:"nodes"`
		} `json:"plan"`
	}
	if err := json.Unmarshal(b, &job); err != nil || len(job.Vertices) != 2 || job.State != "RUNNING" {
		t.Fatalf("/jobs/:jid: %v %s", err, b)
	}
	if len(job.Plan.Nodes) != 2 || len(job.Plan.Nodes[1].Inputs) != 1 || job.Plan.Nodes[1].Inputs[0].ID != job.Vertices[0].ID {
		t.Fatalf("the plan does not connect the vertices as the web UI draws them: %s", b)
	}
	for _, vid := range []string{job.Vertices[0].ID, job.Vertices[1].ID} {
		for _, ep := range fx.Endpoints {
			path := strings.NewReplacer("{jobid}", jid, "{vertexid}", vid, "{checkpointid}", "2").Replace(ep.Path)
			for _, p := range []string{path, "/v1" + path} {
				st, body := ts.get(t, p)
				want := ep.Status
				if want == 0 {
					want = 200
				}
				if st != want {
					t.Errorf("GET %s: %d, want %d: %s", p, st, want, body)
					continue
				}
				var v any
				if err := json.Unmarshal(body, &v); err != nil {
					t.Errorf("GET %s: %v", p, err)
					continue
				}
				for _, e := range checkShape(fx, ep.Shape, v, p) {
					t.Error(e)
				}
			}
		}
	}
	// the figures mean what Flink's do
	_, b = ts.get(t, "/jobs/"+jid+"/checkpoints")
	var cs struct {
		Counts struct{ Completed, Restored, Total, InProgress int } `json:"counts"`
		Latest struct {
			Savepoint *struct {
				IsSavepoint bool `json:"is_savepoint"`
			} `json:"savepoint"`
			Restored *struct{ ID int } `json:"restored"`
		} `json:"latest"`
	}
	_ = json.Unmarshal(b, &cs)
	if cs.Counts.Completed < 3 || cs.Counts.Restored != 1 || cs.Latest.Savepoint == nil || !cs.Latest.Savepoint.IsSavepoint || cs.Latest.Restored == nil {
		t.Errorf("/checkpoints: %s", b)
	}
	_, b = ts.get(t, "/jobs/"+jid+"/vertices/"+job.Vertices[1].ID+"/watermarks")
	if !strings.Contains(string(b), `"0.currentInputWatermark"`) || !strings.Contains(string(b), `"1.currentInputWatermark"`) {
		t.Errorf("/watermarks: %s", b)
	}
	_, b = ts.get(t, "/jobs/"+jid+"/vertices/"+job.Vertices[0].ID+"/subtasks/metrics?get=numRecordsIn&agg=sum,skew")
	var agg []map[string]any
	_ = json.Unmarshal(b, &agg)
	if len(agg) != 1 || agg[0]["sum"].(float64) <= 0 || agg[0]["min"] != nil {
		t.Errorf("/subtasks/metrics?get=numRecordsIn&agg=sum,skew: %s", b)
	}
	_, b = ts.get(t, "/overview")
	if !strings.Contains(string(b), `"taskmanagers":2`) || !strings.Contains(string(b), `"flink-version":"1.20.0"`) {
		t.Errorf("/overview: %s", b)
	}
	// the simulator's own names work as ids too
	if st, b := ts.get(t, "/jobs/job-1/vertices/window/backpressure"); st != 200 || !strings.Contains(string(b), `"backpressure-level":"ok"`) {
		t.Errorf("/jobs/job-1/vertices/window/backpressure: %d %s", st, b)
	}
}

// TestBackPressureLevels are JobVertexBackPressureHandler's thresholds.
func TestBackPressureLevels(t *testing.T) {
	for _, tc := range []struct {
		give int64
		want string
	}{{0, "ok"}, {100, "ok"}, {101, "low"}, {500, "low"}, {501, "high"}, {1000, "high"}} {
		if got := backPressureLevel(tc.give); got != tc.want {
			t.Errorf("backPressureLevel(%d ms/s) = %s, want %s", tc.give, got, tc.want)
		}
	}
	for _, tc := range []struct {
		give []float64
		want float64
	}{{nil, 0}, {[]float64{0, 0}, 0}, {[]float64{10, 10}, 0}, {[]float64{0, 10}, 100}, {[]float64{5, 15}, 50}} {
		if got := skew(tc.give); got != tc.want {
			t.Errorf("skew(%v) = %v, want %v", tc.give, got, tc.want)
		}
	}
}

// Before the JobMaster runs (virtual time 0, the session paused), GET /jobs
// lists the job as the Dispatcher does a submitted one, INITIALIZING, never
// with an empty status, and /jobs/overview and /overview agree.
func TestFlinkRESTJobInitializing(t *testing.T) {
	ts := newTestServer(t, recipeOf(t))
	_, b := ts.get(t, "/jobs")
	var jobs struct {
		Jobs []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b, &jobs); err != nil || len(jobs.Jobs) != 1 {
		t.Fatalf("/jobs: %s (%v)", b, err)
	}
	if got := jobs.Jobs[0].Status; got != "INITIALIZING" {
		t.Errorf("/jobs status at vt 0 = %q, want INITIALIZING", got)
	}
	ts.mustPost(t, "/sim/seek", "2s")
	_, b = ts.get(t, "/jobs")
	if err := json.Unmarshal(b, &jobs); err != nil || len(jobs.Jobs) != 1 || jobs.Jobs[0].Status != "RUNNING" {
		t.Errorf("/jobs at 2 s: %s, want the job RUNNING", b)
	}
}
