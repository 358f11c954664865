package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/gitx"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func cmdAdapter(t *testing.T, program string, opts Options) Adapter {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	opts.Getenv = os.Getenv
	a, err := New(Spec{Kind: KindCmd, Program: program}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCommandAdapter(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	tests := []struct {
		name    string
		body    string
		opts    Options
		workdir string
		want    string // exact stdout on success
		fail    string // error substring
		timeout bool
		over    bool
	}{
		{name: "echoes stdin", body: "cat\n", want: `{"x":1}`},
		{name: "role", body: "printf %s \"$FAILPASS_ROLE\"\n", want: "reviewer"},
		{name: "workdir", body: "pwd\n", workdir: work, want: work + "\n"},
		{name: "no workdir is a fresh empty folder", body: "ls -A | wc -l | tr -d ' '\n", want: "0\n"},
		{name: "no secrets in the environment", body: "printf %s \"${OPENAI_API_KEY:-none}\"\n", want: "none"},
		{name: "exits non-zero", body: "echo oops >&2; exit 3\n", fail: "exit 3: oops"},
		{name: "hangs", body: "sleep 30\n", opts: Options{Timeout: 300 * time.Millisecond}, fail: "timed out", timeout: true},
		{name: "hangs with a setsid child holding stdout", body: "setsid sleep 30 &\nsleep 30\n", opts: Options{Timeout: 300 * time.Millisecond}, fail: "timed out", timeout: true},
		{name: "huge output", body: "yes\n", opts: Options{MaxReply: 4096}, fail: "larger than 4096 bytes", over: true},
		{name: "killed by a signal", body: "kill -9 $$\n", fail: "killed"},
	}
	t.Setenv("OPENAI_API_KEY", testKey)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := script(t, dir, strings.ReplaceAll(tt.name, " ", "_"), tt.body)
			a := cmdAdapter(t, p, tt.opts)
			start := time.Now()
			out, err := a.Call(context.Background(), RoleReviewer, []byte(`{"x":1}`), tt.workdir)
			if el := time.Since(start); el > 8*time.Second {
				t.Errorf("Call took %s", el)
			}
			if tt.fail == "" {
				if err != nil || string(out) != tt.want {
					t.Fatalf("Call = %q, %v; want %q", out, err, tt.want)
				}
				return
			}
			if out != nil || err == nil || !strings.Contains(err.Error(), tt.fail) {
				t.Fatalf("Call = %q, %v; want error %q", out, err, tt.fail)
			}
			var ae *AdapterError
			if tt.timeout && (!errors.As(err, &ae) || !ae.TimedOut) {
				t.Fatalf("Call = %v; want a timed-out AdapterError", err)
			}
			var oe *OversizeError
			if tt.over != errors.As(err, &oe) {
				t.Fatalf("Call = %v; oversize = %v, want %v", err, !tt.over, tt.over)
			}
		})
	}
}

func TestCommandReviewerGarbage(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"random bytes": "head -c 300 /dev/urandom\n",
		"prose":        "echo 'LGTM'\n",
		"half json":    "printf '{\"schema_version\": \"1.4\", \"verdict\": '\n",
	} {
		a := cmdAdapter(t, script(t, dir, strings.ReplaceAll(name, " ", "_"), body), Options{})
		r, err := Review(context.Background(), a, testPacket(), "", nil)
		var re *RefusedError
		if r != nil || !errors.As(err, &re) {
			t.Errorf("Review with a reviewer writing %s = %v, %v; want a refusal", name, r, err)
		}
	}
}

func TestNewCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644)
	tests := []struct {
		program string
		want    string
	}{
		{"missing", "no such file"},
		{"plain", "not an executable file"},
		{".", "not an executable file"},
	}
	for _, tt := range tests {
		_, err := New(Spec{Kind: KindCmd, Program: tt.program}, Options{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(cmd:%s) = %v, want %q", tt.program, err, tt.want)
		}
	}
}

// gitRepo makes a repository with one commit of files and returns it.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	git := func(args ...string) string {
		t.Helper()
		full := append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"}, args...)
		out, err := gitx.Command(ctx, dir, nil, full...)
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q")
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	return dir
}

func fixRequest(t *testing.T) *FixRequest {
	var f Finding
	if err := decodeInto(mustJSON(t, finding("todo-1", "blocking")), &f); err != nil {
		t.Fatal(err)
	}
	return &FixRequest{SchemaVersion: RequestSchemaVersion, InvocationID: "inv-1", Cycle: 1,
		HeadSHA: headSHA, ComparisonBaseSHA: baseSHA, Findings: []Finding{f},
		ChangeContract: []byte(`{"goal":"remove TODOs"}`), Budget: FixBudget{RemainingCycles: 2}}
}

func TestFixCommand(t *testing.T) {
	fixDiff := "--- a/README\n+++ b/README\n@@ -1,2 +1 @@\n hello\n-TODO fix\n"
	tests := []struct {
		name    string
		body    string
		changed bool
		readme  string // README after the fixer, when changed
		refuse  string
		fail    string
	}{
		{name: "edits in place", body: "cat > /dev/null; printf 'hello\\n' > README\n", changed: true, readme: "hello\n"},
		{name: "writes a diff", body: "cat > /dev/null; printf -- '" + strings.ReplaceAll(fixDiff, "\n", "\\n") + "'\n", changed: true, readme: "hello\n"},
		{name: "no change, exit 1", body: "cat > /dev/null; exit 1\n"},
		{name: "exit 0, no change", body: "cat > /dev/null\n", refuse: "changed nothing"},
		{name: "edits and a diff", body: "printf 'x\\n' > README; printf -- '" + strings.ReplaceAll(fixDiff, "\n", "\\n") + "'\n", refuse: "both edited files and wrote a diff"},
		{name: "commits", body: "printf 'x\\n' > README; git -c user.name=x -c user.email=x@x commit -qam fix\n", refuse: "moved HEAD"},
		{name: "diff does not apply", body: "printf -- '--- a/README\\n+++ b/README\\n@@ -1 +1 @@\\n-nothere\\n+x\\n'\n", refuse: "does not apply"},
		{name: "diff escapes the worktree", body: "printf -- '--- /dev/null\\n+++ b/../escape\\n@@ -0,0 +1 @@\\n+x\\n'\n", refuse: `"../escape"`},
		{name: "garbage", body: "echo 'I fixed it!'\n", refuse: "no unified diff"},
		{name: "edits and talks", body: "printf 'hello\\n' > README; echo done\n", refuse: "stdout must stay empty"},
		{name: "hangs", body: "sleep 30\n", fail: "timed out"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t, map[string]string{"README": "hello\nTODO fix\n"})
			a := cmdAdapter(t, script(t, dir, strings.ReplaceAll(tt.name, " ", "_"), tt.body), Options{Timeout: 2 * time.Second})
			out, err := Fix(context.Background(), a, fixRequest(t), repo)
			switch {
			case tt.refuse != "":
				var re *RefusedError
				if out != nil || !errors.As(err, &re) || !strings.Contains(re.Reason, tt.refuse) || re.Role != RoleFixer {
					t.Fatalf("Fix = %+v, %v; want fixer refusal %q", out, err, tt.refuse)
				}
			case tt.fail != "":
				if out != nil || err == nil || !strings.Contains(err.Error(), tt.fail) {
					t.Fatalf("Fix = %+v, %v; want error %q", out, err, tt.fail)
				}
			default:
				if err != nil || out.Changed != tt.changed {
					t.Fatalf("Fix = %+v, %v; want changed=%v", out, err, tt.changed)
				}
				if tt.changed {
					b, _ := os.ReadFile(filepath.Join(repo, "README"))
					if string(b) != tt.readme {
						t.Fatalf("README after fix = %q, want %q", b, tt.readme)
					}
				}
			}
		})
	}
}

func TestFixOpenAI(t *testing.T) {
	fixDiff := "--- a/README\n+++ b/README\n@@ -1,2 +1 @@\n hello\n-TODO fix\n"
	tests := []struct {
		name    string
		content string
		refuse  string
	}{
		{name: "fenced diff", content: "```diff\n" + fixDiff + "```"},
		{name: "bare diff", content: fixDiff},
		{name: "two diffs", content: "```diff\n" + fixDiff + "```\n```diff\n" + fixDiff + "```", refuse: "2 fenced diffs"},
		{name: "prose only", content: "Remove the TODO line.", refuse: "no unified diff"},
		{name: "stale diff", content: "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-other\n+x\n", refuse: "does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t, map[string]string{"README": "hello\nTODO fix\n"})
			f, srv := newFake(t, reply(tt.content))
			out, err := Fix(context.Background(), adapterFor(t, srv, Options{}), fixRequest(t), repo)
			b, _ := os.ReadFile(filepath.Join(repo, "README"))
			if tt.refuse != "" {
				var re *RefusedError
				if out != nil || !errors.As(err, &re) || !strings.Contains(re.Reason, tt.refuse) {
					t.Fatalf("Fix = %+v, %v; want refusal %q", out, err, tt.refuse)
				}
				if string(b) != "hello\nTODO fix\n" {
					t.Fatalf("a refused fix changed README to %q", b)
				}
				return
			}
			if err != nil || !out.Changed || string(b) != "hello\n" {
				t.Fatalf("Fix = %+v, %v, README %q; want the diff applied", out, err, b)
			}
			msgs := f.reqs[0]["messages"].([]any)
			if user := msgs[len(msgs)-1].(map[string]any)["content"].(string); !strings.Contains(user, `"todo-1"`) {
				t.Errorf("fixer prompt lacks the finding: %q", user)
			}
		})
	}
}
