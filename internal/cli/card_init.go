package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/scratch"
)

const cardInitUsage = "failpass card init [--card FILE] [--id ID] [--force] [--repo DIR] [--runner go|pytest|unittest|npm|cargo] [--python PATH]"

func runCardInit(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card init", cardInitUsage)
	path := fs.String("card", "card.yml", "write the template to `FILE`")
	id := fs.String("id", card.Placeholder+"ISSUE-ID", "the card's `ID`, usually the issue it locks")
	force := fs.Bool("force", false, "overwrite FILE if it exists")
	dir := fs.String("repo", ".", "the project `DIR` whose test runner is detected")
	runnerName := fs.String("runner", "", "write a card for this runner (`NAME`: go, pytest, unittest, npm, cargo) instead of detecting one")
	python := fs.String("python", "", "the Python interpreter `PATH` of a pytest or unittest card (default: $VIRTUAL_ENV/bin/python, else the first python3 or python on PATH that imports the runner)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "name the file with --card FILE"}
	}
	if *runnerName != "" && card.TemplateNamed(*runnerName) == nil {
		return &UsageError{Msg: fmt.Sprintf("--runner %q: want go, pytest, unittest, npm or cargo", *runnerName)}
	}
	r := card.TemplateNamed(*runnerName)
	if r == nil {
		if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
			return Errorf("--repo %s: no such folder", *dir).Hint("pass the project's folder")
		}
		found := card.TemplatesFor(os.DirFS(*dir))
		if len(found) == 0 {
			return Errorf("no test runner detected in %s (no go.mod, Cargo.toml, package.json, pytest or Python project files)", *dir).
				Hint("name it: failpass card init --runner go|pytest|unittest|npm|cargo").
				Hint("or run card init in the project's folder, or pass --repo DIR")
		}
		r = found[0]
		also := ""
		if len(found) > 1 {
			var names []string
			for _, t := range found[1:] {
				names = append(names, t.Name)
			}
			also = fmt.Sprintf(" (also found: %s; --runner picks another)", strings.Join(names, ", "))
		}
		fmt.Fprintf(env.Stderr, "detected %s%s\n", r.What, also)
	}
	if *python != "" && r.Python == "" {
		return &UsageError{Msg: fmt.Sprintf("--python goes with a pytest or unittest card, not %s", r.Name)}
	}
	interp := ""
	if r.Python != "" {
		if interp, err = findPython(ctx, env, *python, r.Python); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "python: %s\n", interp)
	}
	data := r.Card(*id, interp)
	if _, err := card.Parse(*path, data); err != nil {
		var pe *card.ParseError
		if errors.As(err, &pe) && pe.Field == "id" {
			return Errorf("--id %q: %s", *id, pe.Msg).Hint("give a non-empty id without control characters, e.g. --id ISSUE-4419")
		}
		if errors.As(err, &pe) && interp != "" {
			return Errorf("the interpreter path %q cannot go into a card: %s", interp, pe.Msg).Hint("pass another with --python PATH")
		}
		return fmt.Errorf("card template does not parse: %w", err)
	}
	if err := writeNew(*path, data, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Errorf("%s already exists", *path).Hint("pass --force to overwrite it, or choose another --card FILE")
		}
		return Errorf("cannot write %s: %v", *path, err).Hint("choose a --card FILE in a writable folder")
	}
	fmt.Fprintf(env.Stdout, "card %s: written (%s)\n", *path, r.Name)
	fmt.Fprintf(env.Stderr, "next: replace every %s... value, then run 'failpass card lint --card %s'\n", card.Placeholder, *path)
	return nil
}

// findPython picks the interpreter of a Python card: --python when given,
// else $VIRTUAL_ENV/bin/python, else the first python3 or python on PATH
// that can import module. Shims (pyenv's, a wrapper script) are resolved:
// the card names the interpreter the shim runs (sys.executable), which a
// sandboxed command can run without the shim's environment.
func findPython(ctx context.Context, env *Env, given, module string) (string, error) {
	if given != "" {
		p := given
		if !strings.Contains(p, "/") {
			if lp, err := lookPath(env, p); err == nil {
				p = lp
			}
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		exe, why := probePython(ctx, env, abs, module)
		if exe == "" {
			return "", Errorf("--python %s cannot import %s: %s", given, module, why).
				Hint("pass an interpreter that has %s installed (a virtualenv's bin/python)", module)
		}
		return exe, nil
	}
	if venv := env.Getenv("VIRTUAL_ENV"); venv != "" {
		p := filepath.Join(venv, "bin", "python")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	seen := map[string]bool{}
	var tried []string
	for _, d := range filepath.SplitList(env.Getenv("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on the folder
		}
		for _, name := range []string{"python3", "python"} {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 || seen[p] {
				continue
			}
			seen[p] = true
			exe, _ := probePython(ctx, env, p, module)
			if exe != "" {
				return exe, nil
			}
			tried = append(tried, p)
		}
	}
	e := Errorf("no python3 or python on PATH can import %s", module)
	if len(tried) > 0 {
		e = Errorf("no python3 or python on PATH can import %s (tried %s)", module, strings.Join(tried, ", "))
	}
	return "", e.Hint("pass the interpreter with --python PATH (a virtualenv's bin/python), or activate the virtualenv").
		Hint("or install it: %s -m pip install %s", "python3", module)
}

// lookPath finds name on the environment's PATH.
func lookPath(env *Env, name string) (string, error) {
	for _, d := range filepath.SplitList(env.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// probePython runs python and asks it to import module and say which
// interpreter it is. It returns "" and why when that fails.
func probePython(ctx context.Context, env *Env, python, module string) (string, string) {
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
	penv := run.Allowed(env.Getenv, append(slices.Clone(run.CommandEnv), "PYENV_ROOT", "PYENV_VERSION")...)
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
