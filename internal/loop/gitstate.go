package loop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
)

// repoState is what a role process must not change, captured before and
// after it runs: every ref, every worktree's HEAD, index and status
// (tracked, staged, unstaged, untracked and ignored), the list of
// worktrees, and the repository config files.
type repoState struct {
	refs      map[string]string // refname -> object
	worktrees map[string]wtState
	config    string // sha256 of the config files
}

type wtState struct {
	head   string // "ref: <branch>" + sha, or the detached sha
	index  string // sha256 of `ls-files --stage`
	status string // `status --porcelain -z` with untracked and ignored
}

// captureState reads repo's state. skip lists worktree folders that are
// not the user's (failpass's own reviewer snapshot and attempt worktrees),
// whose contents are judged separately.
func captureState(ctx context.Context, repo *gitx.Repo, skip ...string) (*repoState, error) {
	st := &repoState{refs: map[string]string{}, worktrees: map[string]wtState{}}
	out, err := repo.Git(ctx, "for-each-ref", "--format=%(refname) %(objectname)")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, obj, ok := strings.Cut(line, " "); ok {
			st.refs[name] = obj
		}
	}
	wts, err := listWorktrees(ctx, repo)
	if err != nil {
		return nil, err
	}
	own := repo.StateDir("worktrees")
	for _, w := range wts {
		if skipped(w.path, skip) {
			continue
		}
		ws := wtState{head: w.head + " " + w.branch}
		if strings.HasPrefix(w.path, own+string(filepath.Separator)) {
			// failpass's own (another run's) worktrees: only their HEAD.
			st.worktrees[w.path] = ws
			continue
		}
		if _, err := os.Stat(w.path); err != nil {
			st.worktrees[w.path] = wtState{head: "missing"}
			continue
		}
		if !w.bare {
			idx, err := gitx.Command(ctx, w.path, nil, "ls-files", "--stage", "-z")
			if err != nil {
				return nil, err
			}
			ws.index = digest(idx)
			s, err := gitx.Status(ctx, w.path, true)
			if err != nil {
				return nil, err
			}
			ws.status = string(s)
		}
		st.worktrees[w.path] = ws
	}
	var conf []byte
	for _, p := range configFiles(repo, wts) {
		b, err := os.ReadFile(p)
		if err == nil {
			conf = append(conf, []byte(p+"\x00")...)
			conf = append(conf, b...)
		}
	}
	st.config = digest(conf)
	return st, nil
}

func skipped(p string, skip []string) bool {
	for _, s := range skip {
		if s != "" && p == s {
			return true
		}
	}
	return false
}

// configFiles are the repository's config and every worktree's own config.
func configFiles(repo *gitx.Repo, wts []worktreeInfo) []string {
	files := []string{filepath.Join(repo.CommonDir, "config")}
	ents, _ := os.ReadDir(filepath.Join(repo.CommonDir, "worktrees"))
	for _, e := range ents {
		files = append(files, filepath.Join(repo.CommonDir, "worktrees", e.Name(), "config.worktree"))
	}
	files = append(files, filepath.Join(repo.CommonDir, "config.worktree"))
	return files
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// worktreeInfo is one entry of `git worktree list --porcelain`.
type worktreeInfo struct {
	path   string
	head   string
	branch string // refs/heads/..., "" when detached
	bare   bool
}

func listWorktrees(ctx context.Context, repo *gitx.Repo) ([]worktreeInfo, error) {
	out, err := repo.Git(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var wts []worktreeInfo
	var cur *worktreeInfo
	for _, f := range bytes.Split(out, []byte{0}) {
		line := string(f)
		switch {
		case strings.HasPrefix(line, "worktree "):
			wts = append(wts, worktreeInfo{path: strings.TrimPrefix(line, "worktree ")})
			cur = &wts[len(wts)-1]
		case cur == nil:
		case strings.HasPrefix(line, "HEAD "):
			cur.head = strings.TrimPrefix(line, "HEAD ")
		case strings.HasPrefix(line, "branch "):
			cur.branch = strings.TrimPrefix(line, "branch ")
		case line == "bare":
			cur.bare = true
		}
	}
	return wts, nil
}

// stateChange is how two captures differ, sorted into the tiers of the
// design's attribution rules (section 2.15).
type stateChange struct {
	// candidate lists changes to HEAD, the candidate branch or this
	// invocation's attempt namespace: candidate integrity.
	candidate []string
	// otherRefs lists other ref changes: recorded, not attributable.
	otherRefs []string
	// tree lists changes to a user's worktree, index or the config.
	tree []string
}

// compareStates sorts the differences between before and after.
func compareStates(before, after *repoState, branchRef, attemptPrefix string) stateChange {
	var c stateChange
	names := map[string]bool{}
	for n := range before.refs {
		names[n] = true
	}
	for n := range after.refs {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		b, a := before.refs[n], after.refs[n]
		if a == b {
			continue
		}
		desc := fmt.Sprintf("%s: %s -> %s", n, orNone(b), orNone(a))
		if n == branchRef || strings.HasPrefix(n, attemptPrefix) {
			c.candidate = append(c.candidate, desc)
		} else {
			c.otherRefs = append(c.otherRefs, desc)
		}
	}
	paths := map[string]bool{}
	for p := range before.worktrees {
		paths[p] = true
	}
	for p := range after.worktrees {
		paths[p] = true
	}
	var ps []string
	for p := range paths {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for _, p := range ps {
		b, bok := before.worktrees[p]
		a, aok := after.worktrees[p]
		switch {
		case !bok:
			c.tree = append(c.tree, "worktree added: "+p)
		case !aok:
			c.tree = append(c.tree, "worktree removed: "+p)
		default:
			if b.head != a.head {
				c.candidate = append(c.candidate, fmt.Sprintf("HEAD of %s: %s -> %s", p, b.head, a.head))
			}
			if b.index != a.index {
				c.tree = append(c.tree, "index of "+p+" changed")
			}
			if b.status != a.status {
				c.tree = append(c.tree, "files of "+p+" changed")
			}
		}
	}
	if before.config != after.config {
		c.tree = append(c.tree, "repository config changed")
	}
	return c
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
