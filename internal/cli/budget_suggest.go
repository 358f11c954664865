package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/stack"
)

const budgetSuggestUsage = "failpass budget suggest --stack FILE [--repo DIR]"

// runBudgetSuggest is seed step 4: count the repository files a stack trace
// names; max_files is that count plus one. It only prints a suggestion and
// never edits a card: a human maintainer picks the number.
func runBudgetSuggest(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "budget suggest", budgetSuggestUsage)
	stackPath := fs.String("stack", "", "the stack trace `FILE` (\"-\" for stdin)")
	repoDir := fs.String("repo", ".", "the repository `DIR` the trace's files belong to")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "name the trace with --stack FILE"}
	}
	if *stackPath == "" {
		return &UsageError{Msg: "--stack is required", Hint: "failpass budget suggest --stack trace.txt"}
	}
	data, err := suggestReadTrace(env, *stackPath)
	if err != nil {
		return err
	}
	frames, err := stack.Parse(*stackPath, data)
	if err != nil {
		return err
	}
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return err
	}
	tracked, err := repo.Tracked(ctx)
	if err != nil {
		return err
	}
	for i := range frames {
		frames[i].Path = fromWorktree(frames[i].Path, repo.Dir)
	}
	r := stack.Resolve(frames, repo.Dir, tracked)
	if len(r.Files) == 0 {
		e := Errorf("%s names no file of the repository at %s (%d frame(s) read)", *stackPath, repo.Dir, len(frames))
		for i, f := range r.Outside {
			if i == 3 {
				break
			}
			e = e.Hint("not a repository file: %s:%d", f.Path, f.Line)
		}
		for _, a := range r.Ambiguous {
			e = e.Hint("%s:%d could be any of %s", a.Frame.Path, a.Frame.Line, strings.Join(a.Candidates, ", "))
		}
		return e.Hint("run it in the repository the trace came from, or pass --repo DIR")
	}
	w := env.Stdout
	fmt.Fprintf(w, "max_files: %d\n", len(r.Files)+1)
	fmt.Fprintf(w, "# %d repository file(s) named by the trace, plus one:\n", len(r.Files))
	for _, f := range r.Files {
		lines := make([]string, len(f.Frames))
		for i, fr := range f.Frames {
			lines[i] = fmt.Sprint(fr.Line)
		}
		fmt.Fprintf(w, "#   %s:%s\n", f.Path, strings.Join(suggestDedupe(lines), ","))
	}
	if len(r.Ambiguous) > 0 {
		fmt.Fprintf(w, "# not counted, ambiguous:\n")
		for _, a := range r.Ambiguous {
			fmt.Fprintf(w, "#   %s:%d could be %s\n", a.Frame.Path, a.Frame.Line, strings.Join(a.Candidates, ", "))
		}
	}
	if len(r.Outside) > 0 {
		fmt.Fprintf(w, "# not counted, outside the repository: %d frame(s)\n", len(r.Outside))
	}
	fmt.Fprintf(env.Stderr, "a suggestion only: reread the issue before you write max_files into the card\n")
	return nil
}

// fromWorktree maps a path inside one of failpass's worktrees
// (<cache>/failpass/trees/<key>/<id>/src/x.py, the view a contained
// command sees it at, /tmp/failpass/worktree/src/x.py, or where older
// versions kept it, <git common dir>/failpass/worktrees/<id>/src/x.py,
// as a gate's logs show it, from this machine or another) back to the
// same file in the repository at root. Other paths are returned
// unchanged.
func fromWorktree(p, root string) string {
	top := strings.TrimSuffix(filepath.ToSlash(root), "/") + "/"
	if rest, ok := sandbox.ViewRel(p); ok && rest != "." {
		return top + rest
	}
	if i := strings.LastIndex(p, "/failpass/trees/"); i >= 0 {
		parts := strings.SplitN(p[i+len("/failpass/trees/"):], "/", 3)
		if len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "" {
			return top + parts[2]
		}
		return p
	}
	const marker = "/failpass/worktrees/"
	i := strings.LastIndex(p, marker)
	if i < 0 {
		return p
	}
	id, rest, ok := strings.Cut(p[i+len(marker):], "/")
	if !ok || id == "" || rest == "" {
		return p
	}
	return top + rest
}

func suggestReadTrace(env *Env, path string) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = env.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, Errorf("cannot read stack trace: %v", err).Hint("pass the trace saved as a text file with --stack FILE")
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, stack.MaxSize+1))
	if err != nil {
		return nil, Errorf("cannot read stack trace %s: %v", path, err)
	}
	return bytes.Clone(data), nil
}

func suggestDedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
