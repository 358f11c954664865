package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/failpass/failpass/internal/cli"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary double as the failpass command inside
// scripts, so every script drives the real binary in a real process.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"failpass": func() {
			// A script that sets sandboxtest.DenyEnv sees the machine as
			// one that denies namespaces: Landlock-only mode.
			if os.Getenv(sandboxtest.DenyEnv) == "1" {
				if err := sandboxtest.DenyNamespaces(); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
			}
			os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScript runs every testdata/script/*.txtar end to end against real git
// repositories the scripts build.
func TestScript(t *testing.T) {
	t.Cleanup(removeSeed) // after every script, parallel ones included
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               setupScript,
		Condition:           scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkrepo":    cmdMkrepo,
			"outside":   cmdOutside,
			"snapshot":  cmdSnapshot,
			"unchanged": cmdUnchanged,
			"noleft":    cmdNoLeft,
			"noproc":    cmdNoProc,
			"xmlok":     cmdXMLOK,
			"gowarm":    cmdGowarm,
		},
	})
}

// scriptCondition knows [landlock]: the sandbox applies Landlock here,
// so a candidate's test binaries each run in a domain of their own; and
// [mountns]: contained commands get a mount namespace, so they see their
// worktree at sandbox.TreeView.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "landlock":
		return slices.Contains(sandbox.Probe().Features, string(sandbox.FeatLandlock)), nil
	case "mountns":
		return slices.Contains(sandbox.Probe().Features, string(sandbox.FeatMountNS)), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// setupScript gives every script a private HOME and a git identity, and no
// system or global git config from the machine running the tests.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Test Author",
		"GIT_AUTHOR_EMAIL":    "author@example.org",
		"GIT_COMMITTER_NAME":  "Test Author",
		"GIT_COMMITTER_EMAIL": "author@example.org",
		"GIT_AUTHOR_DATE":     "2026-01-01T00:00:00Z",
		"GIT_COMMITTER_DATE":  "2026-01-01T00:00:00Z",
		// The canary runs last, as it always did before its place was
		// drawn at random: a script that shows what each patched run
		// does (a hack that passes the pass run and is caught by the
		// canary) reads the same every time. canary_order.txtar unsets
		// it and pins other places.
		"FAILPASS_CANARY_PLACE": "last",
	} {
		env.Setenv(k, v)
	}
	return nil
}

func git(ts *testscript.TestScript, dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = ts.MkAbs(dir)
	cmd.Env = scriptEnv(ts)
	out, err := cmd.CombinedOutput()
	if err != nil {
		ts.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"HOME", "PATH", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// mkrepo DIR [BRANCH]: make DIR (already holding the script's files) a git
// repository with everything committed on BRANCH (default main).
func cmdMkrepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: mkrepo DIR [BRANCH]")
	}
	branch := "main"
	if len(args) == 2 {
		branch = args[1]
	}
	dir := args[0]
	if err := os.MkdirAll(ts.MkAbs(dir), 0o755); err != nil {
		ts.Fatalf("%v", err)
	}
	git(ts, dir, "init", "-q", "-b", branch)
	git(ts, dir, "add", "-A")
	git(ts, dir, "commit", "-q", "--allow-empty", "-m", "base")
}

// outsideDecoys are files a home folder may hold that runners look for
// upward from their tests: each one found makes every run fail (a
// pytest option that does not exist, a go.work that names no module, an
// npm package that does not parse).
var outsideDecoys = map[string]string{
	"pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"--failpass-decoy-found\"\n",
	"pytest.ini":     "[pytest]\naddopts = --failpass-decoy-found\n",
	"setup.cfg":      "[tool:pytest]\naddopts = --failpass-decoy-found\n",
	"tox.ini":        "[pytest]\naddopts = --failpass-decoy-found\n",
	"go.work":        "go 1.21\n\nuse ./failpass-decoy-found\n",
	"package.json":   "{ failpass decoy found\n",
	"Cargo.toml":     "[workspace]\nmembers = [\"failpass-decoy-found\"]\n",
}

// outside DIR [home]: move DIR (a repository's files, before mkrepo)
// out of /tmp, where maintainers keep repositories: to a fresh folder
// under /var/tmp, or with home to src/DIR of a home-like folder there
// whose own files (outsideDecoys, one level up from src too) a runner
// looking upward from the repository would find. DIR becomes a symlink
// to it, so the script names it as before (git and failpass resolve it
// to where it lies; a `cd DIR` would make .. the new parent). Removed
// when the script ends.
func cmdOutside(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "home") {
		ts.Fatalf("usage: outside DIR [home]")
	}
	top, err := os.MkdirTemp("/var/tmp", "failpass-script-")
	ts.Check(err)
	ts.Defer(func() {
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755) // a read-only module cache folder
			}
			return nil
		})
		os.RemoveAll(top)
	})
	parent := top
	if len(args) == 2 {
		home := filepath.Join(top, "home", "maintainer")
		parent = filepath.Join(home, "src")
		ts.Check(os.MkdirAll(parent, 0o755))
		for _, d := range []string{home, parent} {
			for name, content := range outsideDecoys {
				ts.Check(os.WriteFile(filepath.Join(d, name), []byte(content), 0o644))
			}
		}
	}
	src, dst := ts.MkAbs(args[0]), filepath.Join(parent, filepath.Base(args[0]))
	if _, err := os.Lstat(src); err != nil {
		ts.Check(os.MkdirAll(src, 0o755))
	}
	ts.Check(os.CopyFS(dst, os.DirFS(src)))
	ts.Check(os.RemoveAll(src))
	ts.Check(os.Symlink(dst, src))
	ts.Setenv("OUTSIDE_"+filepath.Base(args[0]), dst)
}

// repoState is everything a failpass run must leave exactly as it was in
// the user's checkout.
func repoState(ts *testscript.TestScript, dir string) string {
	var b strings.Builder
	for _, args := range [][]string{
		{"rev-parse", "HEAD"},
		{"symbolic-ref", "-q", "HEAD"},
		{"status", "--porcelain=v1", "--untracked-files=all", "--ignored"},
		{"ls-files", "-s"},
		{"for-each-ref", "--format=%(refname) %(objectname)"},
		{"stash", "list"},
		{"worktree", "list", "--porcelain"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ts.MkAbs(dir)
		cmd.Env = scriptEnv(ts)
		out, _ := cmd.Output()
		b.WriteString(strings.Join(args, " ") + "\n" + string(out))
	}
	return b.String()
}

// snapshot DIR NAME: remember DIR's git state as NAME.
func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: snapshot DIR NAME")
	}
	ts.Setenv("SNAPSHOT_"+args[1], repoState(ts, args[0]))
}

// unchanged DIR NAME: DIR's git state equals snapshot NAME.
func cmdUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unchanged DIR NAME")
	}
	if now, was := repoState(ts, args[0]), ts.Getenv("SNAPSHOT_"+args[1]); now != was {
		ts.Fatalf("repository %s changed:\nbefore:\n%s\nafter:\n%s", args[0], was, now)
	}
}

// noleft DIR: failpass left no worktree and no scratch folder in DIR's git
// common directory, no tree in the user's cache folder, and no process
// runs from inside either.
func cmdNoLeft(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: noleft DIR")
	}
	wt := git(ts, args[0], "worktree", "list", "--porcelain")
	if n := strings.Count(wt, "worktree "); n != 1 {
		ts.Fatalf("%d worktrees left:\n%s", n, wt)
	}
	common := strings.TrimSpace(git(ts, args[0], "rev-parse", "--path-format=absolute", "--git-common-dir"))
	entries, _ := os.ReadDir(filepath.Join(common, "failpass", "worktrees"))
	if len(entries) > 0 {
		ts.Fatalf("%d entries left in failpass/worktrees", len(entries))
	}
	if entries, _ := os.ReadDir(filepath.Join(common, "failpass", "scratch")); len(entries) > 0 {
		ts.Fatalf("%d candidate folders left in failpass/scratch", len(entries))
	}
	// The trees live in the user's cache folder (the script's HOME).
	trees := filepath.Join(ts.Getenv("HOME"), ".cache", "failpass", "trees")
	if left, _ := filepath.Glob(filepath.Join(trees, "*", "*")); len(left) > 0 {
		ts.Fatalf("trees left in the cache folder: %q", left)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		cwd, err := os.Readlink(p)
		if err == nil && (strings.HasPrefix(cwd, filepath.Join(common, "failpass")) || strings.HasPrefix(cwd, trees+"/")) {
			ts.Fatalf("a process still runs in %s (%s)", cwd, p)
		}
	}
}

// noproc TEXT: no process on the machine has TEXT in its command line
// (other than this test binary's own).
func cmdNoProc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: noproc TEXT")
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		if strings.Contains(cmdline, args[0]) && !strings.Contains(cmdline, "noproc") {
			ts.Fatalf("process %s still runs: %s", filepath.Dir(p), cmdline)
		}
	}
}

// xmlok FILE: FILE is one well-formed XML document (every element closed,
// nothing after the root element).
func cmdXMLOK(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: xmlok FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	d := xml.NewDecoder(bytes.NewReader(b))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			ts.Fatalf("%s is not well-formed XML: %v", args[0], err)
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || roots != 1 {
		ts.Fatalf("%s has %d root elements (%d left open), want one closed root", args[0], roots, depth)
	}
}
