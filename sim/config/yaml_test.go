package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadYAML(t *testing.T) {
	tests := []struct {
		name  string
		give  string
		check func(t *testing.T, c Config)
	}{
		{"empty file", "", func(t *testing.T, c Config) {
			if c != Default() {
				t.Error("an empty file changed the config")
			}
		}},
		{"only comments", "# nothing\n   # here\n", func(t *testing.T, c Config) {
			if c != Default() {
				t.Error("a comment-only file changed the config")
			}
		}},
		{"explicit null document", "~\n", func(t *testing.T, c Config) {
			if c != Default() {
				t.Error("a null document changed the config")
			}
		}},
		{"flat keys", `
parallelism.default: 4
taskmanager.numberOfTaskSlots: 2   # two per TM
pipeline.auto-watermark-interval: 1 s
taskmanager.memory.managed.size: 1g
pipeline.operator-chaining.enabled: false
job.window.offset: -8 h
sim.source.late-fraction: 0.5
`, func(t *testing.T, c Config) {
			if c.Parallelism != 4 || c.NumberOfTaskSlots != 2 || c.AutoWatermarkInterval != time.Second ||
				c.ManagedMemoryBytes != 1<<30 || c.OperatorChaining || c.WindowOffset != -8*time.Hour || c.SourceLateFraction != 0.5 {
				t.Errorf("got %+v", c)
			}
		}},
		{"nested keys", `
parallelism:
  default: 3
taskmanager:
  numberOfTaskSlots: 4
  memory:
    network:
      max: 256 mb
    task.heap.size: 512m
pipeline:
  operator-chaining:
    enabled: true
job:
  window: {type: session, gap: 30 s}
  source:
    topic: "clicks"
`, func(t *testing.T, c Config) {
			if c.Parallelism != 3 || c.NumberOfTaskSlots != 4 || c.NetworkMemoryBytes != 256<<20 ||
				c.TaskHeapBytes != 512<<20 || !c.OperatorChaining || c.WindowType != WindowSession ||
				c.WindowGap != 30*time.Second || c.SourceTopic != "clicks" {
				t.Errorf("got %+v", c)
			}
		}},
		{"YAML 1.2 Core booleans", `
pipeline.operator-chaining.enabled: FALSE
job.window.side-output-late-data: True
job.sink.topic: True
`, func(t *testing.T, c Config) {
			if c.OperatorChaining || !c.SideOutputLateData || c.SinkTopic != "true" {
				t.Errorf("chaining %v, side output %v, topic %q", c.OperatorChaining, c.SideOutputLateData, c.SinkTopic)
			}
		}},
		{"YAML 1.2 Core octal and hexadecimal integers", `
parallelism.default: 0x3
sim.taskmanagers: 0o4
job.source.topic: 0x10
job.sink.topic: "0x10"
`, func(t *testing.T, c Config) {
			if c.Parallelism != 3 || c.TaskManagers != 4 || c.SourceTopic != "16" || c.SinkTopic != "0x10" {
				t.Errorf("parallelism %d, taskmanagers %d, topics %q %q", c.Parallelism, c.TaskManagers, c.SourceTopic, c.SinkTopic)
			}
		}},
		{"yes is text in YAML 1.2", `job.source.topic: yes`, func(t *testing.T, c Config) {
			if c.SourceTopic != "yes" {
				t.Errorf("topic = %q", c.SourceTopic)
			}
		}},
		{"quoted yes stays text", `job.source.topic: "yes"`, func(t *testing.T, c Config) {
			if c.SourceTopic != "yes" {
				t.Errorf("topic = %q", c.SourceTopic)
			}
		}},
		{"anchors and aliases", `
a: &interval 2 s
pipeline.auto-watermark-interval: *interval
`, nil}, // "a" is unknown: checked in the error table below
		{"block string value", "job.filter: >-\n  amount > 100\n", func(t *testing.T, c Config) {
			if c.Filter != "amount > 100" {
				t.Errorf("filter = %q", c.Filter)
			}
		}},
	}
	for _, tt := range tests {
		if tt.check == nil {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			if _, err := c.LoadYAML(writeFile(t, tt.give)); err != nil {
				t.Fatalf("LoadYAML: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadYAMLErrors(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []string // one per error, each prefixed by FILE: in the output
	}{
		{"unknown key with suggestion", "parallelism.default: 2\nparalelism.default: 3\n",
			[]string{`:2: unknown setting "paralelism.default"; did you mean "parallelism.default"?`}},
		{"unknown nested key", "parallelism:\n  default: 2\n  defualt: 3\n",
			[]string{`:3: unknown setting "parallelism.defualt"; did you mean "parallelism.default"?`}},
		{"bad value names the value's line", "taskmanager:\n  numberOfTaskSlots:\n    0\n",
			[]string{":3: Invalid configuration value for taskmanager.numberOfTaskSlots : 0 - Number of task slots must be at least one. (allowed: -1 or 1..)"}},
		{"every error is reported in file order", "sim.taskmanagers: 0\nsim.seed: 1\njob.window.size: 1 fortnight\n",
			[]string{":1: sim.taskmanagers: 0 is out of range (allowed: 1..64)", ":3: Could not parse value '1 fortnight' for key 'job.window.size'."}},
		{"syntax error", "parallelism.default: 2\n  bad: [\n",
			[]string{":2: "}},
		{"tab indentation", "parallelism:\n\tdefault: 2\n",
			[]string{":2: found character that cannot start any token"}},
		{"duplicate key", "sim.seed: 1\nsim.seed: 2\n",
			[]string{":2: found duplicate key sim.seed (first at line 1)"}},
		{"duplicate nested key", "sim:\n  seed: 1\n  seed: 2\n",
			[]string{":3: found duplicate key seed (first at line 2)"}},
		{"missing value", "parallelism.default:\nsim.seed: 3\n",
			[]string{":1: parallelism.default: a value is missing"}},
		{"list value", "job.source.topic: [a, b]\n",
			[]string{":1: job.source.topic: expected a single value, not a list"}},
		{"not a mapping", "- parallelism.default: 2\n",
			[]string{":1: expected a mapping of setting keys to values"}},
		{"alias to an unknown key", "a: &interval 2 s\npipeline.auto-watermark-interval: *interval\n",
			[]string{`:1: unknown setting "a"`}},
		{"complex key", "? [a, b]\n: 1\n", []string{":1: a setting key must be plain text"}},
		{"a byte order mark on line 2", "sim.seed: 1\n\xef\xbb\xbfparallelism.default: 2\n",
			[]string{":2: a UTF-8 byte order mark (bytes EF BB BF, U+FEFF) starts this line"}},
		{"flat and nested forms of one key", "parallelism.default: 3\nsim.seed: 1\nparallelism:\n  default: 5\n",
			[]string{":4: parallelism.default is given twice, at line 1 and here (a flat and a nested form of one key): a settings file names each key once"}},
		{"nested, then flat", "sim:\n  seed: 1\nsim.seed: 2\n",
			[]string{":3: sim.seed is given twice, at line 2 and here"}},
		{"two nested forms of a not-simulated key", "rest.port: 1\nrest:\n  port: 2\n",
			[]string{":3: rest.port is given twice, at line 1 and here"}},
		{"yes for a boolean option (YAML 1.2: text)", "pipeline.operator-chaining.enabled: yes\n",
			[]string{":1: Could not parse value 'yes' for key 'pipeline.operator-chaining.enabled'. Unrecognized option for boolean: yes. Expected either true or false(case insensitive)"}},
		{"on for a nested boolean option", "state:\n  backend:\n    incremental: on\n",
			[]string{":3: Could not parse value 'on' for key 'state.backend.incremental'. Unrecognized option for boolean: on."}},
		{"Off for a boolean option", "sim.seed: 1\njob.window.side-output-late-data: Off\n",
			[]string{":2: Could not parse value 'Off' for key 'job.window.side-output-late-data'."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.give)
			c := Default()
			_, err := c.LoadYAML(path)
			if err == nil {
				t.Fatalf("LoadYAML = nil, want %q", tt.want)
			}
			if c != Default() {
				t.Error("a failed LoadYAML changed the config")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("LoadYAML =\n%v\nwant %d errors", err, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], path+w) {
					t.Errorf("error %d = %q, want prefix %q", i, lines[i], path+w)
				}
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != path || fe.Line == 0 {
				t.Errorf("want a *FileError with a line, got %#v", err)
			}
		})
	}
}

func TestLoadYAMLUnwrap(t *testing.T) {
	c := Default()
	_, err := c.LoadYAML(writeFile(t, "sim.taskmanagers: 99\nsim.tasmanagers: 2\n"))
	var ve *ValueError
	var uk *UnknownKeyError
	if !errors.As(err, &ve) || ve.Key != "sim.taskmanagers" {
		t.Errorf("want a *ValueError for sim.taskmanagers in %v", err)
	}
	if !errors.As(err, &uk) || uk.Suggestion != "sim.taskmanagers" {
		t.Errorf("want an *UnknownKeyError suggesting sim.taskmanagers in %v", err)
	}
}

func TestLoadYAMLMissingFile(t *testing.T) {
	c := Default()
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := c.LoadYAML(path)
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != path || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadYAML(missing) = %v", err)
	}
	if !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("error %q must start with the file name", err)
	}
}

func FuzzLoadYAML(f *testing.F) {
	for _, s := range []string{"parallelism.default: 2\n", "a:\n  b: c\n", "- x\n", "k: [\n", "sim: {seed: 3}\n", "? [a]\n: b\n",
		// hostile inputs (issue 12): aliases into themselves, alias floods,
		// a second document, invalid UTF-8, a BOM with CRLF, Flink keys
		"a: &a\n  b: *a\n", "x: &x\n  y:\n    z: *x\n", "&a a: *a\n", "a: &a [*a]\n",
		"a: &a {x: 1, y: 1}\nb: &b {p: *a, q: *a, r: *a}\nc: {p: *b, q: *b, r: *b}\n",
		"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
		"parallelism.default: 2\n---\nsim.seed: 3\n", "sim.se\xffed: 3\n", "\xef\xbb\xbfsim:\r\n  seed: 7\r\n",
		"rest.port: 8081\npipeline.jars: [a, b]\ntaskmanager:\n  memory:\n    process:\n      size: 1728m\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return // the file limit is tested elsewhere
		}
		c := Default()
		if _, err := c.loadYAML("fuzz.yaml", data); err != nil {
			if c != Default() {
				t.Fatal("a failed load changed the config")
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
		}
	})
}
