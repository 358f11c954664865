// Package python finds the interpreter a Python card names: the one the
// user gave, else the virtualenv's, else the first on PATH that imports
// the card's test runner. Shims (pyenv's, a wrapper script) are resolved
// to the interpreter they run, which a sandboxed command can run without
// the shim's environment.
package python

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/scratch"
)

// Error is an interpreter that could not be found, with the fix.
type Error struct {
	Msg   string
	hints []string
}

func (e *Error) Error() string { return e.Msg }

// Hints says how to give failpass an interpreter that works.
func (e *Error) Hints() []string { return e.hints }

// Find picks the interpreter of a Python card that imports module:
// given (a path, or a name looked up on PATH) when not "", else
// $VIRTUAL_ENV/bin/python, else the first python3 or python on PATH
// that can import module. getenv reads the environment.
func Find(ctx context.Context, getenv func(string) string, given, module string) (string, error) {
	if given != "" {
		p := given
		if !strings.Contains(p, "/") {
			if lp, err := lookPath(getenv, p); err == nil {
				p = lp
			}
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		exe, why := probe(ctx, getenv, abs, module)
		if exe == "" {
			return "", &Error{Msg: fmt.Sprintf("--python %s cannot import %s: %s", given, module, why),
				hints: []string{fmt.Sprintf("pass an interpreter that has %s installed (a virtualenv's bin/python)", module)}}
		}
		return exe, nil
	}
	if venv := getenv("VIRTUAL_ENV"); venv != "" {
		p := filepath.Join(venv, "bin", "python")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	seen := map[string]bool{}
	var tried []string
	for _, d := range filepath.SplitList(getenv("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on the folder
		}
		for _, name := range []string{"python3", "python"} {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 || seen[p] {
				continue
			}
			seen[p] = true
			if exe, _ := probe(ctx, getenv, p, module); exe != "" {
				return exe, nil
			}
			tried = append(tried, p)
		}
	}
	msg := "no python3 or python on PATH can import " + module
	if len(tried) > 0 {
		msg += " (tried " + strings.Join(tried, ", ") + ")"
	}
	return "", &Error{Msg: msg, hints: []string{
		"pass the interpreter with --python PATH (a virtualenv's bin/python), or activate the virtualenv",
		"or install it: python3 -m pip install " + module,
	}}
}

// lookPath finds name on the environment's PATH.
func lookPath(getenv func(string) string, name string) (string, error) {
	for _, d := range filepath.SplitList(getenv("PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// probe runs python and asks it to import module and say which
// interpreter it is. It returns "" and why when that fails.
func probe(ctx context.Context, getenv func(string) string, python, module string) (string, string) {
	sd, err := scratch.New("python")
	if err != nil {
		return "", err.Error()
	}
	defer sd.Remove()
	tmp := sd.Path
	log := filepath.Join(tmp, "out.log")
	// The environment a card command gets, and pyenv's variables: a
	// pyenv shim needs them to pick the interpreter the user means, and
	// the card then names that interpreter by its own path.
	penv := run.Allowed(getenv, append(slices.Clone(run.CommandEnv), "PYENV_ROOT", "PYENV_VERSION")...)
	res, err := run.Run(ctx, run.Spec{
		Argv: []string{python, "-c", "import sys, " + module + "; sys.stdout.write('\\n' + sys.executable + '\\n')"},
		Root: tmp, Env: penv, Timeout: 30 * time.Second, Log: log, MaxLog: 64 << 10,
	})
	if err != nil {
		return "", err.Error()
	}
	if res.Exit != 0 || res.Inconclusive() {
		return "", res.String()
	}
	out, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	exe := strings.TrimSpace(lines[len(lines)-1])
	if !filepath.IsAbs(exe) {
		return python, "" // an interpreter that does not know its path: take the one found
	}
	return exe, ""
}
