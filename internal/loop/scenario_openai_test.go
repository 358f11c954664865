package loop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/failpass/failpass/internal/model"
)

// fakeOpenAI is a chat-completions endpoint on loopback that plays both
// roles: as reviewer it reads the packet's diff, as fixer it answers with
// a unified diff.
func fakeOpenAI(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var roles []string
	shaRE := regexp.MustCompile(`"(head_sha|comparison_base_sha)":"([0-9a-f]{40})"`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", 400)
			return
		}
		user := req.Messages[len(req.Messages)-1].Content
		var content string
		switch {
		case strings.HasPrefix(user, "Review packet:"):
			mu.Lock()
			roles = append(roles, "reviewer")
			mu.Unlock()
			ids := map[string]string{}
			for _, m := range shaRE.FindAllStringSubmatch(user, -1) {
				if ids[m[1]] == "" {
					ids[m[1]] = m[2]
				}
			}
			verdict, findings := "clean", ""
			if strings.Contains(user, `+hello BUG1`) {
				verdict = "changes_required"
				findings = `{"id":"f1","lens":"correctness","severity":"blocking","confidence":"high","rule":"no-bug","evidence":[{"location":"app.txt:1","detail":"BUG1"}],"concern":"c","impact":"i","proposed_change":"p","expected_effect":"e"}`
			}
			content = fmt.Sprintf(`{"schema_version":"1.4","lens":"aggregate","candidate":{"head_sha":%q,"comparison_base_sha":%q},"verdict":%q,"findings":[%s],"blocking_reasons":[]}`,
				ids["head_sha"], ids["comparison_base_sha"], verdict, findings)
		case strings.HasPrefix(user, "Fix request:"):
			mu.Lock()
			roles = append(roles, "fixer")
			mu.Unlock()
			content = "```diff\ndiff --git a/app.txt b/app.txt\n--- a/app.txt\n+++ b/app.txt\n@@ -1 +1 @@\n-hello BUG1\n+hello ok\n```\n"
		default:
			http.Error(w, "unknown prompt", 400)
			return
		}
		reply, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	return srv, &roles
}

func TestOpenAIReviewerAndFixer(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	srv, roles := fakeOpenAI(t)
	env := map[string]string{"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL + "/v1"}
	opts := model.Options{Getenv: func(k string) string { return env[k] }, Retries: -1}
	rev, err := model.New(model.Spec{Kind: model.KindOpenAI, Model: "fake-reviewer"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	fix, err := model.New(model.Spec{Kind: model.KindOpenAI, Model: "fake-fixer"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Reviewer: rev, ReviewerID: "openai/fake-reviewer", Fixer: fix, FixerID: "openai/fake-fixer", Log: testLog{t}}
	out := s.start(s.invocation("openai", 3), cfg)
	want(t, out, "converged", "")
	if s.commitsSinceHead() != 1 || s.fileAt("cand", "app.txt") != "hello ok" {
		t.Fatal("the endpoint's fix was not committed")
	}
	if got := strings.Join(*roles, ","); got != "reviewer,fixer,reviewer" {
		t.Fatalf("endpoint calls %s", got)
	}
}

func TestWithoutMountsOnlyAnEndpointReviewerCanCertify(t *testing.T) {
	// A cmd: reviewer on a machine without private mounts: blocked.
	s := newScen(t, "hello world\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "exit 1\n")
	cfg := s.config("reviewer", "fixer")
	cfg.noMounts = true
	out := s.start(s.invocation("nomounts-cmd", 3), cfg)
	want(t, out, "blocked", "missing_capability")

	// An openai/ reviewer has no filesystem: its review certifies.
	s2 := newScen(t, "hello BUG1\n")
	srv, _ := fakeOpenAI(t)
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL + "/v1"}
	opts := model.Options{Getenv: func(k string) string { return env[k] }, Retries: -1}
	rev, err := model.New(model.Spec{Kind: model.KindOpenAI, Model: "r"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	s2.script("fixer", fixFirstBug)
	cfg2 := s2.config("fixer", "fixer")
	cfg2.Reviewer, cfg2.ReviewerID, cfg2.ReviewerEndpoint, cfg2.noMounts = rev, "openai/r", true, true
	out2 := s2.start(s2.invocation("nomounts-openai", 3), cfg2)
	want(t, out2, "converged", "")
	if s2.commitsSinceHead() != 1 {
		t.Fatal("want one commit")
	}
}
