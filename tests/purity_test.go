package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The purity rules of ARCHITECTURE.md and STYLE.md: the simulation core
// (sim/) is plain Go that never sees the actor runtime, and nothing in sim/,
// actors/ or cluster/ reads the wall clock, sleeps, uses a real ticker or the
// global random source.

const purityModule = "github.com/flinksim/flinksim"

// purityForbiddenDeps are the import paths (and everything below them) that
// no package under sim/ may depend on, directly or not.
var purityForbiddenDeps = []string{
	"github.com/anthdm/hollywood",
	purityModule + "/actors",
	purityModule + "/cluster",
	purityModule + "/cmd",
}

// purityForbidden reports whether importPath is one of purityForbiddenDeps or
// a package below one of them.
func purityForbidden(importPath string) bool {
	for _, f := range purityForbiddenDeps {
		if importPath == f || strings.HasPrefix(importPath, f+"/") {
			return true
		}
	}
	return false
}

// puritySimPackage reports whether importPath is sim or a package below it.
func puritySimPackage(importPath string) bool {
	return importPath == purityModule+"/sim" || strings.HasPrefix(importPath, purityModule+"/sim/")
}

func TestPurityForbiddenMatcher(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"github.com/anthdm/hollywood", true},
		{"github.com/anthdm/hollywood/actor", true},
		{"github.com/anthdm/hollywoodx", false},
		{"github.com/flinksim/flinksim/actors", true},
		{"github.com/flinksim/flinksim/actors/internal", true},
		{"github.com/flinksim/flinksim/actorsim", false},
		{"github.com/flinksim/flinksim/cluster", true},
		{"github.com/flinksim/flinksim/cluster/remote", true},
		{"github.com/flinksim/flinksim/cmd/flinksim", true},
		{"github.com/flinksim/flinksim/sim/exchange", false},
		{"github.com/flinksim/flinksim/messages", false},
		{"time", false},
	}
	for _, tt := range tests {
		if got := purityForbidden(tt.give); got != tt.want {
			t.Errorf("purityForbidden(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
	for _, tt := range []struct {
		give string
		want bool
	}{
		{"github.com/flinksim/flinksim/sim", true},
		{"github.com/flinksim/flinksim/sim/vt", true},
		{"github.com/flinksim/flinksim/simulator", false},
		{"github.com/flinksim/flinksim/cluster", false},
	} {
		if got := puritySimPackage(tt.give); got != tt.want {
			t.Errorf("puritySimPackage(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

// purityPackage is the part of `go list -json` output the test reads.
type purityPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// goList runs go list -json with args in the module and returns its
// packages by import path.
func goList(t *testing.T, args ...string) map[string]*purityPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	pkgs := map[string]*purityPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p purityPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// TestSimDoesNotDependOnActorRuntime lists every package under sim/ with its
// transitive dependencies and fails, naming the import that leads there, if
// one depends on hollywood, actors/ or cluster/.
func TestSimDoesNotDependOnActorRuntime(t *testing.T) {
	pkgs := goList(t, "-deps", "./sim/...")
	var sims []string
	for path := range pkgs {
		if puritySimPackage(path) {
			sims = append(sims, path)
		}
	}
	sort.Strings(sims)
	// Guard against a vacuous pass: the listing must hold the sim packages
	// and their dependencies.
	for _, want := range []string{purityModule + "/sim/vt", purityModule + "/sim/exchange", purityModule + "/messages"} {
		if _, ok := pkgs[want]; !ok {
			t.Fatalf("go list output lacks %s; sim packages seen: %v", want, sims)
		}
	}
	for _, path := range sims {
		p := pkgs[path]
		if p.Error != nil {
			t.Errorf("%s: %s", path, p.Error.Err)
		}
		for _, dep := range p.Deps {
			if !purityForbidden(dep) {
				continue
			}
			via := ""
			for _, imp := range p.Imports {
				if imp == dep {
					via = "imports it directly"
					break
				}
				if ip, ok := pkgs[imp]; ok && contains(ip.Deps, dep) {
					via = "through " + imp
					break
				}
			}
			t.Errorf("%s depends on %s (%s): sim/ must stay free of the actor runtime", path, dep, via)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// purityWallClock are the functions of package time that read or wait on the
// wall clock.
var purityWallClock = map[string]bool{
	"Now": true, "Sleep": true, "NewTicker": true, "After": true,
	"Tick": true, "NewTimer": true, "AfterFunc": true, "Since": true, "Until": true,
}

// purityRandV2Seeded are the names of math/rand/v2 that do not touch its
// global, randomly seeded source: constructors and types.
var purityRandV2Seeded = map[string]bool{
	"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true,
	"Rand": true, "Source": true, "PCG": true, "ChaCha8": true, "Zipf": true,
}

// purityTextPatterns is the textual check, used for a file that does not
// parse (someone is editing it): the strings of ARCHITECTURE.md's rule.
var purityTextPatterns = []string{"time.Now(", "time.Sleep(", "time.NewTicker(", "time.After(", "SendRepeat(", `"math/rand"`}

// purityViolations returns "file:line: what" for every use of the wall clock,
// a real ticker, SendRepeat, math/rand (v1) or math/rand/v2's global source,
// a go statement or an import of sync in the Go source src. Comments do not
// count.
func purityViolations(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return purityGrep(name, src)
	}
	var out []string
	at := func(pos token.Pos, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s", name, fset.Position(pos).Line, fmt.Sprintf(format, args...)))
	}
	timeName, randV2Name := "", ""
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := ""
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch path {
		case "sync", "sync/atomic":
			at(imp.Pos(), `imports %q: the simulation has no shared memory; order comes from the scheduler`, path)
		case "math/rand":
			at(imp.Pos(), `imports "math/rand" (v1 and its global source); use math/rand/v2 with rand.New(rand.NewPCG(seed, hash(actor)))`)
		case "time":
			timeName = "time"
			if local != "" {
				timeName = local
			}
			if local == "." {
				at(imp.Pos(), `dot-imports "time"`)
			}
		case "math/rand/v2":
			randV2Name = "rand"
			if local != "" {
				randV2Name = local
			}
			if local == "." {
				at(imp.Pos(), `dot-imports "math/rand/v2"`)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			at(g.Pos(), "go statement: goroutine timing must not reach the simulation; Hollywood and the scheduler own concurrency")
			return true
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if sel.Sel.Name == "SendRepeat" {
			at(sel.Sel.Pos(), "SendRepeat uses a real ticker")
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch {
		case timeName != "" && x.Name == timeName && purityWallClock[sel.Sel.Name]:
			at(sel.Pos(), "time.%s reads or waits on the wall clock; virtual time comes with each delivery", sel.Sel.Name)
		case randV2Name != "" && x.Name == randV2Name && !purityRandV2Seeded[sel.Sel.Name]:
			at(sel.Pos(), "rand.%s draws from math/rand/v2's global source; use the actor's seeded *rand.Rand", sel.Sel.Name)
		}
		return true
	})
	return out
}

// purityGrep is the textual fallback: every line holding one of
// purityTextPatterns outside a line comment.
func purityGrep(name string, src []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.Index(text, "//"); i >= 0 && !strings.Contains(text[:i], `"`) {
			text = text[:i]
		}
		for _, p := range purityTextPatterns {
			if strings.Contains(text, p) {
				out = append(out, fmt.Sprintf("%s:%d: %s (file does not parse; textual check)", name, line, p))
			}
		}
	}
	return out
}

func TestPurityViolationsFinder(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"clean", `package p
import (
	"time"
	"math/rand/v2"
)
// time.Now() in a comment is fine, and so is SendRepeat(.
var d = 3 * time.Second
var r = rand.New(rand.NewPCG(1, 2))
func f(x *rand.Rand) time.Duration { return time.Duration(x.IntN(3)) }
`, nil},
		{"wall clock", `package p
import "time"
func f() {
	_ = time.Now()
	time.Sleep(time.Second)
	_ = time.NewTicker(time.Second)
	<-time.After(1)
	now := time.Now
	_ = now
}
`, []string{
			"x.go:4: time.Now", "x.go:5: time.Sleep", "x.go:6: time.NewTicker", "x.go:7: time.After", "x.go:8: time.Now",
		}},
		{"aliased time", `package p
import clock "time"
var t0 = clock.Since(clock.Time{})
`, []string{"x.go:3: time.Since"}},
		{"global rand", `package p
import (
	"math/rand"
	r2 "math/rand/v2"
)
var a = rand.Intn(3)
var b = r2.IntN(3)
`, []string{`x.go:3: imports "math/rand"`, "x.go:7: rand.IntN draws"}},
		{"send repeat", `package p
func f(e interface{ SendRepeat(any, any, any) }) { e.SendRepeat(nil, nil, nil) }
`, []string{"x.go:2: SendRepeat"}}, // the call, not the method declaration
		{"goroutine and sync", "package p\nimport \"sync\"\nvar mu sync.Mutex\nfunc f() {\n\tgo f()\n}\n",
			[]string{`x.go:2: imports "sync": the simulation has no shared memory; order comes from the scheduler`,
				"x.go:5: go statement: goroutine timing must not reach the simulation; Hollywood and the scheduler own concurrency"}},
		{"does not parse", "package p\nfunc f( {\n\t_ = time.Now() // time.Sleep(\n", []string{"x.go:3: time.Now( (file does not parse"}},
	}
	for _, tt := range tests {
		got := purityViolations("x.go", []byte(tt.src))
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %d violations %q, want %d %q", tt.name, len(got), got, len(tt.want), tt.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tt.want[i]) {
				t.Errorf("%s: violation %d = %q, want prefix %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

// hostingConcurrency is the one file allowed goroutines and sync: the
// long-lived workers that run the actors' handlers (Hollywood v1.0.5 would
// start a fresh goroutine, with a fresh stack, per delivery) and the
// choice of a run's Ps and GC percent. It hands work to goroutines; it
// holds no simulation state and orders nothing: the scheduler's gate (one Deliver per actor per step, the next only after its
// Done) and the scheduler's own serial mailbox do. Only the two concurrency
// rules are waived there, not the clock or the random source.
const hostingConcurrency = "actors/workers.go:"

func concurrencyExempt(violation string) bool {
	return strings.HasPrefix(violation, hostingConcurrency) &&
		(strings.Contains(violation, `imports "sync"`) || strings.Contains(violation, "go statement"))
}

// purityEdges are the library packages under cluster/ that live in wall
// time, outside the simulation: the remote transport (joins, watchdog,
// dial timeouts between processes), the UI session (pacing a run to the
// wall clock), the terminal's view (redrawing its status line) and the
// fault swarm's campaign (a wall limit per seed, seeds run in parallel). They import the simulation core (sim/,
// actors/, the cluster package itself), so the core cannot import them (Go
// refuses the circle), and what they do reaches a run only as a logged user
// action.
var purityEdges = []string{"cluster/remote", "cluster/session", "cluster/console", "cluster/campaign"}

// TestNoWallClock scans the non-test Go files of sim/, actors/ and cluster/
// (but its wall-time edges, purityEdges) and fails naming file:line for
// every use of the wall clock, a real ticker, SendRepeat, math/rand (v1) or
// math/rand/v2's global source (ARCHITECTURE.md: no wall clock in the
// simulation).
func TestNoWallClock(t *testing.T) {
	files := 0
	for _, dir := range []string{"sim", "actors", "cluster"} {
		root := filepath.Join("..", dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && path != root) {
					return filepath.SkipDir
				}
				if rel, _ := filepath.Rel("..", path); slices.Contains(purityEdges, filepath.ToSlash(rel)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			rel, _ := filepath.Rel("..", path)
			for _, v := range purityViolations(filepath.ToSlash(rel), src) {
				if concurrencyExempt(v) {
					continue
				}
				t.Error(v)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", root, err)
		}
	}
	if files < 10 {
		t.Fatalf("scanned only %d files under sim/, actors/ and cluster/: wrong directory?", files)
	}
}
