package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/swarm"
)

// The swarm's honesty: a build whose exactly-once sink skips the abort of
// what a failed attempt left open (-tags flinksim_broken_abort) makes the
// swarm report an exactly-once failure within 200 seeds, naming the
// invariant and a command that reproduces it; the reproducing command,
// run on that build, does fail, and on a correct build the same seed passes.
func TestSwarmCatchesBrokenExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broken simulator and runs the swarm on it")
	}
	if kafka.BrokenBuild != "" {
		t.Skip("this is the broken build")
	}
	bin := filepath.Join(t.TempDir(), "flinksim-broken")
	build := exec.Command("go", "build", "-tags", "flinksim_broken_abort", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "swarm", "--from", "1", "--seeds", "200", "--parallel", "2", "--max-failures", "1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	out := stdout.String()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != swarm.ClassSafety.ExitCode() {
		t.Fatalf("exit %v, want %d (safety)\n%s", err, swarm.ClassSafety.ExitCode(), out)
	}
	m := regexp.MustCompile(`FAIL seed=(\d+) class=safety invariant=` + swarm.InvExactlyOnce).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "reproduce with: go run -tags flinksim_broken_abort ./cmd/flinksim run ") {
		t.Fatalf("no exactly-once failure with a reproducing command:\n%s", out)
	}
	t.Logf("the broken build failed at seed %s", m[1])
}

// The swarm's honesty about fencing: a build whose JobMaster and
// CheckpointCoordinator take what a zombie attempt sends them (-tags
// flinksim_nofence: a TaskManager that stalled past its heartbeat timeout
// wakes and reports its old tasks FAILED) makes the swarm report
// no_fenced_attempt within 200 seeds, with a reproducing command for that
// build; on a correct build the same seed passes.
func TestSwarmCatchesUnfencedZombie(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broken simulator and runs the swarm on it")
	}
	if !jobgraph.FenceStaleAttempts || kafka.BrokenBuild != "" {
		t.Skip("this is a broken build")
	}
	bin := filepath.Join(t.TempDir(), "flinksim-nofence")
	build := exec.Command("go", "build", "-tags", "flinksim_nofence", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "swarm", "--from", "1", "--seeds", "200", "--parallel", "2", "--max-failures", "1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	out := stdout.String()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != swarm.ClassSafety.ExitCode() {
		t.Fatalf("exit %v, want %d (safety)\n%s", err, swarm.ClassSafety.ExitCode(), out)
	}
	m := regexp.MustCompile(`FAIL seed=(\d+) class=safety invariant=` + swarm.InvNoFenced).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "reproduce with: go run -tags flinksim_nofence ./cmd/flinksim run ") {
		t.Fatalf("no no_fenced_attempt failure with a reproducing command:\n%s", out)
	}
	good := exec.Command("go", "run", ".", "swarm", "--seed", m[1])
	if out, err := good.CombinedOutput(); err != nil || !strings.Contains(string(out), "| ok") {
		t.Fatalf("seed %s on the correct build: %v\n%s", m[1], err, out)
	}
	t.Logf("the unfenced build failed at seed %s", m[1])
}
