package loop

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestLockCandidate(t *testing.T) {
	common := t.TempDir()
	a, err := LockCandidate(common, "refs/heads/x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockCandidate(common, "refs/heads/x", ""); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock on the same ref = %v, want ErrBusy", err)
	}
	other, err := LockCandidate(common, "refs/heads/y", "repo\x00refs/heads/pr")
	if err != nil {
		t.Fatalf("a lock on another ref = %v", err)
	}
	// Same remote target from another branch: busy, and its local lock is
	// not left held.
	if _, err := LockCandidate(common, "refs/heads/z", "repo\x00refs/heads/pr"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock on the same remote target = %v, want ErrBusy", err)
	}
	z, err := LockCandidate(common, "refs/heads/z", "")
	if err != nil {
		t.Fatalf("the failed attempt left refs/heads/z locked: %v", err)
	}
	z.Release()
	other.Release()
	a.Release()
	a.Release() // harmless
	again, err := LockCandidate(common, "refs/heads/x", "")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Release()
}

func TestCompareStates(t *testing.T) {
	base := func() *repoState {
		return &repoState{
			refs:      map[string]string{"refs/heads/cand": "c1", "refs/heads/main": "m1", "refs/failpass/attempts/id/1": "a1"},
			worktrees: map[string]wtState{"/repo": {head: "c1 refs/heads/cand", index: "i", status: ""}},
			config:    "cfg",
		}
	}
	cases := []struct {
		name   string
		change func(s *repoState)
		want   stateChange
	}{
		{"nothing", func(s *repoState) {}, stateChange{}},
		{"candidate branch", func(s *repoState) { s.refs["refs/heads/cand"] = "c2" },
			stateChange{candidate: []string{"refs/heads/cand: c1 -> c2"}}},
		{"attempt namespace", func(s *repoState) { delete(s.refs, "refs/failpass/attempts/id/1") },
			stateChange{candidate: []string{"refs/failpass/attempts/id/1: a1 -> (none)"}}},
		{"other ref", func(s *repoState) { s.refs["refs/heads/new"] = "n1" },
			stateChange{otherRefs: []string{"refs/heads/new: (none) -> n1"}}},
		{"HEAD", func(s *repoState) { s.worktrees["/repo"] = wtState{head: "m1 refs/heads/main", index: "i"} },
			stateChange{candidate: []string{"HEAD of /repo: c1 refs/heads/cand -> m1 refs/heads/main"}}},
		{"files", func(s *repoState) {
			s.worktrees["/repo"] = wtState{head: "c1 refs/heads/cand", index: "i", status: "?? x"}
		},
			stateChange{tree: []string{"files of /repo changed"}}},
		{"index", func(s *repoState) { s.worktrees["/repo"] = wtState{head: "c1 refs/heads/cand", index: "j"} },
			stateChange{tree: []string{"index of /repo changed"}}},
		{"config", func(s *repoState) { s.config = "other" }, stateChange{tree: []string{"repository config changed"}}},
		{"worktree added", func(s *repoState) { s.worktrees["/elsewhere"] = wtState{} },
			stateChange{tree: []string{"worktree added: /elsewhere"}}},
	}
	for _, c := range cases {
		after := base()
		c.change(after)
		got := compareStates(base(), after, "refs/heads/cand", "refs/failpass/attempts/id/")
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: compareStates = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{"a": true, "loop-1.2_x": true, "": false, "-x": false, ".x": false,
		"a..b": false, "a.lock": false, "a.": false, "a/b": false, "a b": false, string(make([]byte, 101)): false} {
		if err := CheckID(id); (err == nil) != ok {
			t.Errorf("CheckID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}

// validID is the regular expression it replaced, written out by hand (a
// {0,99} repetition cost 2 ms of start-up to compile): both must agree.
func FuzzValidID(f *testing.F) {
	spec := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	bad := regexp.MustCompile(`\.\.|\.lock$|\.$`)
	for _, s := range []string{"a", "loop-1.2_x", "", "-x", "a..b", "a.lock", "a.", "é", strings.Repeat("a", 100), strings.Repeat("a", 101)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := spec.MatchString(id) && !bad.MatchString(id)
		if got := validID(id); got != want {
			t.Fatalf("validID(%q) = %v, the regular expressions say %v", id, got, want)
		}
	})
}
