package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/shellquote"
)

// The prebuild: a candidate's packages compiled once.
//
// Every patched run of a candidate starts on a cache layer of its own
// (afresh): a layer an earlier run wrote would tell a later run from
// the first, and the canary from the runs it guards. So each of them
// compiled, vetted and linked the patched packages again, and a Go gate
// on a real package cost two to four times its tests.
//
// The prebuild compiles them once, before the first patched run, into a
// layer that every patched run then reads beneath its own, and none can
// write (sandbox.CandidateCache.Over). It runs each patched command's
// `go test` with `-exec` naming true(1): the go command compiles, vets
// and links what the run will, and no test binary runs. Nothing but the
// go toolchain (and sh(1), which starts the builds together) runs in the
// prebuild, so what it writes is what the toolchain makes of the
// candidate's tree, and no candidate code chooses it. It builds the tree
// twice, with the canary's decoy and with the canary in the oracle test
// (at once where it can: prebuildRuns), so every patched run, the
// canary's included and whatever its place, finds the same layer, already
// whole, and builds nothing but what the runs always build afresh (the
// link of its test binaries): no run learns its place from what is
// built, or how fast. The held-out run's tests are not built there: the layer is read
// by every run, and the held-out tests are for the held-out run alone.
//
// Only a command the go command runs itself is prebuilt: `go test ...`
// as the card's argv, without -exec or -toolexec of its own (they would
// run other programs on the candidate's code). Anything else (a script,
// make, cargo) runs as before. A prebuild that fails decides nothing:
// the patched runs build what it did not, and say why.
//
// A prebuild pays only where compiling is dear. It saves each patched
// run after the first the compile of the decoy's packages, and costs a
// go command of its own per build (start, load, vet, link: about 0.3 s
// on a 2-core machine, as much as a warm run): on a one-file package
// the runs compiled in 50 ms what the prebuild took 0.9 s to spare them
// (bench/canary.sh). So a module whose Go source is smaller than
// prebuildMinSource, which no run can compile dearly, is not prebuilt;
// each patched run then compiles it afresh on its own layer, which no
// run's place changes either.

// prebuildRule is the name the prebuild's progress goes by: no rule,
// since it decides nothing.
const prebuildRule = "build"

// prebuildMinSource is the size of a module's Go source below which it
// is not prebuilt (see above): pflag's 370 KiB take about 1.2 s to
// compile, a prebuild's own go command about 0.3 s.
const prebuildMinSource = 128 << 10

// prebuildCmds are the go test commands of the patched runs, each with
// the oracle content it runs on (nil: the tree as it is), in the order
// the prebuild runs them: the pass and invariant commands with the
// decoy, then the canary's argv with the canary. Two commands with the
// same build flags on the same content are one build of both their
// packages.
func (g *gateRun) prebuildCmds() []prebuildCmd {
	c := g.o.Card
	var out []prebuildCmd
	add := func(rule string, cmd card.Command, argv []string, content []byte) {
		var env []string
		if g.o.Env != nil {
			env = g.o.Env(cmd)
		}
		if !prebuildable(argv) || !prebuildableEnv(env) {
			return
		}
		for i, p := range out {
			if p.cmd.Workdir != cmd.Workdir || !maps.Equal(p.cmd.Env, cmd.Env) || string(p.content) != string(content) {
				continue
			}
			if slices.Equal(buildArgs(p.argv), buildArgs(argv)) {
				return // it builds what p builds
			}
			if both := mergeBuilds(p.argv, argv); both != nil {
				out[i].argv = both
				return
			}
		}
		out = append(out, prebuildCmd{rule: rule, cmd: cmd, argv: argv, content: content})
	}
	add(RulePatchPass, c.Pass, c.Pass.Cmd, g.decoy())
	add(RulePatchInvariant, c.Invariant, c.Invariant.Cmd, g.decoy())
	if g.canary.plan != nil {
		add(RulePatchCanary, c.Pass, g.canary.plan.Argv, g.canary.plan.Canary)
	}
	return out
}

type prebuildCmd struct {
	rule    string       // the patched rule whose build it is
	cmd     card.Command // its workdir, env and timeout
	argv    []string
	content []byte // the oracle test's content for it; nil: as it is
}

// prebuildable says whether argv is `go test` that the go command runs
// itself: no -exec or -toolexec naming another program.
func prebuildable(argv []string) bool {
	if len(argv) < 2 || argv[0] != "go" || argv[1] != "test" {
		return false
	}
	for _, a := range argv[2:] {
		if a == "-args" || a == "--args" {
			break // what follows is the test binary's
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "exec" || name == "toolexec") {
			return false
		}
	}
	return true
}

// prebuildableEnv says whether a go test run with env runs nothing but
// the toolchain: no -exec or -toolexec in its GOFLAGS, and no C
// toolchain (which cgo runs) named by a relative path, a file of the
// tree.
func prebuildableEnv(env []string) bool {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOFLAGS":
			if !prebuildable(append([]string{"go", "test"}, strings.Fields(v)...)) {
				return false
			}
		case "CC", "CXX", "FC", "AR", "PKG_CONFIG", "GCCGO":
			if prog, _, _ := strings.Cut(strings.TrimSpace(v), " "); strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
				return false
			}
		}
	}
	return true
}

// testOnly are go test's flags that only the test binary reads (which
// tests run, how often, what they print), with whether each takes a
// value: two commands that differ only in them build the same.
var testOnly = map[string]bool{
	"run": true, "skip": true, "count": true, "timeout": true, "parallel": true, "shuffle": true, "list": true, "cpu": true,
	"v": false, "failfast": false, "short": false, "json": false, "fullpath": false,
}

// buildArgs is the go test argv without its testOnly flags: what
// decides what the go command builds.
func buildArgs(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "-args" || a == "--args" {
			return append(out, argv[i:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, ok := testOnly[name]
		if !strings.HasPrefix(a, "-") || !ok {
			out = append(out, a)
			continue
		}
		if takes && !hasValue {
			i++ // its value is the next word
		}
	}
	return out
}

// mergeBuilds is one go test argv that builds what a and b build: their
// build flags, alike, and the packages of both. nil when they cannot be
// told apart with certainty: a build flag whose value is the next word
// would read as a package.
func mergeBuilds(a, b []string) []string {
	fa, pa, ok := splitBuild(a)
	if !ok {
		return nil
	}
	fb, pb, ok := splitBuild(b)
	if !ok || !slices.Equal(fa, fb) {
		return nil
	}
	out := append([]string{"go", "test"}, fa...)
	out = append(out, pa...)
	for _, p := range pb {
		if !slices.Contains(pa, p) {
			out = append(out, p)
		}
	}
	return out
}

// boolBuild are go test's build flags that take no value.
var boolBuild = map[string]bool{"race": true, "msan": true, "asan": true, "cover": true, "trimpath": true, "a": true, "linkshared": true}

// splitBuild splits a go test argv's buildArgs into its flags and its
// packages; ok false when a flag's value may be the next word, or the
// test binary has arguments of its own.
func splitBuild(argv []string) (flags, pkgs []string, ok bool) {
	for _, a := range buildArgs(argv)[2:] {
		if a == "-args" || a == "--args" {
			return nil, nil, false
		}
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && !boolBuild[name] {
			return nil, nil, false
		}
		flags = append(flags, a)
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."} // go test's own default
	}
	return flags, pkgs, true
}

// goSourceAtLeast says whether the Go source of the module that holds
// workdir (a folder of the tree at root) comes to n bytes: its .go
// files, nested modules, vendor and testdata folders and folders the go
// command ignores left out. It stops counting at n.
func goSourceAtLeast(root, workdir string, n int64) bool {
	mod := filepath.Join(root, filepath.FromSlash(workdir))
	for d := mod; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, "go.mod")); err == nil {
			mod = d
			break
		}
		if d == root || !strings.HasPrefix(d, root) {
			break
		}
	}
	var total int64
	errEnough := errors.New("enough")
	err := filepath.WalkDir(mod, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // what cannot be read is not counted
		}
		if d.IsDir() {
			name := d.Name()
			if p != mod && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != mod {
				if _, err := os.Lstat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".go") {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
			if total >= n {
				return errEnough
			}
		}
		return nil
	})
	return err == errEnough
}

// dryRun is argv with the go command told to run each test binary
// through true(1): everything is built, nothing of the candidate runs. A
// flag on the command line wins over GOFLAGS' -exec (the sandbox's test
// wrapper). nil when there is no true(1) where every system keeps it.
func dryRun(argv []string) []string {
	for _, t := range []string{"/usr/bin/true", "/bin/true"} {
		if fi, err := os.Stat(t); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return append([]string{argv[0], argv[1], "-exec=" + t}, argv[2:]...)
		}
	}
	return nil
}

// prebuild runs the prebuild of the candidate in g.wt (see above) on a
// candidate side of its own, which it keeps in g.prebuilt for the
// patched runs' sides to lie over (enterCandidate). It runs only
// contained: with the sandbox off nothing keeps a test from writing the
// layer the next run reads. The tree is left with the last oracle
// content written: every patched run starts afresh after it. ran says a
// prebuild ran, or an earlier gate's was found kept (g.kept).
func (g *gateRun) prebuild(ctx context.Context) (ran bool, err error) {
	if g.policy == nil {
		return false, nil
	}
	cmds := g.prebuildCmds()
	if len(cmds) == 0 || dryRun(cmds[0].argv) == nil || !goSourceAtLeast(g.wt.Dir, cmds[0].cmd.Workdir, prebuildMinSource) {
		return false, nil
	}
	if g.kept != nil {
		g.prebuilt, g.kept = g.kept, nil
		return true, nil
	}
	side, err := EnterCandidate(g.o.Repo, g.policy)
	if err != nil {
		return false, err
	}
	if g.o.Starting != nil {
		g.o.Starting(prebuildRule)
	}
	base, basePolicy := g.candidate, g.policy
	g.candidate, g.policy = side, side.Policy
	defer func() {
		g.candidate, g.policy = base, basePolicy
		if g.o.Progress != nil {
			g.o.Progress(Step{Rule: prebuildRule})
		}
	}()
	runs, err := g.prebuildRuns(cmds)
	if err != nil {
		side.Close()
		return false, err
	}
	built := true
	for i, p := range runs {
		if err := g.setOracle(p.content); err != nil {
			side.Close()
			return false, err
		}
		logPath := filepath.Join(g.o.LogDir, fmt.Sprintf("patch-build.%d.log", i+1))
		res, err := g.runCmd(ctx, p.cmd, p.argv, logPath)
		built = built && err == nil && res.Exit == 0 && !res.Inconclusive()
		if err != nil || ctx.Err() != nil {
			side.Close()
			var ie *sandbox.IntegrityError
			if errors.As(err, &ie) {
				// failpass's own git could run what the run planted:
				// nothing more runs (as runError decides for a rule).
				return false, g.fail(p.rule, err.Error())
			}
			// Any other run that could not start decides nothing
			// here: the patched runs meet the same trouble and say so.
			return false, ctx.Err()
		}
	}
	g.prebuilt = side
	if !built {
		g.keepDir = "" // only a whole prebuild is kept
	}
	return true, nil
}

// A prebuild kept for the candidate's next gate.
//
// The layer a prebuild wrote is what the go toolchain alone made of the
// candidate's tree (see above), so once the patched runs have ended it
// is kept (sandbox.CandidateCache.Keep) where the same candidate's next
// gate, on the same card, base and build cache, finds it, and its runs
// lie on it as this gate's did: a warm gate of a candidate seen before
// compiles nothing, as a rerun of its tests by hand does not. Its note
// keeps the canary's tokens, so that the next gate plants the same decoy
// and canary, whose builds the layer holds, and no run finds one of them
// built and the other not. Only a prebuild whose builds all succeeded is
// kept, only contained (the same runs of the candidate never write it:
// they lie above it), and only with the gate's cache (--no-cache neither
// reads nor keeps one).

// keptNote is what a kept prebuild remembers: the canary's tokens.
type keptNote struct {
	Canary string `json:"canary"`
	Decoy  string `json:"decoy"`
}

// prebuiltFormat is part of every kept prebuild's id: a new format
// leaves every older one unread.
const prebuiltFormat = "failpass-prebuilt-v1"

// prebuiltID names the kept prebuild of g's candidate: the card (its
// commands, canary and sign-off, through its digest), its build cache
// (the lower layer the prebuild's entries lie over), the base, the diff
// and the failpass that planned the canary (ToolID).
func (g *gateRun) prebuiltID() string {
	k, _ := json.Marshal([]string{prebuiltFormat, ToolID(), g.o.Digest, filepath.Base(g.o.CacheDir()), g.base, g.v.DiffDigest})
	sum := sha256.Sum256(k)
	return hex.EncodeToString(sum[:])
}

// findKept looks for a kept prebuild of g's candidate before the canary
// is planned, and sets the canary's tokens (g.tokens): found, g.kept is
// its side and the tokens are its own; otherwise fresh ones, and
// g.keepDir says where this gate's prebuild is to be kept (by a single
// gate). Only contained, with the gate's cache.
func (g *gateRun) findKept() error {
	if g.policy != nil && g.batch != nil && g.batch.cacheable(g) {
		dir := sandbox.KeptDir(g.o.Repo.CommonDir, g.prebuiltID())
		if side, b, ok := openKept(dir); ok {
			var n keptNote
			if json.Unmarshal(b, &n) == nil && validToken(n.Canary) && validToken(n.Decoy) {
				g.kept, g.tokens = side, [2]string{n.Canary, n.Decoy}
				return nil
			}
			side.Close()
		} else if g.batch.lone {
			// A batch keeps none: its verdict cache serves a candidate
			// gated again, and many candidates' layers would fill the
			// disk for nothing.
			g.keepDir = dir
		}
	}
	for i := range g.tokens {
		t, err := canaryToken()
		if err != nil {
			return err
		}
		g.tokens[i] = t
	}
	return nil
}

// dropPrebuilt ends the prebuild's side once the patched runs ended:
// kept for the candidate's next gate (see above), or removed.
func (g *gateRun) dropPrebuilt() {
	if g.kept != nil {
		g.kept.Close() // found, and no prebuild used it
		g.kept = nil
	}
	if g.prebuilt == nil {
		return
	}
	if g.keepDir != "" {
		b, _ := json.Marshal(keptNote{Canary: g.tokens[0], Decoy: g.tokens[1]})
		g.prebuilt.Keep(g.keepDir, b) // a layer not kept costs the next gate time, never correctness
	} else {
		g.prebuilt.Close()
	}
	g.prebuilt = nil
}

// overlayDir is the folder at the tree's top where the prebuild keeps
// what go's -overlay reads: the canary's oracle test and the overlay's
// JSON. go's ./... skips a folder whose name starts with a dot, and
// every patched run starts on the tree without it (repatch).
const overlayDir = ".failpass-prebuild"

// prebuildRuns are the runs the prebuild makes of cmds: each its own
// run, one after the other (the oracle test rewritten before each), or,
// where they share a workdir and an environment, one run that starts
// them all at once under sh(1): the tree holds the first's content (the
// decoy), and a build of other content (the canary) reads its oracle
// test through go's -overlay, which keys the build by the content it
// read, never by the overlay, so the canary's run finds its packages
// built. On two cores pflag's two builds take 2.0 s together, 2.6 s
// one after the other. sh finds go on the run's PATH, which the sandbox has
// cleared of relative entries and of entries in the tree (as run.Run's
// own lookup skips them), so no file of the candidate's runs as go.
func (g *gateRun) prebuildRuns(cmds []prebuildCmd) ([]prebuildCmd, error) {
	seq := func() []prebuildCmd {
		out := make([]prebuildCmd, len(cmds))
		for i, p := range cmds {
			out[i] = prebuildCmd{rule: p.rule, cmd: p.cmd, argv: dryRun(p.argv), content: p.content}
		}
		return out
	}
	sh := "/bin/sh"
	if fi, err := os.Stat(sh); len(cmds) < 2 || err != nil || !fi.Mode().IsRegular() {
		return seq(), nil
	}
	first := cmds[0]
	for _, p := range cmds {
		if p.cmd.Workdir != first.cmd.Workdir || !maps.Equal(p.cmd.Env, first.cmd.Env) || hasOverlay(p.argv) {
			return seq(), nil
		}
	}
	root, err := os.OpenRoot(g.wt.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.Mkdir(overlayDir, 0o755); err != nil {
		return seq(), nil // the tree has one: never write into what it holds
	}
	rel := func(p string) (string, error) {
		return filepath.Rel(filepath.FromSlash(first.cmd.Workdir), filepath.FromSlash(p))
	}
	var script []string
	for i, p := range cmds {
		argv := dryRun(p.argv)
		if string(p.content) != string(first.content) {
			content := fmt.Sprintf("%s/oracle.%d", overlayDir, i)
			oracle, err := rel(g.canary.plan.File)
			if err != nil {
				return nil, err
			}
			backing, err := rel(content)
			if err != nil {
				return nil, err
			}
			js, err := json.Marshal(map[string]map[string]string{"Replace": {oracle: backing}})
			if err != nil {
				return nil, err
			}
			file := fmt.Sprintf("%s/overlay.%d.json", overlayDir, i)
			if err := root.WriteFile(filepath.FromSlash(content), p.content, 0o644); err != nil {
				return nil, err
			}
			if err := root.WriteFile(filepath.FromSlash(file), js, 0o644); err != nil {
				return nil, err
			}
			overlay, err := rel(file)
			if err != nil {
				return nil, err
			}
			argv = slices.Insert(argv, 2, "-overlay="+overlay)
		}
		script = append(script, shellquote.Join(argv)+" & p"+fmt.Sprint(i)+"=$!")
	}
	script = append(script, "rc=0")
	for i := range cmds {
		script = append(script, fmt.Sprintf("wait $p%d || rc=1", i))
	}
	script = append(script, "exit $rc")
	return []prebuildCmd{{rule: first.rule, cmd: first.cmd, content: first.content,
		argv: []string{sh, "-c", strings.Join(script, "\n")}}}, nil
}

// hasOverlay says whether a go test argv gives -overlay itself.
func hasOverlay(argv []string) bool {
	for _, a := range argv[2:] {
		if a == "-args" || a == "--args" {
			break
		}
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "overlay" {
			return true
		}
	}
	return false
}
