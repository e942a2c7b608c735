package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// result is one run of the binary as a user sees it.
type result struct {
	stdout, stderr string
	code           int
	wall           time.Duration
	maxRSSKiB      int64
}

// cliIn runs the binary in dir with a wall-clock bound, and reports its
// exit code, output, wall time and peak memory (getrusage's ru_maxrss).
func cliIn(t *testing.T, dir string, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, flinksimBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), wall: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v", args, timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSKiB = ru.Maxrss
	}
	return r
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Bad input never hangs, never eats memory, never destroys data: every
// case exits 2 (4 for the job Flink fails) within seconds and 300 MB, with
// a message naming the place, short enough to read, and every input file
// as it was.
func TestBadInputIsRefusedSafely(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jsonl", "{\"key\":\"a\",\"ts\":1000}\n{\"key\":\"b\",\"ts\":2000}\n")
	cfg := write("cfg.yaml", "parallelism.default: 2\n")
	selfAlias := write("self.yaml", "a: &a\n  b: *a\n")
	var laughs strings.Builder
	laughs.WriteString("a: &a [x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs.WriteString(n + ": &" + n + " [*" + prev + strings.Repeat(", *"+prev, 8) + "]\n")
		prev = n
	}
	billion := write("laughs.yaml", laughs.String())
	var mapLaughs strings.Builder
	mapLaughs.WriteString("a: &a {x0: 1, x1: 1, x2: 1, x3: 1, x4: 1, x5: 1, x6: 1, x7: 1, x8: 1}\n")
	prev = "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		mapLaughs.WriteString(n + ": &" + n + " {k0: *" + prev)
		for j := 1; j < 9; j++ {
			mapLaughs.WriteString(", k" + string(rune('0'+j)) + ": *" + prev)
		}
		mapLaughs.WriteString("}\n")
		prev = n
	}
	mapBillion := write("maplaughs.yaml", mapLaughs.String())
	twoDocs := write("two.yaml", "parallelism.default: 2\n---\nsim.seed: 3\n")
	dupField := write("dup.jsonl", "{\"key\":\"a\",\"ts\":1}\n{\"key\":\"b\",\"ts\":2,\"ts\":3}\n")
	badUTF8 := write("utf8.jsonl", "{\"key\":\"a\",\"ts\":1}\n{\"k\xffey\":\"b\",\"ts\":2}\n")
	badAgg := write("agg.jsonl", "{\"key\":\"a\",\"ts\":1,\"amount\":3}\n{\"key\":\"b\",\"ts\":2,\"amount\":\"12x\"}\n")
	minTS := write("min.jsonl", "{\"key\":\"a\",\"ts\":1000}\n{\"key\":\"b\",\"ts\":-9223372036854775808}\n")
	array := write("array.json", "[{\"key\":\"a\",\"ts\":1},{\"key\":\"b\",\"ts\":2}]\n")
	garbage := write("garbage.csv", strings.Repeat("x", 900_000)+"\n1,2\n")
	longLine := write("long.jsonl", "{\"key\":\""+strings.Repeat("y", 10<<20)+"\",\"ts\":1}\n")
	missingEvents := write("missing-events.log", `{"vt":0,"actor":"flinksim","event":"header","format":"flinksim-log/1","program":"flinksim 0.1.0","seed":1,"settings":{},"flink_defaults":{},"events_file":"/nonexistent/ev.jsonl","events_sha256":"x","events":1,"bounded":true,"actions":[]}`+"\n"+
		`{"vt":5,"actor":"flinksim","event":"summary","job_status":"FINISHED"}`+"\n")
	badActionLog := write("bad-action.log", `{"vt":0,"actor":"flinksim","event":"header","format":"flinksim-log/1","program":"flinksim 0.1.0","seed":1,"settings":{},"flink_defaults":{},"bounded":false,"actions":["at=5s explode"]}`+"\n"+
		`{"vt":5,"actor":"flinksim","event":"summary","job_status":"FINISHED"}`+"\n")
	if err := os.Symlink(good, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	inputs := []string{good, cfg, selfAlias, billion, mapBillion, twoDocs, dupField, badUTF8, badAgg, minTS, array, garbage, longLine}
	before := map[string][32]byte{}
	for _, p := range inputs {
		before[p] = fileSum(t, p)
	}

	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"YAML alias into itself", []string{"run", "--config", selfAlias}, 2, selfAlias + ":2: a.b: the alias *a names a mapping that contains it"},
		{"YAML billion laughs of lists", []string{"run", "--config", billion}, 2, billion + ":7: more than 50 aliases"},
		{"YAML billion laughs of mappings", []string{"run", "--config", mapBillion}, 2, mapBillion + ":7: more than 50 aliases"},
		{"a second YAML document", []string{"run", "--config", twoDocs}, 2, twoDocs + ":3: a second YAML document"},
		{"--events /dev/zero", []string{"run", "--events", "/dev/zero"}, 2, "/dev/zero:1: line longer than 1 MiB"},
		{"--config /dev/zero", []string{"run", "--config", "/dev/zero"}, 2, "/dev/zero:1: line longer than 64 KiB"},
		{"--actions /dev/zero", []string{"run", "--actions", "/dev/zero"}, 2, "/dev/zero:1: line longer than 4 KiB"},
		{"replay /dev/zero", []string{"replay", "/dev/zero"}, 2, "/dev/zero:1: line longer than 1 MiB"},
		{"--output is the --events file", []string{"run", "--events", good, "--output", good}, 2, "--output " + good + " is the --events file: refusing to overwrite an input"},
		{"--output is the --events file through a link", []string{"run", "--events", good, "--output", filepath.Join(dir, "link.jsonl")}, 2, "is the --events file"},
		{"--output is the --events file spelt otherwise", []string{"run", "--events", good, "--output", filepath.Join(dir, "sub", "..", "good.jsonl")}, 2, "is the --events file"},
		{"--log is the --config file", []string{"run", "--config", cfg, "--log", cfg}, 2, "--log " + cfg + " is the --config file"},
		{"--output and --log both stdout", []string{"run", "--output", "-", "--log", "-"}, 2, "both want stdout"},
		{"Long.MIN_VALUE timestamp fails the job", []string{"run", "--events", minTS, "--log", filepath.Join(dir, "min.log")}, 4,
			"java.lang.RuntimeException: Record has Long.MIN_VALUE timestamp (= no timestamp marker). Is the time characteristic set to 'ProcessingTime', or did you forget to call 'DataStream.assignTimestampsAndWatermarks(...)'?"},
		{"heartbeat timeout below the interval", []string{"run", "--set", "heartbeat.interval=10s", "--set", "heartbeat.timeout=5s"}, 2,
			"heartbeat.timeout 5 s < heartbeat.interval 10 s: The heartbeat timeout should be larger or equal than the heartbeat interval."},
		{"duplicate JSON fields", []string{"run", "--events", dupField}, 2, dupField + `:2: field "ts" appears twice`},
		{"invalid UTF-8 in a key", []string{"run", "--events", badUTF8}, 2, badUTF8 + ":2: invalid UTF-8 at byte 4 of the line"},
		{"a non-numeric aggregate field", []string{"run", "--events", badAgg, "--set", "job.window.aggregate=sum"}, 2, badAgg + `:2: field "amount" must be a number`},
		{"a JSON array", []string{"run", "--events", array}, 2, array + ":1: a JSON array: an events file is JSON lines"},
		{"a long garbage line", []string{"run", "--events", garbage}, 2, garbage + `:1: header has no column "key"`},
		{"a 10 MB line", []string{"run", "--events", longLine}, 2, longLine + ":1: line longer than 1 MiB"},
		{"a 100 kB value on the command line", []string{"run", "--set", "job.filter=" + strings.Repeat("z", 100_000)}, 2, "job.filter"},
		{"replay: the events file of the header", []string{"replay", missingEvents}, 2, missingEvents + ":1: events_file /nonexistent/ev.jsonl: no such file or directory"},
		{"replay: an action of the header", []string{"replay", badActionLog}, 2, badActionLog + `:1: actions: action "at=5s explode": unknown verb`},
		{"a directory as events", []string{"run", "--events", dir}, 2, dir + ": is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cliIn(t, dir, 60*time.Second, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %.500s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%.1000s", tt.want, r.stderr)
			}
			if len(r.stderr) > 6000 {
				t.Errorf("stderr has %d bytes: quoted input is not cut", len(r.stderr))
			}
			if r.wall > 20*time.Second {
				t.Errorf("took %v", r.wall)
			}
			if r.maxRSSKiB > 400<<10 {
				t.Errorf("peak memory %d MiB", r.maxRSSKiB>>10)
			}
			if tt.code == 2 && r.stdout != "" {
				t.Errorf("the run started: %d bytes on stdout", len(r.stdout))
			}
			for _, p := range inputs {
				if fileSum(t, p) != before[p] {
					t.Errorf("input %s changed", p)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error("a file named - was written")
	}
}
