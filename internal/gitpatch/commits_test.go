package gitpatch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/gitx"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Range
		err  string // "" for no error
	}{
		{"main..fix", Range{"main", "fix"}, ""},
		{"origin/main..HEAD~2", Range{"origin/main", "HEAD~2"}, ""},
		{"a..b..c", Range{"a", "b..c"}, ""}, // git then refuses "b..c" as a commit
		{"main", Range{}, "want BASE..HEAD"},
		{"main...fix", Range{}, "BASE...HEAD is not taken"},
		{"..fix", Range{}, "both BASE and HEAD are needed"},
		{"main..", Range{}, "both BASE and HEAD are needed"},
		{"--upload-pack=x..fix", Range{}, "may not start with '-'"},
		{"main..-x", Range{}, "may not start with '-'"},
	} {
		got, err := ParseRange(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want || got.String() != tc.in {
				t.Errorf("ParseRange(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			continue
		}
		var re *RangeError
		if !errors.As(err, &re) || !re.Usage || !strings.Contains(re.Msg, tc.err) || got != (Range{}) {
			t.Errorf("ParseRange(%q) = %+v, %v; want a usage *RangeError saying %q", tc.in, got, err, tc.err)
		}
	}
}

// TestRangeDiff takes the change from the merge base to HEAD in a real
// repository whose diff configuration would change git's output, and
// refuses a side that is not a commit and unrelated histories.
func TestRangeDiff(t *testing.T) {
	r := newRepo(t, map[string]string{"lib.sh": "answer=41\n", "old.txt": "a\nb\nc\nd\ne\n"})
	dir := r.repo.Dir
	git(t, dir, "checkout", "-q", "-b", "fix")
	writeFiles(t, dir, map[string]string{"lib.sh": "answer=42\n"})
	git(t, dir, "mv", "old.txt", "new.txt")
	git(t, dir, "commit", "-qam", "fix")
	git(t, dir, "checkout", "-q", "main")
	writeFiles(t, dir, map[string]string{"other.txt": "main moves on\n"})
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "main moves on")
	git(t, dir, "checkout", "-q", "--orphan", "alone")
	git(t, dir, "commit", "-qm", "unrelated")
	git(t, dir, "checkout", "-q", "main")
	for _, kv := range [][2]string{{"diff.noprefix", "true"}, {"color.diff", "always"}, {"diff.renames", "false"}, {"diff.context", "0"}} {
		git(t, dir, "config", kv[0], kv[1])
	}
	ctx := context.Background()

	d, err := RangeDiff(ctx, r.repo, Range{"main", "fix"})
	if err != nil {
		t.Fatalf("RangeDiff(main..fix) = %v", err)
	}
	for _, want := range []string{"diff --git a/lib.sh b/lib.sh\n", "rename from old.txt\n", "-answer=41\n+answer=42\n"} {
		if !strings.Contains(string(d), want) {
			t.Errorf("RangeDiff(main..fix) lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(string(d), "other.txt") || strings.Contains(string(d), "\x1b[") {
		t.Errorf("RangeDiff(main..fix) is not the merge base's diff in plain form:\n%s", d)
	}
	if _, err := Read(ctx, d); err != nil {
		t.Errorf("Read(RangeDiff(main..fix)) = %v", err)
	}

	for _, tc := range []struct {
		r    Range
		want string
	}{
		{Range{"main", "nope"}, `--commits: HEAD "nope" is not a commit in the repository at `},
		{Range{"nope", "fix"}, `--commits: BASE "nope" is not a commit in the repository at `},
		{Range{"main", "alone"}, "--commits main..alone: main and alone have no common ancestor"},
	} {
		_, err := RangeDiff(ctx, r.repo, tc.r)
		var re *RangeError
		if !errors.As(err, &re) || re.Usage || !strings.HasPrefix(re.Msg, tc.want) || len(re.Hints()) != 1 {
			t.Errorf("RangeDiff(%s) = %v; want a *RangeError %q with a hint", tc.r, err, tc.want)
		}
	}
}

// TestStat: a diff's stat is git's, read without a repository; a file that
// is not a diff is git's error.
func TestStat(t *testing.T) {
	r := newRepo(t, map[string]string{"lib.sh": "answer=41\n"})
	d := r.change(map[string]string{"lib.sh": "answer=42\n"})
	ctx := context.Background()
	got, err := Stat(ctx, d)
	if err != nil || !strings.Contains(string(got), " lib.sh |    2 +-\n") || !strings.Contains(string(got), "1 file changed, 1 insertion(+), 1 deletion(-)") {
		t.Errorf("Stat(diff) = %q, %v; want git's stat of lib.sh", got, err)
	}
	var ge *gitx.Error
	if got, err := Stat(ctx, []byte("id: x\n")); !errors.As(err, &ge) {
		t.Errorf("Stat(not a diff) = %q, %v; want a *gitx.Error", got, err)
	}
	writeFiles(t, r.repo.Dir, map[string]string{"lib.sh": "answer=42\n"})
	git(t, r.repo.Dir, "commit", "-qam", "fix")
	got, err = StatCommits(ctx, r.repo, r.base, "HEAD")
	if err != nil || !strings.Contains(string(got), " lib.sh | 2 +-\n") {
		t.Errorf("StatCommits(base, HEAD) = %q, %v; want git's stat of lib.sh", got, err)
	}
}
