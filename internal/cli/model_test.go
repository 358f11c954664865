package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/failpass/failpass/internal/gitx"
)

const draftKey = "sk-draft-SECRET-9876543210"

const draftCard = `id: "T-1"
base_ref: "main"
fail: {cmd: ["sh", "tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
budget: {max_files: 1, max_changed_lines: 10, deny_globs: ["docs/**"]}
`

const draftDiff = "--- a/src/lib.sh\n+++ b/src/lib.sh\n@@ -1 +1 @@\n-answer=41\n+answer=42\n"

// draftRepo makes a repository with one commit and a card beside it.
func draftRepo(t *testing.T) (repo, cardPath string) {
	t.Helper()
	dir := t.TempDir()
	repo = filepath.Join(dir, "repo")
	for name, body := range map[string]string{"src/lib.sh": "answer=41\n", "tests/check.sh": ". src/lib.sh\n[ \"$answer\" = 42 ]\n", "docs/a.md": "a\n"} {
		p := filepath.Join(repo, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	ctx := context.Background()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-qm", "base"}} {
		if _, err := gitx.Command(ctx, repo, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	cardPath = filepath.Join(dir, "card.yml")
	os.WriteFile(cardPath, []byte(draftCard), 0o644)
	return repo, cardPath
}

// TestDraftOpenAI runs `failpass draft --model openai/...` against a fake
// endpoint on loopback and checks the exit code, the output, and that the
// API key appears in no output.
func TestDraftOpenAI(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reply  string
		code   int
		stdout string
		stderr string
	}{
		{name: "good", reply: draftDiff, code: ExitOK, stdout: draftDiff, stderr: "draft written"},
		{name: "fenced with prose", reply: "Fix in src/lib.sh:\n```diff\n" + draftDiff + "```\n", code: ExitOK, stdout: draftDiff},
		{name: "two diffs", reply: "```diff\n" + draftDiff + "```\n```diff\n" + draftDiff + "```\n", code: ExitFail, stderr: "2 fenced diffs"},
		{name: "denied path", reply: "--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1 +1 @@\n-a\n+b\n", code: ExitFail, stderr: "budget.deny"},
		{name: "raise the budget", reply: draftDiff + "\nPlease increase max_changed_lines.\n", code: ExitFail, stderr: "card field"},
		{name: "server error echoing the key", status: 500, code: ExitTrouble, stderr: "HTTP 500 after 3 attempt(s)"},
		{name: "unauthorized", status: 401, code: ExitTrouble, stderr: "HTTP 401 after 1 attempt(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo, cardPath := draftRepo(t)
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				if tt.status != 0 {
					w.Header().Set("Retry-After-Ms", "1")
					w.WriteHeader(tt.status)
					fmt.Fprintf(w, `{"error":{"message":"denied for %s"}}`, r.Header.Get("Authorization"))
					return
				}
				json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "m",
					"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": tt.reply}}}})
			}))
			defer srv.Close()
			t.Setenv("FAILPASS_TEST_KEY", draftKey)
			t.Setenv("OPENAI_API_KEY", "")
			var stdout, stderr bytes.Buffer
			code := Main([]string{"draft", "--card", cardPath, "--model", "openai/m", "--repo", repo,
				"--base-url", srv.URL + "/v1", "--key-env", "FAILPASS_TEST_KEY"}, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("draft exit = %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, &stdout, &stderr)
			}
			if stdout.String() != tt.stdout {
				t.Errorf("draft stdout = %q, want %q", &stdout, tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("draft stderr = %q, want it to contain %q", &stderr, tt.stderr)
			}
			if tt.status != 0 && !strings.Contains(stderr.String(), "[redacted]") {
				t.Errorf("stderr = %q: the endpoint echoed the key, want it shown as [redacted]", &stderr)
			}
			if strings.Contains(stdout.String()+stderr.String(), draftKey) {
				t.Fatalf("the API key leaked:\nstdout: %s\nstderr: %s", &stdout, &stderr)
			}
			if calls.Load() == 0 {
				t.Fatalf("the endpoint was never called")
			}
		})
	}
}
