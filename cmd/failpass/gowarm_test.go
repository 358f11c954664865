package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

// The Go scripts' fixtures are small, but the first base run of every
// card compiles the standard library its test needs into the card's
// empty build cache: 20 to 40 s of CPU each, the bulk of a Go script, a
// dozen times per pass of the suite. goSeed builds that standard library
// once per test binary, the way a contained run's go command does (the
// same toolchain and an environment as bare as the sandbox's), and
// gowarm copies it into a card's build cache before the first gate. What
// the scripts check is unchanged: the card's cache is still written by
// base runs alone, the fixtures' own packages still compile in it, and a
// cache entry the seed misses (another environment) is compiled as before.
// A copy, not hard links: a script's --sandbox=off poisoner writes zeros
// over what its go command reads, and a link would carry that to every
// other script.

// seedImports are the packages the fixtures import, so their closure
// (and the testing package's) is in the seed.
var seedImports = []string{"bytes", "flag", "fmt", "io/fs", "os", "os/exec", "path/filepath", "regexp", "strings", "syscall", "testing", "time"}

var (
	seedMu   sync.Mutex
	seedDir  string
	seedErr  error
	seedDone bool
)

// goSeed returns the folder of the seed build cache, building it on first use.
func goSeed() (string, error) {
	seedMu.Lock()
	defer seedMu.Unlock()
	if seedDone {
		return seedDir, seedErr
	}
	seedDone = true
	seedDir, seedErr = buildSeed()
	return seedDir, seedErr
}

// removeSeed removes the seed once every script has ended.
func removeSeed() {
	seedMu.Lock()
	defer seedMu.Unlock()
	if seedDir != "" {
		os.RemoveAll(filepath.Dir(seedDir))
	}
	seedDir, seedErr, seedDone = "", nil, false
}

func buildSeed() (string, error) {
	root, err := os.MkdirTemp("", "failpass-goseed-")
	if err != nil {
		return "", err
	}
	mod, cache, home := filepath.Join(root, "mod"), filepath.Join(root, "go-build"), filepath.Join(root, "home")
	var imports strings.Builder
	for _, p := range seedImports {
		fmt.Fprintf(&imports, "\t_ %q\n", p)
	}
	files := map[string]string{
		"go.mod":       "module example.org/seed\n\ngo 1.21\n",
		"seed.go":      "package seed\n\nimport (\n" + imports.String() + ")\n",
		"seed_test.go": "package seed\n\nimport \"testing\"\n\nfunc TestSeed(t *testing.T) {}\n",
		"cmd/main.go":  "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println() }\n",
	}
	for name, body := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", err
	}
	// As bare as a contained run's environment: what changes a package's
	// build (GOFLAGS, CGO_ENABLED, ...) is absent there too.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + root, "GOCACHE=" + cache,
		"GOTOOLCHAIN=local", "GOPROXY=off"}
	for _, args := range [][]string{{"test", "-count=1", "./..."}, {"build", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = mod, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return cache, nil
}

// gowarm REPO CARD...: copy the seed standard library into the build
// cache a gate of each CARD in REPO uses (the key gate.BuildCacheKey
// computes from the script's environment, as the gate does).
// gowarm REPO from-commit: the same for card from-commit's cache.
// gowarm user: the same for the user's own GOCACHE (what --sandbox=off
// base runs build in): $GOCACHE, else $HOME/.cache/go-build. A cache that
// exists already is left alone.
func cmdGowarm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 || args[0] != "user" && len(args) < 2 {
		ts.Fatalf("usage: gowarm REPO CARD... | gowarm REPO from-commit | gowarm user")
	}
	if _, err := exec.LookPath("go"); err != nil {
		return // the script skips what needs go
	}
	var dsts []string
	switch {
	case args[0] == "user":
		d := ts.Getenv("GOCACHE")
		if d == "" {
			d = filepath.Join(ts.Getenv("HOME"), ".cache", "go-build")
		}
		dsts = append(dsts, d)
	case args[1] == "from-commit":
		repo, err := gitx.Open(context.Background(), ts.MkAbs(args[0]))
		ts.Check(err)
		dsts = append(dsts, filepath.Join(sandbox.BuildCacheDir(repo.CommonDir, "from-commit"), "go-build"))
	default:
		for _, path := range args[1:] {
			c, err := card.Load(ts.MkAbs(path))
			ts.Check(err)
			repo, err := gitx.Open(context.Background(), ts.MkAbs(args[0]))
			ts.Check(err)
			b, err := gate.Bind(context.Background(), repo, c, ts.MkAbs(path), ts.Getenv)
			ts.Check(err)
			if b.BaseErr != nil {
				ts.Fatalf("gowarm: %s: %v", path, b.BaseErr)
			}
			dsts = append(dsts, filepath.Join(b.CacheDir(), "go-build"))
		}
	}
	for _, dst := range dsts {
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		seed, err := goSeed()
		if err != nil {
			ts.Fatalf("building the seed build cache: %v", err)
		}
		ts.Check(copyTree(seed, dst))
	}
}

// copyTree copies the regular files and folders of src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}
