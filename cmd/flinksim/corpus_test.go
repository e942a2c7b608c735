package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/sim/config"
)

// badCase is one bad input of the corpus: the binary run with args must
// exit with code (2 when zero) and name place on stderr.
type badCase struct {
	name  string
	args  []string
	code  int
	place string
}

// corpusDir holds the files of the corpus's cases.
type corpusDir struct {
	t   *testing.T
	dir string
}

func (c corpusDir) file(name, content string) string {
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// badValues are values no setting of a type takes (bool and enum values
// Flink refuses, numbers that do not parse or overflow, durations and sizes
// with a sign, a fraction or an unknown unit). A required string setting
// refuses only blank text.
var badValues = map[string][]string{
	"int":      {"x", "1.5", "99999999999999999999", "", "1e3", "0x10", "yes"},
	"uint64":   {"x", "-1", "1.5", "", "18446744073709551616"},
	"float":    {"x", "NaN", "1e400", "", "1_0", "Infinity", "-Infinity"},
	"bool":     {"yes", "on", "1", "", "tru", "no", "off"},
	"duration": {"-1 s", "5 parsecs", "1.5 s", "", "x", "99999999999999999 d", "yes", "1 us"},
	"memory":   {"-1", "5 parsecs", "1.5 g", "", "x", "99999999 t", "1 gib"},
	"enum":     {"nope", "", "yes", "1"},
}

// settingsCases refuses a bad value of every setting with --set (every
// value of its type) and in a config.yaml (the first, nested as Flink's
// file may nest it), naming the key or FILE:LINE.
func settingsCases(c corpusDir) []badCase {
	var out []badCase
	for i, s := range config.Registry() {
		values := badValues[s.Type]
		if s.Type == "string" {
			if !strings.Contains(s.Range, "non-empty") {
				continue
			}
			values = []string{"", "   "}
		}
		if strings.Contains(s.Range, "negative") {
			// job.window.offset: a negative offset is fine
			values = slices.DeleteFunc(slices.Clone(values), func(v string) bool { return strings.HasPrefix(v, "-") })
		}
		for _, v := range values {
			out = append(out, badCase{name: "--set " + s.Key + "=" + v, args: []string{"run", "--set", s.Key + "=" + v}, place: s.Key})
		}
		v := values[0]
		if v == "" {
			v = `""`
		}
		parts := strings.Split(s.Key, ".")
		var y strings.Builder
		y.WriteString("# a bad value\n")
		for d, p := range parts[:len(parts)-1] {
			y.WriteString(strings.Repeat("  ", d) + p + ":\n")
		}
		y.WriteString(strings.Repeat("  ", len(parts)-1) + parts[len(parts)-1] + ": " + v + "\n")
		f := c.file(fmt.Sprintf("setting-%d.yaml", i), y.String())
		out = append(out, badCase{name: "config.yaml " + s.Key + ": " + v, args: []string{"run", "--config", f},
			place: fmt.Sprintf("%s:%d:", f, len(parts)+1)})
	}
	return out
}

// eventsCases are broken events files, each refused at FILE:LINE.
func eventsCases(c corpusDir) []badCase {
	good := `{"key":"a","ts":1700000000000,"amount":1}` + "\n"
	type ev struct {
		name, line string // line: the broken second line
		args       []string
	}
	jsonLines := []ev{
		{"truncated object", `{"key":"b","ts":1700000000001`, nil},
		{"trailing comma", `{"key":"b","ts":1700000000001,}`, nil},
		{"single quotes", `{'key':'b','ts':1700000000001}`, nil},
		{"a NaN literal", `{"key":"b","ts":1700000000001,"amount":NaN}`, nil},
		{"an Infinity literal", `{"key":"b","ts":1700000000001,"amount":Infinity}`, nil},
		{"a bare string", `"b"`, nil},
		{"a number", `42`, nil},
		{"an array", `[{"key":"b","ts":1}]`, nil},
		{"no key", `{"ts":1700000000001}`, nil},
		{"a null key", `{"key":null,"ts":1700000000001}`, nil},
		{"a boolean key", `{"key":true,"ts":1700000000001}`, nil},
		{"an object key", `{"key":{"a":1},"ts":1700000000001}`, nil},
		{"no time", `{"key":"b"}`, nil},
		{"a fractional time", `{"key":"b","ts":1700000000001.5}`, nil},
		{"an exponent time", `{"key":"b","ts":17e11}`, nil},
		{"a time that is no date", `{"key":"b","ts":"yesterday"}`, nil},
		{"a boolean time", `{"key":"b","ts":false}`, nil},
		{"a time beyond a long", `{"key":"b","ts":9223372036854775808}`, nil},
		{"a time whose window wraps past Long.MAX_VALUE", `{"key":"b","ts":9223372036854775000}`, nil},
		{"a time whose window wraps past Long.MIN_VALUE", `{"key":"b","ts":-9223372036854775000}`, nil},
		{"a session window past Long.MAX_VALUE", `{"key":"b","ts":9223372036854775000}`, []string{"--set", "job.window.type=session", "--set", "job.window.gap=30s"}},
		{"a sliding window past Long.MIN_VALUE", `{"key":"b","ts":-9223372036854775000}`, []string{"--set", "job.window.type=sliding", "--set", "job.window.slide=10s"}},
		{"a partition out of range", `{"key":"b","ts":1700000000001,"partition":4}`, nil},
		{"a negative partition", `{"key":"b","ts":1700000000001,"partition":-1}`, nil},
		{"a partition as text", `{"key":"b","ts":1700000000001,"partition":"1"}`, nil},
		{"a fractional partition", `{"key":"b","ts":1700000000001,"partition":1.5}`, nil},
		{"a partition beyond an int", `{"key":"b","ts":1700000000001,"partition":99999999999}`, nil},
		{"a negative arrival", `{"key":"b","ts":1700000000001,"arrival":-1}`, nil},
		{"an arrival as text", `{"key":"b","ts":1700000000001,"arrival":"1s"}`, nil},
		{"a field twice", `{"key":"b","ts":1700000000001,"key":"c"}`, nil},
		{"a nested field twice", `{"key":"b","ts":1700000000001,"o":{"x":1,"x":2}}`, nil},
		{"invalid UTF-8", "{\"key\":\"b\xff\",\"ts\":1700000000001}", nil},
		{"a byte order mark on line 2", "\xef\xbb\xbf" + `{"key":"b","ts":1700000000001}`, nil},
		{"a raw control character in a string", "{\"key\":\"b\x01\",\"ts\":1700000000001}", nil},
		{"an aggregate field as text", `{"key":"b","ts":1700000000001,"amount":"12x"}`, []string{"--set", "job.window.aggregate=sum"}},
		{"an aggregate field as a boolean", `{"key":"b","ts":1700000000001,"amount":true}`, []string{"--set", "job.window.aggregate=avg"}},
		{"an aggregate field beyond a double", `{"key":"b","ts":1700000000001,"amount":1e400}`, []string{"--set", "job.window.aggregate=sum"}},
		{"a filter field beyond a double", `{"key":"b","ts":1700000000001,"amount":-1e309}`, []string{"--set", "job.filter=amount > 5"}},
		{"a line one byte over 1 MiB", `{"key":"` + strings.Repeat("y", 1<<20-28) + `","ts":1700000000001}`, nil},
		{"arrivals that go back", `{"key":"b","ts":1700000000001,"arrival":5}`, nil},
	}
	var out []badCase
	for i, e := range jsonLines {
		first := good
		if e.name == "arrivals that go back" {
			first = `{"key":"a","ts":1700000000000,"arrival":10}` + "\n"
		}
		f := c.file(fmt.Sprintf("events-%d.jsonl", i), first+e.line+"\n")
		out = append(out, badCase{name: "events: " + e.name, args: append([]string{"run", "--events", f}, e.args...), place: f + ":2:"})
	}
	csv := []struct{ name, content, place string }{
		{"a row short of a column", "key,ts,amount\na,1700000000000,1\nb,1700000000001\n", ":3:"},
		{"a row with a column more", "key,ts\na,1700000000000\nb,1700000000001,9\n", ":3:"},
		{"a header without the key", "user,ts\na,1700000000000\n", ":1:"},
		{"a header without the time", "key,time\na,1700000000000\n", ":1:"},
		{"a header naming a column twice", "key,ts,key\na,1,b\n", ":1:"},
		{"a header column without a name", "key,,ts\na,1,2\n", ":1:"},
		{"a bad quote", "key,ts\n\"a,1700000000000\n", ":2:"},
		{"a bad time", "key,ts\na,soon\n", ":2:"},
		{"a byte order mark on line 3", "key,ts\na,1700000000000\n\xef\xbb\xbfb,1700000000001\n", ":3:"},
		{"a partition out of range", "key,ts,partition\na,1700000000000,9\n", ":2:"},
	}
	for i, e := range csv {
		f := c.file(fmt.Sprintf("events-%d.csv", i), e.content)
		out = append(out, badCase{name: "events CSV: " + e.name, args: []string{"run", "--events", f}, place: f + e.place})
	}
	whole := []struct{ name, content, place string }{
		{"two byte order marks in a .jsonl file", "\xef\xbb\xbf\xef\xbb\xbf" + good, ":1:"},
		{"an empty file", "", ": no records"},
		{"only blank lines", "\n  \n\n", ": no records"},
		{"a JSON array", `[{"key":"a","ts":1}]` + "\n", ":1:"},
		{"CSV in a .jsonl file", "key,ts\na,1\n", ":1:"},
	}
	for i, e := range whole {
		f := c.file(fmt.Sprintf("whole-%d.jsonl", i), e.content)
		out = append(out, badCase{name: "events: " + e.name, args: []string{"run", "--events", f}, place: f + e.place})
	}
	return out
}

// yamlCases are broken settings files, each refused at FILE:LINE.
func yamlCases(c corpusDir) []badCase {
	cases := []struct{ name, content, place string }{
		{"flat and nested forms of one key", "parallelism.default: 2\nparallelism:\n  default: 3\n", ":3:"},
		{"nested, then flat", "sim:\n  seed: 1\nsim.seed: 2\n", ":3:"},
		{"a key twice in one mapping", "sim.seed: 1\nsim.seed: 2\n", ":2:"},
		{"yes for a boolean", "state.backend.incremental: yes\n", ":1:"},
		{"on for a nested boolean", "pipeline:\n  operator-chaining:\n    enabled: on\n", ":3:"},
		{"an unknown key", "parallelism.defualt: 2\n", ":1:"},
		{"an unknown nested key", "sim:\n  sed: 2\n", ":2:"},
		{"tab indentation", "parallelism:\n\tdefault: 2\n", ":2:"},
		{"a second document", "sim.seed: 1\n---\nsim.seed: 2\n", ":3:"},
		{"a list for a single value", "job.source.topic: [a, b]\n", ":1:"},
		{"not a mapping", "- sim.seed: 1\n", ":1:"},
		{"a scalar document", "just text\n", ":1:"},
		{"a missing value", "parallelism.default:\n", ":1:"},
		{"a complex key", "? [a, b]\n: 1\n", ":1:"},
		{"an alias key", "a: &x k\n*x : 1\n", ":"},
		{"an alias into its own mapping", "a: &a\n  b: *a\n", ":2:"},
		{"a byte order mark on line 2", "sim.seed: 1\n\xef\xbb\xbfparallelism.default: 2\n", ":2:"},
		{"invalid UTF-8", "sim.seed: 1\njob.source.topic: a\xff\n", ":2:"},
		{"an unclosed flow mapping", "parallelism: {default: 2\n", ":"},
		{"a bad filter", "job.filter: amount\n", "job.filter"},
		{"a NaN filter", "job.filter: amount > NaN\n", "job.filter"},
		{"heartbeat timeout below its interval", "heartbeat.interval: 10 s\nheartbeat.timeout: 5 s\n", "heartbeat.timeout"},
		{"parallelism above max parallelism", "parallelism.default: 8\npipeline.max-parallelism: 4\n", "parallelism.default"},
	}
	var out []badCase
	for i, e := range cases {
		f := c.file(fmt.Sprintf("bad-%d.yaml", i), e.content)
		place := e.place
		if strings.HasPrefix(place, ":") {
			place = f + place
		}
		out = append(out, badCase{name: "config.yaml: " + e.name, args: []string{"run", "--config", f}, place: place})
	}
	return out
}

// actionCases are bad actions, given with --action (named there) and in an
// --actions file (at FILE:LINE).
func actionCases(c corpusDir) []badCase {
	bad := []string{
		"kill-taskmanager tm-1",
		"at=90s",
		"at=90x trigger-checkpoint",
		"at=90s explode",
		"at=90 kill-taskmanager tm-1",
		"at=-5s trigger-checkpoint",
		"at=5s kill-taskmanager worker-1",
		"at=5s kill-taskmanager tm-0",
		"at=5s rescale 0",
		"at=5s rescale 99999",
		"at=5s rescale x",
		"at=5s rescale 3 max=4",
		"at=5s trigger-checkpoint now",
		"at=5s send-event key=a",
		"at=5s send-event ts=now",
		"at=5s send-event key= ts=now",
		"at=5s send-event key=a ts=soon",
		"at=5s send-event key=a ts=now-5parsecs",
		"at=5s send-event key=a ts=-9223372036854775808",
		"at=5s send-event key=a ts=now partition=x",
		"at=5s send-event key=a ts=now amount=1e400",
		"at=5s send-event key=a ts=9223372036854775000",
		"at=5s send-event key=a ts=now junk",
		"at=5s pause-partition x",
		"at=5s set parallelism.default=3",
		"at=5s set job.watermark.idleness",
		"at=5s partition-network tm-1",
		"at=5s partition-network tm-1 tm-2 for",
	}
	var out []badCase
	for i, a := range bad {
		out = append(out, badCase{name: "--action " + a, args: []string{"run", "--action", a}, place: "--action"})
		f := c.file(fmt.Sprintf("actions-%d.txt", i), "# actions\nat=1s trigger-checkpoint\n"+a+"\n")
		out = append(out, badCase{name: "--actions file: " + a, args: []string{"run", "--actions", f}, place: f + ":3:"})
	}
	f := c.file("actions-bom.txt", "at=1s trigger-checkpoint\n\xef\xbb\xbfat=2s trigger-checkpoint\n")
	out = append(out, badCase{name: "--actions file: a byte order mark on line 2", args: []string{"run", "--actions", f}, place: f + ":2:"})
	f = c.file("actions-utf8.txt", "at=1s trigger-checkpoint\nat=2s send-event key=\xff ts=now\n")
	out = append(out, badCase{name: "--actions file: invalid UTF-8", args: []string{"run", "--actions", f}, place: f + ":2:"})
	return out
}

// replayCases are logs replay cannot replay, each refused at FILE:LINE (or
// naming the events file).
func replayCases(c corpusDir) []badCase {
	const hdr = `{"vt":0,"actor":"flinksim","event":"header","format":"flinksim-log/1","program":"flinksim 0.1.0","seed":1,"settings":{},"flink_defaults":{},"bounded":false,"actions":[]}`
	const sum = `{"vt":5,"actor":"flinksim","event":"summary","job_status":"RUNNING"}`
	ev := c.file("replay-events.jsonl", `{"key":"a","ts":1}`+"\n")
	cases := []struct{ name, content, place string }{
		{"an empty file", "", ":1:"},
		{"a console log", "0.000000s flinksim header format=flinksim-log/1\n", ":1:"},
		{"a header alone", hdr + "\n", ":1: truncated"},
		{"another log format", strings.Replace(hdr, "flinksim-log/1", "flinksim-log/0", 1) + "\n" + sum + "\n", ":1:"},
		{"a bad setting in the header", strings.Replace(hdr, `"settings":{}`, `"settings":{"parallelism.default":"zero"}`, 1) + "\n" + sum + "\n", ":1:"},
		{"an unknown setting in the header", strings.Replace(hdr, `"settings":{}`, `"settings":{"paralelism":"2"}`, 1) + "\n" + sum + "\n", ":1:"},
		{"a bad action in the header", strings.Replace(hdr, `"actions":[]`, `"actions":["at=5s explode"]`, 1) + "\n" + sum + "\n", ":1:"},
		{"a cut last line", hdr + "\n" + sum[:30] + "\n", ":2: truncated"},
		{"garbage after the summary", hdr + "\n" + sum + "\nxyz\n", ":3: truncated"},
		{"a bad live action", hdr + "\n" + `{"vt":1,"actor":"jobmanager","event":"action","action":"at=1s explode"}` + "\n" + sum + "\n", ":2:"},
		{"a missing events file", strings.Replace(hdr, `"bounded":false`, `"events_file":"/nonexistent/ev.jsonl","events_sha256":"x","events":1,"bounded":true`, 1) + "\n" + sum + "\n", ":1: events_file /nonexistent/ev.jsonl"},
		{"an events file that changed", strings.Replace(hdr, `"bounded":false`, `"events_file":"`+ev+`","events_sha256":"00","events":1,"bounded":true`, 1) + "\n" + sum + "\n", ": the events file " + ev + " changed since the run"},
		{"a header that is JSON but not a header", `{"vt":0,"event":"summary"}` + "\n" + sum + "\n", ":1:"},
	}
	var out []badCase
	for i, e := range cases {
		f := c.file(fmt.Sprintf("replay-%d.log", i), e.content)
		out = append(out, badCase{name: "replay: " + e.name, args: []string{"replay", f}, place: f + e.place})
	}
	gen := c.file("replay-gen.log", hdr+"\n"+sum+"\n")
	out = append(out,
		badCase{name: "replay: --events for a run of the generator", args: []string{"replay", gen, "--events", ev}, place: "--events " + ev},
		badCase{name: "replay: a directory", args: []string{"replay", c.dir}, place: c.dir + ": is a directory"},
		badCase{name: "replay: a missing log", args: []string{"replay", filepath.Join(c.dir, "none.log")}, place: "none.log"},
		badCase{name: "replay: /dev/zero", args: []string{"replay", "/dev/zero"}, place: "/dev/zero:1:"},
		badCase{name: "replay: no FILE", args: []string{"replay"}, place: "replay takes exactly one FILE"},
		badCase{name: "replay: two FILEs", args: []string{"replay", gen, gen}, place: "replay takes exactly one FILE"},
	)
	return out
}

// flagCases are bad flags and arguments of every command, each refused
// naming the flag.
func flagCases(c corpusDir) []badCase {
	return []badCase{
		{name: "run --log-format xml", args: []string{"run", "--log-format", "xml"}, place: "--log-format"},
		{name: "run --only a kind that does not exist", args: []string{"run", "--only", "windows_fired"}, place: "--only"},
		{name: "run --exclude a kind that does not exist", args: []string{"run", "--exclude", "nope"}, place: "--exclude"},
		{name: "run --seed x", args: []string{"run", "--seed", "x"}, place: "--seed"},
		{name: "run --seed -1", args: []string{"run", "--seed", "-1"}, place: "--seed"},
		{name: "run --duration x", args: []string{"run", "--duration", "x"}, place: "--duration"},
		{name: "run --duration 0", args: []string{"run", "--duration", "0"}, place: "--duration"},
		{name: "run --duration -5s", args: []string{"run", "--duration", "-5s"}, place: "--duration"},
		{name: "run --unbounded without --events", args: []string{"run", "--unbounded"}, place: "--unbounded"},
		{name: "run --output a directory", args: []string{"run", "--output", c.dir}, place: "--output " + c.dir},
		{name: "run --log a directory", args: []string{"run", "--log", c.dir}, place: "--log " + c.dir},
		{name: "run --events missing", args: []string{"run", "--events", filepath.Join(c.dir, "none.jsonl")}, place: "none.jsonl"},
		{name: "run --config missing", args: []string{"run", "--config", filepath.Join(c.dir, "none.yaml")}, place: "none.yaml"},
		{name: "run --actions missing", args: []string{"run", "--actions", filepath.Join(c.dir, "none.txt")}, place: "none.txt"},
		{name: "run --set without =", args: []string{"run", "--set", "parallelism.default"}, place: "expected key=value"},
		{name: "run an unknown flag", args: []string{"run", "--nope"}, place: "--nope"},
		{name: "run a positional argument", args: []string{"run", "extra"}, place: "extra"},
		{name: "an unknown command", args: []string{"runn"}, place: "runn"},
		{name: "settings an unknown key", args: []string{"settings", "paralelism.default"}, place: "paralelism.default"},
		{name: "explain split --partitions 0", args: []string{"explain", "split", "--topic", "t", "--partitions", "0", "--readers", "2"}, place: "--partitions"},
		{name: "explain split --readers -1", args: []string{"explain", "split", "--topic", "t", "--partitions", "2", "--readers", "-1"}, place: "--readers"},
		{name: "explain key without a key", args: []string{"explain", "key"}, place: "explain key"},
		{name: "explain window --size 0", args: []string{"explain", "window", "--size", "0", "--ts", "5"}, place: "size"},
		{name: "taskmanager --join 127.0.0.1:0", args: []string{"taskmanager", "--join", "127.0.0.1:0"}, place: "--join 127.0.0.1:0: port 0"},
		{name: "taskmanager --join [::1]:0", args: []string{"taskmanager", "--join", "[::1]:0"}, place: "--join [::1]:0: port 0"},
		{name: "taskmanager --jobmanager.rpc.port 0", args: []string{"taskmanager", "--jobmanager.rpc.port", "0"}, place: "--jobmanager.rpc.port 0: port 0"},
		{name: "taskmanager --join without a port", args: []string{"taskmanager", "--join", "localhost"}, place: "--join"},
		{name: "taskmanager --join port 99999", args: []string{"taskmanager", "--join", "127.0.0.1:99999"}, place: "--join"},
		{name: "taskmanager --taskmanager.rpc.port 70000", args: []string{"taskmanager", "--taskmanager.rpc.port", "70000"}, place: "--taskmanager.rpc.port"},
		{name: "taskmanager --taskmanager.registration.timeout 0s", args: []string{"taskmanager", "--taskmanager.registration.timeout", "0s"}, place: "taskmanager.registration.timeout"},
		{name: "jobmanager --listen x", args: []string{"jobmanager", "--listen", "x"}, place: "--listen"},
		{name: "jobmanager --spare-taskmanagers -1", args: []string{"jobmanager", "--spare-taskmanagers", "-1"}, place: "--spare-taskmanagers"},
		{name: "jobmanager --watchdog-timeout 0s", args: []string{"jobmanager", "--watchdog-timeout", "0s"}, place: "watchdog-timeout"},
		{name: "jobmanager --check-determinism", args: []string{"jobmanager", "--check-determinism"}, place: "--check-determinism"},
		{name: "swarm --seeds 0", args: []string{"swarm", "--seeds", "0"}, place: "--seeds"},
	}
}

// The corpus of bad inputs (issue 29): every case ends within its bound,
// with no panic, at exit 2, naming the place (the setting, the flag, or
// FILE:LINE), with nothing on stdout (no run started) and a message short
// enough to read. -short runs every fifth case.
func TestBadInputCorpus(t *testing.T) {
	c := corpusDir{t: t, dir: t.TempDir()}
	var cases []badCase
	for _, part := range [][]badCase{settingsCases(c), eventsCases(c), yamlCases(c), actionCases(c), replayCases(c), flagCases(c)} {
		cases = append(cases, part...)
	}
	if len(cases) < 400 {
		t.Fatalf("the corpus has %d cases, want at least 400", len(cases))
	}
	ran := 0
	for i, tt := range cases {
		if testing.Short() && i%5 != 0 {
			continue
		}
		ran++
		t.Run(tt.name, func(t *testing.T) {
			r := cliIn(t, c.dir, 30*time.Second, tt.args...)
			want := tt.code
			if want == 0 {
				want = 2
			}
			if r.code != want {
				t.Fatalf("%v: exit %d, want %d; stderr: %.600s", tt.args, r.code, want, r.stderr)
			}
			for _, bad := range []string{"panic", "goroutine ", "runtime error", "SIGSEGV"} {
				if strings.Contains(r.stderr, bad) {
					t.Fatalf("%v: %q on stderr:\n%.2000s", tt.args, bad, r.stderr)
				}
			}
			if !strings.Contains(r.stderr, "flinksim: ") || !strings.Contains(r.stderr, tt.place) {
				t.Errorf("%v: stderr does not name the place %q:\n%.1000s", tt.args, tt.place, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("%v: the run started: %d bytes on stdout", tt.args, len(r.stdout))
			}
			if len(r.stderr) > 6000 {
				t.Errorf("%v: %d bytes of stderr", tt.args, len(r.stderr))
			}
		})
	}
	t.Logf("%d cases in the corpus, %d run", len(cases), ran)
}

// Hostile input that is valid is run, and what it writes is valid: every
// line of --output and of the log is one JSON value (issue 29: no invalid
// output), and warnings stay on stderr, out of the log.
func TestHostileButValidInputWritesValidOutput(t *testing.T) {
	c := corpusDir{t: t, dir: t.TempDir()}
	ev := c.file("hostile.jsonl", strings.Join([]string{
		`{"key":"a\u0000b","ts":1700000000000,"amount":1e308}`,
		`{"key":"a\u0000b","ts":1700000000001,"amount":1e308}`,
		`{"key":"\ud83d\ude00 \u2028 \"q\"","ts":"2023-11-14T22:13:20.5+01:00","amount":1e-400}`,
		`{"key":12345678901234567890123,"ts":-1,"amount":-1e308,"nested":{"x":[1,{"y":"NaN"}]}}`,
		`{"key":"-1e308","ts":1700000000002,"amount":-1e308}`,
		`{"key":"n","ts":1700000000003,"amount":2,"note":"NaN"}`,
	}, "\n")+"\n")
	tests := [][]string{
		{"--set", "job.window.aggregate=sum"},
		{"--set", "job.window.aggregate=avg", "--set", "job.filter=amount != 0"},
		{"--set", "job.filter=note != x"},
		{"--set", "job.window.aggregate=max", "--set", "job.window.type=session", "--set", "job.window.gap=1s"},
		{"--set", "job.operator=process"},
	}
	for i, extra := range tests {
		out, log := filepath.Join(c.dir, fmt.Sprintf("out-%d.jsonl", i)), filepath.Join(c.dir, fmt.Sprintf("run-%d.log", i))
		args := append([]string{"run", "--events", ev, "--output", out, "--log", log}, extra...)
		r := cliIn(t, c.dir, 60*time.Second, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, r.code, r.stderr)
		}
		for _, p := range []string{out, log} {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 && p == log {
				t.Fatalf("%v: empty log", extra)
			}
			for n, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if len(line) > 0 && !json.Valid(line) {
					t.Errorf("%v: %s:%d is not JSON: %.300s", extra, filepath.Base(p), n+1, line)
				}
				if bytes.Contains(line, []byte("warning")) {
					t.Errorf("%v: a warning in %s:%d", extra, filepath.Base(p), n+1)
				}
			}
		}
	}
}
