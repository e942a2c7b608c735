// Package tests runs whole scenarios end to end: determinism, correctness
// against independently computed expectations, bring-up, and the Flink
// traps the simulator exists to show.
package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
)

// dataPath is a file of the project's examples/data.
func dataPath(name string) string {
	return filepath.Join("..", "examples", "data", name)
}

// settings returns the defaults with key=value overrides applied.
func settings(t tb, kv ...string) config.Config {
	t.Helper()
	cfg := config.Default()
	for _, s := range kv {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			t.Fatalf("bad override %q", s)
		}
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// readEvents reads an events file with the settings' fields.
func readEvents(t tb, path string, cfg config.Config) []events.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := events.Parse(data, path, events.Options{KeyField: cfg.KeyField, TimeField: cfg.TimeField, Partitions: cfg.SourcePartitions})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// run runs one simulation and returns its result and log.
func run(t tb, cfg config.Config, opt cluster.Options) (*cluster.Result, []byte) {
	t.Helper()
	var log bytes.Buffer
	opt.Log = &log
	res, err := cluster.Run(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Invariant != "" {
		t.Fatalf("run failed: invariant %s: %s (actor %s, vt %d)", res.Invariant, res.Failure, res.FailedActor, res.FailureVT)
	}
	return res, log.Bytes()
}

// withProcs runs f with GOMAXPROCS set to n.
func withProcs(n int, f func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
}

// logEvent is one parsed line of the event log.
type logEvent map[string]any

func (e logEvent) str(k string) string { s, _ := e[k].(string); return s }
func (e logEvent) num(k string) int64 {
	switch v := e[k].(type) {
	case float64:
		return int64(v)
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return 0
}

// float is field k as a number, and whether it is one.
func (e logEvent) float(k string) (float64, bool) {
	switch v := e[k].(type) {
	case float64:
		return v, true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// jsonInts reads a field that holds a JSON array of integers.
func jsonInts(t tb, v any) []int64 {
	t.Helper()
	xs, ok := v.([]any)
	if !ok {
		t.Fatalf("%v is not an array", v)
	}
	out := make([]int64, len(xs))
	for i, x := range xs {
		n, ok := x.(json.Number)
		if !ok {
			t.Fatalf("%v is not an array of numbers", v)
		}
		out[i], _ = n.Int64()
	}
	return out
}

// parseLog parses every line of a JSON event log.
func parseLog(t tb, log []byte) []logEvent {
	t.Helper()
	var out []logEvent
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		var e logEvent
		if err := d.Decode(&e); err != nil {
			t.Fatalf("log line %d is not JSON: %v: %s", len(out)+1, err, sc.Text())
		}
		out = append(out, e)
	}
	return out
}

// eventsOf returns the log events of one kind.
func eventsOf[K ~string](evs []logEvent, kind K) []logEvent {
	var out []logEvent
	for _, e := range evs {
		if e.str("event") == string(kind) {
			out = append(out, e)
		}
	}
	return out
}

// result is one sink record as the output file has it.
type result struct {
	Key         string  `json:"key"`
	WindowStart int64   `json:"window_start"`
	WindowEnd   int64   `json:"window_end"`
	Value       float64 `json:"value"`
	Firing      int     `json:"firing"`
}

// sinkResults decodes the sink topic of a run.
func sinkResults(t tb, res *cluster.Result) []result {
	t.Helper()
	out := make([]result, 0, len(res.Sink))
	for _, r := range res.Sink {
		var x result
		if err := json.Unmarshal(r.Value, &x); err != nil {
			t.Fatalf("sink record %s: %v", r.Value, err)
		}
		out = append(out, x)
	}
	return out
}

// tb is what the helpers need of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}
