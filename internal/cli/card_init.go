package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/python"
)

const cardInitUsage = "failpass card init [--card FILE] [--id ID] [--force] [--repo DIR] [--runner go|pytest|unittest|npm|cargo] [--python PATH]"

func runCardInit(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card init", cardInitUsage)
	path := fs.String("card", "card.yml", "write the template to `FILE`")
	id := fs.String("id", card.Placeholder+"ISSUE-ID", "the card's `ID`, usually the issue it locks")
	force := fs.Bool("force", false, "overwrite FILE if it exists")
	dir := fs.String("repo", ".", "the project `DIR` whose test runner is detected")
	runnerName := fs.String("runner", "", "write a card for this runner (`NAME`: go, pytest, unittest, npm, cargo) instead of detecting one")
	pythonFlag := fs.String("python", "", "the Python interpreter `PATH` of a pytest or unittest card (default: $VIRTUAL_ENV/bin/python, else the first python3 or python on PATH that imports the runner)")
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
	if *pythonFlag != "" && r.Python == "" {
		return &UsageError{Msg: fmt.Sprintf("--python goes with a pytest or unittest card, not %s", r.Name)}
	}
	interp := ""
	if r.Python != "" {
		if interp, err = python.Find(ctx, env.Getenv, *pythonFlag, r.Python); err != nil {
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
