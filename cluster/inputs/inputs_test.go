package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Settings: the file, then each --set over it; what the simulator does not
// model is listed once each in the order given and changes nothing; every
// key given a value other than the default, or named with --set, is
// explicit; what Flink derives is derived, and a refusal names the flag.
func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "config.yaml", "parallelism.default: 3\nrest.port: 8082\ntaskmanager.numberOfTaskSlots: 1\n")
	s, err := LoadSettings(file, []string{"parallelism.default = 4", "rest.port=1", "high-availability.type=zookeeper", "sim.seed=1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Config.Parallelism != 4 {
		t.Errorf("parallelism %d, want --set's 4 over the file's 3", s.Config.Parallelism)
	}
	if got := strings.Join(s.NotSimulated, ","); got != "rest.port,high-availability.type" {
		t.Errorf("not simulated %q", got)
	}
	for key, want := range map[string]bool{"parallelism.default": true, "sim.seed": true, "taskmanager.numberOfTaskSlots": false, "rest.port": false} {
		if s.Explicit[key] != want {
			t.Errorf("explicit[%s] = %v, want %v", key, s.Explicit[key], want)
		}
	}
	for _, tt := range []struct {
		file string
		sets []string
		want string
	}{
		{"", []string{"parallelism.default"}, `--set "parallelism.default": expected key=value`},
		{"", []string{"parallelism.default=x"}, "--set "},
		{filepath.Join(dir, "missing.yaml"), nil, "--config "},
		{"", []string{"parallelism.default=300", "pipeline.max-parallelism=128"}, "Maximum parallelism must not be smaller than parallelism"},
	} {
		if _, err := LoadSettings(tt.file, tt.sets); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadSettings(%q, %q) = %v, want an error with %q", tt.file, tt.sets, err, tt.want)
		}
	}
}

// Actions from flags and a file come back sorted by time; the check runs
// on every one, its refusal at the flag or at the file's line.
func TestParseActions(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "actions.txt", "# a comment\nat=5s trigger-checkpoint\n\nat=1s kill-taskmanager tm-2\n")
	as, err := ParseActions([]string{"at=3s trigger-savepoint"}, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, a.String())
	}
	if want := "at=1s kill-taskmanager tm-2|at=3s trigger-savepoint|at=5s trigger-checkpoint"; strings.Join(got, "|") != want {
		t.Errorf("actions %q, want %q", strings.Join(got, "|"), want)
	}
	check := func(a action.Action) error {
		if a.Verb == action.KillTaskManager {
			return errors.New("no kills here")
		}
		return nil
	}
	if _, err := ParseActions([]string{"at=1s kill-taskmanager tm-9"}, "", check); err == nil || err.Error() != "--action: no kills here" {
		t.Errorf("a refused kill: %v", err)
	}
	// the settings' check: an event time Flink's windows cannot hold
	cfg := config.Default()
	if _, err := ParseActions([]string{"at=1s send-event key=k ts=-9223372036854775808"}, "", func(a action.Action) error { return cluster.CheckAction(cfg, a) }); err == nil || !strings.HasPrefix(err.Error(), "--action: ") {
		t.Errorf("a record at Long.MIN_VALUE: %v", err)
	}
	bad := write(t, dir, "bad.txt", "at=1s trigger-checkpoint\nat=2s kill-taskmanager tm-9\n")
	if _, err := ParseActions(nil, bad, check); err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("the refusal does not name the file's line: %v", err)
	}
	if _, err := ParseActions([]string{"kill-taskmanager tm-1"}, "", nil); err == nil || !strings.Contains(err.Error(), "at=DURATION") {
		t.Errorf("an action without a time: %v", err)
	}
}

// An events file gives its records with the file's sha256; an empty one, or
// one without the key field the settings read, is refused naming where the
// path came from.
func TestReadEvents(t *testing.T) {
	dir := t.TempDir()
	text := `{"key":"user-1","ts":1000}` + "\n" + `{"key":"user-2","ts":2000}` + "\n"
	path := write(t, dir, "events.jsonl", text)
	recs, sum, err := ReadEvents("--events ", path, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256([]byte(text))
	if len(recs) != 2 || recs[1].Key != "user-2" || recs[1].Timestamp != 2000 || sum != hex.EncodeToString(want[:]) {
		t.Errorf("records %+v, sum %s", recs, sum)
	}
	if _, _, err := ReadEvents("LOG:1: events_file ", write(t, dir, "empty.jsonl", ""), config.Default()); err == nil || !strings.HasPrefix(err.Error(), "LOG:1: events_file ") {
		t.Errorf("an empty file: %v", err)
	}
	if _, _, err := ReadEvents("--events ", write(t, dir, "nokey.jsonl", `{"ts":1000}`+"\n"), config.Default()); err == nil || !strings.HasPrefix(err.Error(), "--events ") {
		t.Errorf("a record without its key: %v", err)
	}
}

// No output may be an input or the other output: the same file by identity
// (a link too), or the same path when it does not exist yet; a directory is
// no output; stdout and unset flags are not files.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	events := write(t, dir, "events.jsonl", "x\n")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(events, link); err != nil {
		t.Fatal(err)
	}
	in := []File{{"--events", events}, {"--config", ""}}
	for _, tt := range []struct {
		out  []File
		want string
	}{
		{[]File{{"--output", filepath.Join(dir, "out.jsonl")}, {"--log", "-"}}, ""},
		{[]File{{"--output", link}}, "--output " + link + " is the --events file: refusing to overwrite an input"},
		{[]File{{"--output", filepath.Join(dir, "new")}, {"--log", filepath.Join(dir, ".", "new")}}, "--output and --log name the same file"},
		{[]File{{"--log", dir}}, "--log " + dir + ": is a directory"},
		{[]File{{"--output", "-"}, {"--log", "-"}}, ""},
	} {
		err := CheckOutputs(in, tt.out)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckOutputs(%v) = %v, want %q", tt.out, err, tt.want)
		}
	}
}

// A recorded log gives its header and its live actions (action events, at
// their lines); a file that is no JSON log header, or of another format,
// is refused at its line 1.
func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	s, err := cluster.NewPlainSession(config.Default(), cluster.Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	s.RunUntil(2 * 1_000_000)
	if _, err := s.Act("trigger-checkpoint"); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(3 * 1_000_000)
	s.Interrupt()
	s.Finish()
	path := write(t, dir, "run.log", log.String())
	data, h, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Seed != config.Default().Seed || h.Settings["parallelism.default"] != "2" || len(data) != log.Len() {
		t.Errorf("header seed %d, parallelism %q, %d bytes of %d", h.Seed, h.Settings["parallelism.default"], len(data), log.Len())
	}
	live, err := LiveActions(path, data)
	if err != nil || len(live) != 1 || live[0].Verb != action.TriggerCheckpoint || live[0].At != 2*time.Second {
		t.Errorf("live actions %v, %v", live, err)
	}
	for text, want := range map[string]string{
		"not json\n": ":1: not a flinksim JSON event log header",
		`{"event":"header","format":"flinksim-log/0"}` + "\n": `:1: log format "flinksim-log/0", this flinksim reads`,
	} {
		if _, _, err := ReadLog(write(t, dir, "bad.log", text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadLog(%q) = %v, want %q", text, err, want)
		}
	}
}
