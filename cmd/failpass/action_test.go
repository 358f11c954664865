package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// The GitHub Action (action.yml at the repository root) is tested offline:
// testdata/action/*.txtar build a repository and a pull request in it,
// write a fake event payload, set the GITHUB_* environment, and run
// `ghaction`, which reads action.yml and runs its steps the way a runner
// does: inputs and their defaults (including `${{ github.event... }}` from
// the payload), each step's `if`, its env, GITHUB_OUTPUT, GITHUB_PATH, and
// the uses: steps it can stand in for. So the test runs what the action
// runs: the real `go install` of cmd/failpass from this checkout, then the
// installed binary.

// actionRoot is the repository root, where action.yml lives.
var actionRoot = func() string {
	abs, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return abs
}()

// actionScript is the one script every run: step of the action calls.
const actionScript = "deploy/action/gate.sh"

// runLine is the only shape a run: step may have: the script and a phase,
// with no ${{ }} expression spliced into shell text.
var runLine = regexp.MustCompile(`^sh "\$GITHUB_ACTION_PATH/` + regexp.QuoteMeta(actionScript) + `" ([a-z]+)$`)

type actionFile struct {
	Name        string                  `yaml:"name"`
	Description string                  `yaml:"description"`
	Author      string                  `yaml:"author"`
	Branding    map[string]string       `yaml:"branding"`
	Inputs      map[string]actionInput  `yaml:"inputs"`
	Outputs     map[string]actionOutput `yaml:"outputs"`
	Runs        struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionInput struct {
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	Default     string `yaml:"default"`
}

type actionOutput struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	With  map[string]string `yaml:"with"`
	Env   map[string]string `yaml:"env"`
}

// readAction parses action.yml strictly (an unknown key is a step the
// emulator would not understand) and checks every step's shape.
func readAction() (*actionFile, error) {
	b, err := os.ReadFile(filepath.Join(actionRoot, "action.yml"))
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var a actionFile
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		return nil, fmt.Errorf("action.yml: runs.using %q, want composite", a.Runs.Using)
	}
	// Reading the script also tells go test's cache that the result
	// depends on it (the runner's sh reads it in another process).
	script, err := os.ReadFile(filepath.Join(actionRoot, actionScript))
	if err != nil {
		return nil, err
	}
	for i, s := range a.Runs.Steps {
		if m := runLine.FindStringSubmatch(s.Run); m != nil && !bytes.Contains(script, []byte("\n"+m[1]+") phase_")) {
			return nil, fmt.Errorf("action.yml: step %d runs phase %q, which %s does not have", i, m[1], actionScript)
		}
		switch {
		case s.Run != "" && s.Uses != "":
			return nil, fmt.Errorf("action.yml: step %d has both run and uses", i)
		case s.Run != "":
			if !runLine.MatchString(s.Run) {
				return nil, fmt.Errorf("action.yml: step %d runs %q; every run step must be `sh \"$GITHUB_ACTION_PATH/%s\" PHASE`", i, s.Run, actionScript)
			}
			if s.Shell != "sh" {
				return nil, fmt.Errorf("action.yml: step %d: shell %q, want sh", i, s.Shell)
			}
		case !strings.HasPrefix(s.Uses, "actions/setup-go@") && !strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			return nil, fmt.Errorf("action.yml: step %d uses %q, which the offline test cannot stand in for", i, s.Uses)
		}
	}
	return &a, nil
}

// phasesRun records which phases of the script the scripts ran, so the
// test fails when a step of action.yml is never exercised.
var phasesRun = struct {
	sync.Mutex
	m map[string]int
}{m: map[string]int{}}

// hostGo is the Go environment of the machine running the tests, so the
// action's `go install` builds offline from the module and build caches.
var hostGo []string

func TestAction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the action end to end, a gate per case: the full suite runs it")
	}
	a, err := readAction()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no go command to install failpass with: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 2 {
		t.Fatalf("go env: %q", out)
	}
	hostGo = []string{"GOCACHE=" + vals[0], "GOMODCACHE=" + vals[1], "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS="}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		for _, s := range a.Runs.Steps {
			if m := runLine.FindStringSubmatch(s.Run); m != nil && phasesRun.m[m[1]] == 0 {
				t.Errorf("action.yml step %q runs phase %q, which no testdata/action script ran", s.ID, m[1])
			}
		}
	})
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/action",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ACTION_ROOT", actionRoot)
			return setupScript(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkrepo":    cmdMkrepo,
			"snapshot":  cmdSnapshot,
			"unchanged": cmdUnchanged,
			"noleft":    cmdNoLeft,
			"ghaction":  cmdGHAction,
		},
	})
}

// ghaction [INPUTS.yml]: run action.yml's steps as a runner would, with
// the workflow's `with:` inputs from INPUTS.yml (a map of strings) and
// GITHUB_EVENT_PATH, GITHUB_EVENT_NAME, GITHUB_WORKSPACE,
// GITHUB_STEP_SUMMARY and RUNNER_TEMP from the script's environment.
// Each step prints `== step ID: exit N` and its output; at the end the
// action's outputs print as `== output NAME=VALUE`. The command fails
// when a step failed, as the job would.
func cmdGHAction(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) > 1 {
		ts.Fatalf("usage: ghaction [INPUTS.yml]")
	}
	a, err := readAction()
	if err != nil {
		ts.Fatalf("%v", err)
	}
	with := map[string]string{}
	if len(args) == 1 {
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		ts.Check(dec.Decode(&with))
	}
	r := &runner{ts: ts, a: a, steps: map[string]map[string]string{}, inputs: map[string]string{}}
	r.loadEvent()
	for name := range with {
		if _, ok := a.Inputs[name]; !ok {
			ts.Fatalf("input %q is not declared in action.yml", name)
		}
	}
	for name, in := range a.Inputs {
		v, ok := with[name]
		if !ok {
			v = r.expand(in.Default)
		}
		if in.Required && v == "" {
			ts.Fatalf("required input %q not given", name)
		}
		r.inputs[name] = v
	}
	failed := false
	for i, s := range a.Runs.Steps {
		id := s.ID
		if id == "" {
			id = fmt.Sprintf("#%d", i)
		}
		if !r.condition(s.If, failed) {
			fmt.Fprintf(ts.Stdout(), "== step %s: skipped\n", id)
			continue
		}
		var ok bool
		if s.Uses != "" {
			ok = r.uses(id, s)
		} else {
			ok = r.run(id, s)
		}
		failed = failed || !ok
	}
	names := make([]string, 0, len(a.Outputs))
	for name := range a.Outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(ts.Stdout(), "== output %s=%s\n", name, r.expand(a.Outputs[name].Value))
	}
	if failed != neg {
		if failed {
			ts.Fatalf("a step of the action failed")
		}
		ts.Fatalf("every step of the action succeeded")
	}
}

type runner struct {
	ts     *testscript.TestScript
	a      *actionFile
	event  map[string]any
	inputs map[string]string
	steps  map[string]map[string]string // step id -> outputs
	path   []string                     // GITHUB_PATH additions, newest first
}

func (r *runner) loadEvent() {
	r.event = map[string]any{}
	if p := r.ts.Getenv("GITHUB_EVENT_PATH"); p != "" {
		b, err := os.ReadFile(p)
		r.ts.Check(err)
		r.ts.Check(json.Unmarshal(b, &r.event))
	}
}

var exprRe = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expand replaces each ${{ expr }} in s; expr is a context path the
// emulator knows (inputs, github.action_path, github.event, steps).
func (r *runner) expand(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		return r.value(exprRe.FindStringSubmatch(m)[1])
	})
}

func (r *runner) value(path string) string {
	parts := strings.Split(path, ".")
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		v, ok := r.inputs[parts[1]]
		if !ok {
			r.ts.Fatalf("action.yml reads undeclared input %q", parts[1])
		}
		return v
	case path == "github.action_path":
		return actionRoot
	case len(parts) > 2 && parts[0] == "github" && parts[1] == "event":
		var cur any = r.event
		for _, p := range parts[2:] {
			m, ok := cur.(map[string]any)
			if !ok {
				return ""
			}
			cur = m[p]
		}
		switch v := cur.(type) {
		case nil:
			return ""
		case string:
			return v
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
		return r.steps[parts[1]][parts[3]]
	}
	r.ts.Fatalf("action.yml uses the expression %q, which the offline runner does not know", path)
	return ""
}

// condition evaluates a step's `if`: terms joined by &&, each always(),
// or a context path compared (== or !=) with a quoted string. As on a
// runner, a condition without always() also needs every earlier step to
// have succeeded.
func (r *runner) condition(cond string, failed bool) bool {
	if cond == "" {
		return !failed
	}
	ok, always := true, false
	for _, term := range strings.Split(cond, "&&") {
		term = strings.TrimSpace(term)
		if term == "always()" {
			always = true
			continue
		}
		op := " != "
		lhs, rhs, found := strings.Cut(term, op)
		if !found {
			op = " == "
			lhs, rhs, found = strings.Cut(term, op)
		}
		rhs = strings.TrimSpace(rhs)
		if !found || len(rhs) < 2 || rhs[0] != '\'' || rhs[len(rhs)-1] != '\'' {
			r.ts.Fatalf("action.yml: condition %q is beyond the offline runner", cond)
		}
		eq := r.value(strings.TrimSpace(lhs)) == rhs[1:len(rhs)-1]
		ok = ok && (eq == (op == " == "))
	}
	return ok && (always || !failed)
}

// baseEnv is what every step sees: the script's identity and GITHUB_*
// variables, the host's Go caches, and PATH with GITHUB_PATH additions.
func (r *runner) baseEnv() []string {
	env := append([]string{}, scriptEnv(r.ts)...)
	for _, k := range []string{"GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "RUNNER_TEMP"} {
		env = append(env, k+"="+r.ts.Getenv(k))
	}
	env = append(env, "GITHUB_ACTIONS=true", "CI=true", "GITHUB_ACTION_PATH="+actionRoot)
	env = append(env, hostGo...)
	path := strings.Join(append(append([]string{}, r.path...), r.ts.Getenv("PATH")), string(os.PathListSeparator))
	return append(env, "PATH="+path)
}

func (r *runner) run(id string, s actionStep) bool {
	ts := r.ts
	temp := ts.Getenv("RUNNER_TEMP")
	ts.Check(os.MkdirAll(temp, 0o755))
	files := map[string]string{}
	for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_PATH"} {
		f, err := os.CreateTemp(temp, strings.ToLower(k)+"-")
		ts.Check(err)
		f.Close()
		files[k] = f.Name()
		defer os.Remove(f.Name())
	}
	script, err := os.CreateTemp(temp, "step-*.sh")
	ts.Check(err)
	_, err = script.WriteString(s.Run + "\n")
	ts.Check(err)
	script.Close()
	defer os.Remove(script.Name())

	env := r.baseEnv()
	env = append(env, "GITHUB_OUTPUT="+files["GITHUB_OUTPUT"], "GITHUB_PATH="+files["GITHUB_PATH"])
	for k, v := range s.Env {
		env = append(env, k+"="+r.expand(v))
	}
	cmd := exec.Command("sh", "-e", script.Name())
	cmd.Dir = ts.Getenv("GITHUB_WORKSPACE")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	fmt.Fprintf(ts.Stdout(), "== step %s: %s\n", id, s.Run)
	err = cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("step %s: %v", id, err)
		}
		code = ee.ExitCode()
	}
	fmt.Fprintf(ts.Stdout(), "== step %s: exit %d\n", id, code)
	phasesRun.Lock()
	phasesRun.m[runLine.FindStringSubmatch(s.Run)[1]]++
	phasesRun.Unlock()

	r.steps[id] = readOutputs(ts, files["GITHUB_OUTPUT"])
	b, err := os.ReadFile(files["GITHUB_PATH"])
	ts.Check(err)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			r.path = append([]string{l}, r.path...)
		}
	}
	return code == 0
}

// readOutputs reads a GITHUB_OUTPUT file: NAME=VALUE lines and
// NAME<<DELIMITER heredocs.
func readOutputs(ts *testscript.TestScript, file string) map[string]string {
	f, err := os.Open(file)
	ts.Check(err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if name, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(l, "=")
		if !ok {
			ts.Fatalf("GITHUB_OUTPUT line %q is neither NAME=VALUE nor NAME<<DELIMITER", l)
		}
		out[name] = val
	}
	return out
}

// uses stands in for the actions the action calls: setup-go is never
// needed here (Go is on PATH, so the go step says found=true and the
// condition skips it); upload-artifact lists what it would upload.
func (r *runner) uses(id string, s actionStep) bool {
	ts := r.ts
	switch {
	case strings.HasPrefix(s.Uses, "actions/setup-go@"):
		ts.Fatalf("step %s: setup-go would run, but the go step found Go on PATH", id)
	case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
		dir := r.expand(s.With["path"])
		var files []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, filepath.Base(p))
			}
			return nil
		})
		fmt.Fprintf(ts.Stdout(), "== step %s: upload-artifact %s: %s\n", id, r.expand(s.With["name"]), strings.Join(files, " "))
		return len(files) > 0 || r.expand(s.With["if-no-files-found"]) != "error"
	}
	return false
}
