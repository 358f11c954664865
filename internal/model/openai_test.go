package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "sk-test-SECRET-0123456789"

// fakeEndpoint is an OpenAI-compatible chat-completions server on
// loopback. Each request takes the next step; the last step repeats.
type fakeEndpoint struct {
	t     *testing.T
	mu    sync.Mutex
	steps []func(w http.ResponseWriter, r *http.Request)
	calls int
	auth  []string
	hdrs  []http.Header
	reqs  []map[string]any
}

func newFake(t *testing.T, steps ...func(w http.ResponseWriter, r *http.Request)) (*fakeEndpoint, *httptest.Server) {
	f := &fakeEndpoint{t: t, steps: steps}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		f.mu.Lock()
		i := f.calls
		f.calls++
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.hdrs = append(f.hdrs, r.Header.Clone())
		f.reqs = append(f.reqs, req)
		if i >= len(f.steps) {
			i = len(f.steps) - 1
		}
		step := f.steps[i]
		f.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found: "+r.URL.Path, 404)
			return
		}
		step(w, r)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeEndpoint) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func reply(content string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		})
	}
}

func status(code int) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		// A fast retry hint keeps the test quick; the SDK honours it.
		w.Header().Set("Retry-After-Ms", "5")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		// A hostile endpoint echoes the key back; it must not surface.
		fmt.Fprintf(w, `{"error":{"message":"overloaded, your key %s","type":"server_error"}}`, r.Header.Get("Authorization"))
	}
}

func hang(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func adapterFor(t *testing.T, srv *httptest.Server, opts Options) Adapter {
	t.Helper()
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": testKey}
	opts.Getenv = func(k string) string { return env[k] }
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	a, err := New(Spec{Kind: KindOpenAI, Model: "fake-model"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func draftRequest() *DraftRequest {
	return &DraftRequest{SchemaVersion: RequestSchemaVersion, Prompt: "CARD...\nAnswer with one unified diff only.", Card: "id: X\n"}
}

func TestOpenAIDraft(t *testing.T) {
	touched := []string{"src/header.py"}
	denied := func(p string) bool { return strings.HasPrefix(p, "docs/") || p == "pyproject.toml" }
	deniedDiff := strings.ReplaceAll(plainDiff, "README", "docs/guide.md")
	tests := []struct {
		name   string
		steps  []func(http.ResponseWriter, *http.Request)
		opts   Options
		diff   string
		refuse string // refusal reason substring
		fail   string // adapter error substring
		calls  int
	}{
		{name: "good reply", steps: steps(reply(goodDiff)), diff: goodDiff, calls: 1},
		{name: "fenced reply", steps: steps(reply("```diff\n" + goodDiff + "```")), diff: goodDiff, calls: 1},
		{name: "prose around a diff", steps: steps(reply("Fix:\n```diff\n" + goodDiff + "```\nThis fixes header.py.")), diff: goodDiff, calls: 1},
		{name: "two diffs", steps: steps(reply("```diff\n" + goodDiff + "```\n```diff\n" + plainDiff + "```")), refuse: "2 fenced diffs", calls: 1},
		{name: "prose names a denied path", steps: steps(reply("Also edit pyproject.toml.\n" + goodDiff)), refuse: "a path the card denies", calls: 1},
		{name: "diff touches a denied path", steps: steps(reply(deniedDiff)), refuse: "touches docs/guide.md", calls: 1},
		{name: "suggests raising the budget", steps: steps(reply(goodDiff + "\nYou may need to raise the budget to 4 files.")), refuse: "change the card", calls: 1},
		{name: "oversized reply", steps: steps(reply(strings.Repeat("x", 4096))), opts: Options{MaxReply: 1024}, fail: "larger than 1024 bytes", calls: 1},
		{name: "oversized with content-length is not retried", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100000")
			w.Write([]byte(strings.Repeat(" ", 100000)))
		}), opts: Options{MaxReply: 1024}, fail: "larger than 1024 bytes", calls: 1},
		{name: "oversized error body is not retried", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			w.Write([]byte(strings.Repeat("e", 4096)))
		}), opts: Options{MaxReply: 1024}, fail: "larger than 1024 bytes", calls: 1},
		{name: "429 then success", steps: steps(status(429), reply(goodDiff)), diff: goodDiff, calls: 2},
		{name: "408 and 409 then success", steps: steps(status(408), status(409), reply(goodDiff)), diff: goodDiff, calls: 3},
		{name: "slow attempt times out and is retried", steps: steps(hang, reply(goodDiff)), opts: Options{Timeout: 200 * time.Millisecond}, diff: goodDiff, calls: 2},
		{name: "slow body times out", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			fmt.Fprint(w, `{"choices":`)
			w.(http.Flusher).Flush()
			hang(w, r)
		}), opts: Options{Timeout: 200 * time.Millisecond, Retries: -1}, fail: "timed out after 1 attempt(s)", calls: 1},
		{name: "non-JSON 200 body", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>welcome to the proxy</html>")
		}), fail: "not a chat completion", calls: 1},
		{name: "no choices", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"id":"x","choices":[]}`)
		}), refuse: "no choices", calls: 1},
		{name: "model refusal", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":null,"refusal":"I cannot help with that."}}]}`)
		}), refuse: "declined: I cannot help", calls: 1},
		{name: "redirect is not followed", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/v1/chat/completions", http.StatusTemporaryRedirect)
		}), fail: "HTTP 307 after 1 attempt(s): the endpoint redirects to https://elsewhere.example/", calls: 1},
		{name: "error as a plain string", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"model 'fake-model' not found"}`)
		}), fail: "HTTP 404 after 1 attempt(s): model 'fake-model' not found", calls: 1},
		{name: "error without JSON", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			fmt.Fprint(w, "<html>forbidden</html>")
		}), fail: "HTTP 403 after 1 attempt(s)", calls: 1},
		{name: "500 storm", steps: steps(status(500)), opts: Options{Retries: 2}, fail: "HTTP 500 after 3 attempt(s)", calls: 3},
		{name: "400 is not retried", steps: steps(status(400)), fail: "HTTP 400 after 1 attempt(s)", calls: 1},
		{name: "timeout", steps: steps(hang), opts: Options{Timeout: 200 * time.Millisecond, Retries: -1}, fail: "timed out", calls: 1},
		{name: "truncated", steps: steps(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"--- a/x"}}]}`)
		}), refuse: "cut off", calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, tt.steps...)
			a := adapterFor(t, srv, tt.opts)
			r, err := Draft(context.Background(), a, draftRequest())
			if err == nil {
				// What the CLI does next: the static check the gate would do.
				err = CheckProse(r.Prose, touched, denied, nil)
				for _, p := range r.Files {
					if err == nil && denied(p) {
						err = refuse(RoleDrafter, "the diff touches %s", p)
					}
				}
			}
			if got := f.count(); got != tt.calls {
				t.Errorf("endpoint saw %d call(s), want %d", got, tt.calls)
			}
			for _, h := range f.auth {
				if h != "Bearer "+testKey {
					t.Errorf("Authorization = %q, want the bearer key", h)
				}
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Fatalf("error leaks the API key: %v", err)
			}
			switch {
			case tt.diff != "":
				if err != nil || string(r.Diff) != tt.diff {
					t.Fatalf("Draft = %v, %v; want diff %q", r, err, tt.diff)
				}
			case tt.refuse != "":
				var re *RefusedError
				if !errors.As(err, &re) || !strings.Contains(re.Reason, tt.refuse) {
					t.Fatalf("Draft = %v; want refusal containing %q", err, tt.refuse)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tt.fail) {
					t.Fatalf("Draft = %v; want error containing %q", err, tt.fail)
				}
				var re *RefusedError
				if errors.As(err, &re) {
					t.Fatalf("Draft = %v: trouble, not a refusal", err)
				}
			}
		})
	}
}

func steps(s ...func(http.ResponseWriter, *http.Request)) []func(http.ResponseWriter, *http.Request) {
	return s
}

func TestOpenAIRequestShape(t *testing.T) {
	f, srv := newFake(t, reply(goodDiff))
	a := adapterFor(t, srv, Options{})
	if _, err := Draft(context.Background(), a, draftRequest()); err != nil {
		t.Fatal(err)
	}
	req := f.reqs[0]
	if req["model"] != "fake-model" {
		t.Errorf("model = %v, want fake-model", req["model"])
	}
	msgs := req["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != draftRequest().Prompt {
		t.Errorf("messages = %v, want exactly the prompt", msgs)
	}
	if _, ok := req["response_format"]; ok {
		t.Errorf("a drafter asked for JSON output: %v", req["response_format"])
	}
}

func TestOpenAIConfig(t *testing.T) {
	tests := []struct {
		env  map[string]string
		opts Options
		want string
	}{
		{env: map[string]string{}, want: "no API key: $OPENAI_API_KEY is empty"},
		{env: map[string]string{"OPENAI_API_KEY": "k"}, opts: Options{KeyEnv: "MY_KEY"}, want: "no API key: $MY_KEY is empty"},
		{env: map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "ftp://x"}, want: "not an http(s) URL"},
		{env: map[string]string{"OPENAI_API_KEY": "k"}, opts: Options{BaseURL: "https://user:pw@example.org/v1"}, want: "carries credentials"},
		{env: map[string]string{"OPENAI_API_KEY": "sk-1\n"}, want: "contains a control character"},
		{env: map[string]string{"MY_KEY": "k"}, opts: Options{KeyEnv: "MY_KEY", BaseURL: "http://127.0.0.1:1/v1"}},
	}
	for _, tt := range tests {
		o := tt.opts
		o.Getenv = func(k string) string { return tt.env[k] }
		_, err := New(Spec{Kind: KindOpenAI, Model: "m"}, o)
		if tt.want == "" {
			if err != nil {
				t.Errorf("New(%v, %v) = %v, want ok", tt.env, tt.opts, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%v, %v) = %v, want %q", tt.env, tt.opts, err, tt.want)
		}
	}
}

func resultReply(t *testing.T, verdict string, findings ...map[string]any) string {
	r := goodResult(verdict, findings...)
	if verdict != "clean" {
		r["lens_executions"].([]any)[0].(map[string]any)["verdict"] = verdict
	}
	return string(mustJSON(t, r))
}

func TestOpenAIReviewer(t *testing.T) {
	tests := []struct {
		name    string
		content string
		verdict string
		refuse  string
	}{
		{name: "clean", content: resultReply(t, "clean"), verdict: "clean"},
		{name: "fenced json", content: "```json\n" + resultReply(t, "changes_required", finding("todo-1", "blocking")) + "\n```", verdict: "changes_required"},
		{name: "prose", content: "Looks fine to me!", refuse: "not one JSON object"},
		{name: "clean with blocking", content: resultReply(t, "clean", finding("todo-1", "blocking")), refuse: "blocking"},
		{name: "other head", content: strings.ReplaceAll(resultReply(t, "clean"), headSHA, otherSHA), refuse: "bound to head"},
		{name: "schema", content: `{"verdict":"clean"}`, refuse: "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, reply(tt.content))
			a := adapterFor(t, srv, Options{})
			r, err := Review(context.Background(), a, testPacket(), "", nil)
			if tt.refuse != "" {
				var re *RefusedError
				if r != nil || !errors.As(err, &re) || !strings.Contains(re.Error(), tt.refuse) {
					t.Fatalf("Review = %v, %v; want refusal %q", r, err, tt.refuse)
				}
				return
			}
			if err != nil || r.Verdict != tt.verdict {
				t.Fatalf("Review = %v, %v; want verdict %s", r, err, tt.verdict)
			}
			req := f.reqs[0]
			if rf, _ := req["response_format"].(map[string]any); rf["type"] != "json_object" {
				t.Errorf("response_format = %v, want json_object", req["response_format"])
			}
			msgs := req["messages"].([]any)
			if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["role"] != "user" {
				t.Errorf("messages = %v, want the instructions as system, the packet as user", msgs)
			}
			user := msgs[len(msgs)-1].(map[string]any)["content"].(string)
			if !strings.Contains(user, headSHA) || !strings.Contains(user, `"schema_version":"1.0"`) {
				t.Errorf("reviewer prompt lacks the packet: %q", user)
			}
		})
	}
}

func TestOpenAIDecider(t *testing.T) {
	req := &DecideRequest{SchemaVersion: RequestSchemaVersion, ChangeContract: json.RawMessage(`{"goal":"x"}`),
		Budget: FixBudget{RemainingCycles: 2}}
	var f1, f2 Finding
	json.Unmarshal(mustJSON(t, finding("a", "blocking")), &f1)
	json.Unmarshal(mustJSON(t, finding("b", "defer")), &f2)
	req.Findings = []Finding{f1, f2}
	tests := []struct {
		content string
		refuse  string
	}{
		{content: `{"dispositions":[{"finding_id":"a","disposition":"accepted","rationale":"real"},{"finding_id":"b","disposition":"deferred","rationale":"later"}]}`},
		{content: `{"dispositions":[{"finding_id":"a","disposition":"accepted","rationale":"real"}]}`, refuse: `finding "b" has no disposition`},
		{content: `{"dispositions":[{"finding_id":"a","disposition":"accepted","rationale":"r"},{"finding_id":"a","disposition":"rejected","rationale":"r"},{"finding_id":"b","disposition":"deferred","rationale":"r"}]}`, refuse: "two dispositions"},
		{content: `{"dispositions":[{"finding_id":"c","disposition":"accepted","rationale":"r"}]}`, refuse: "not asked about"},
		{content: `{"dispositions":[{"finding_id":"a","disposition":"maybe","rationale":"r"}]}`, refuse: "schema"},
	}
	for _, tt := range tests {
		_, srv := newFake(t, reply(tt.content))
		ds, err := Decide(context.Background(), adapterFor(t, srv, Options{}), req)
		if tt.refuse == "" {
			if err != nil || len(ds) != 2 {
				t.Errorf("Decide(%s) = %v, %v; want two dispositions", tt.content, ds, err)
			}
			continue
		}
		var re *RefusedError
		if ds != nil || !errors.As(err, &re) || !strings.Contains(re.Error(), tt.refuse) {
			t.Errorf("Decide(%s) = %v, %v; want refusal %q", tt.content, ds, err, tt.refuse)
		}
	}
}

func TestOpenAIReviewerNeedsInlineDiff(t *testing.T) {
	f, srv := newFake(t, reply(resultReply(t, "clean")))
	p := testPacket()
	p.Candidate.Diff = PacketDiff{Format: "unified_diff", Complete: true, Path: "/tmp/candidate.diff"}
	r, err := Review(context.Background(), adapterFor(t, srv, Options{}), p, "", nil)
	if r != nil || err == nil || !strings.Contains(err.Error(), "inline") {
		t.Fatalf("Review with a path diff = %v, %v; want an error asking for the diff inline", r, err)
	}
	if f.count() != 0 {
		t.Fatalf("the endpoint was called %d time(s) for a packet it cannot read", f.count())
	}
}

// TestOpenAIHeaders checks the request carries exactly failpass's headers:
// nothing of the tool's environment reaches the endpoint.
func TestOpenAIHeaders(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-stray")
	t.Setenv("OPENAI_PROJECT_ID", "proj-stray")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Stray: 1")
	f, srv := newFake(t, reply(goodDiff))
	if _, err := Draft(context.Background(), adapterFor(t, srv, Options{}), draftRequest()); err != nil {
		t.Fatal(err)
	}
	h := f.hdrs[0]
	want := map[string]string{
		"Authorization": "Bearer " + testKey,
		"Content-Type":  "application/json",
		"Accept":        "application/json",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if ua := h.Get("User-Agent"); !strings.HasPrefix(ua, "failpass/") || strings.ContainsAny(ua, " \t") {
		t.Errorf("User-Agent = %q, want failpass/<version>", ua)
	}
	// What net/http adds on its own is fine; anything else came from
	// somewhere it should not have.
	allowed := map[string]bool{"Authorization": true, "Content-Type": true, "Accept": true,
		"User-Agent": true, "Accept-Encoding": true, "Content-Length": true}
	for k := range h {
		if !allowed[k] {
			t.Errorf("request carries header %s: %q", k, h.Values(k))
		}
	}
}

// TestOpenAIRetryAfter checks a Retry-After hint sets the wait before the
// next attempt, in place of the plain backoff (at least 375 ms for the
// first retry). The waits are recorded, not slept, so the machine's load
// cannot move the result.
func TestOpenAIRetryAfter(t *testing.T) {
	hint := func(v string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", v)
			w.WriteHeader(503)
		}
	}
	tests := []struct {
		name     string
		header   string
		min, max time.Duration
	}{
		{name: "seconds", header: "0.1", min: 100 * time.Millisecond, max: 100 * time.Millisecond},
		{name: "HTTP date in the past", header: "Mon, 02 Jan 2006 15:04:05 GMT", min: 0, max: 0},
		{name: "no hint", header: "", min: 375 * time.Millisecond, max: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, hint(tt.header), reply(goodDiff))
			a := adapterFor(t, srv, Options{})
			var waits []time.Duration
			a.(*openAIAdapter).wait = func(ctx context.Context, d time.Duration) bool {
				waits = append(waits, d)
				return true
			}
			if _, err := Draft(context.Background(), a, draftRequest()); err != nil {
				t.Fatal(err)
			}
			if len(waits) != 1 || waits[0] < tt.min || waits[0] > tt.max {
				t.Errorf("Retry-After %q: waits %v, want one within [%v, %v]", tt.header, waits, tt.min, tt.max)
			}
			if f.count() != 2 {
				t.Errorf("endpoint saw %d call(s), want 2", f.count())
			}
		})
	}
}

// TestOpenAINotRetried checks statuses that will fail the same way again
// end the call at once, keeping the status.
func TestOpenAINotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 422} {
		f, srv := newFake(t, status(code))
		_, err := adapterFor(t, srv, Options{Retries: 5}).Call(context.Background(), RoleDrafter, mustJSON(t, draftRequest()), "")
		var ae *AdapterError
		if !errors.As(err, &ae) || ae.Status != code || ae.TimedOut {
			t.Errorf("Call against HTTP %d = %v, want an AdapterError with that status", code, err)
		}
		if f.count() != 1 {
			t.Errorf("Call against HTTP %d: endpoint saw %d call(s), want 1", code, f.count())
		}
	}
}

// TestOpenAICancelDuringBackoff checks a cancelled context ends the call at
// once, even in the middle of a long wait the server asked for.
func TestOpenAICancelDuringBackoff(t *testing.T) {
	first := make(chan struct{}, 1)
	f, srv := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After-Ms", "5000")
		w.WriteHeader(503)
		first <- struct{}{}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-first
		time.Sleep(50 * time.Millisecond) // the call is in its backoff now
		cancel()
	}()
	start := time.Now()
	_, err := adapterFor(t, srv, Options{}).Call(ctx, RoleDrafter, mustJSON(t, draftRequest()), "")
	// The server asked for 5 s; well under that means the cancel cut the
	// wait short, whatever the machine's load.
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("cancelled call returned after %v, want before the 5 s wait ended", took)
	}
	var ae *AdapterError
	if !errors.As(err, &ae) || !errors.Is(err, context.Canceled) || !strings.Contains(ae.Reason, "cancelled after 1 attempt(s)") || ae.TimedOut {
		t.Fatalf("cancelled Call = %v, want an AdapterError wrapping context.Canceled", err)
	}
	if f.count() != 1 {
		t.Errorf("endpoint saw %d call(s), want 1", f.count())
	}
}

// TestOpenAIConnectionRefused checks a dead endpoint fails with the cause
// and the attempt count.
func TestOpenAIConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err := adapterFor(t, srv, Options{Retries: -1}).Call(context.Background(), RoleDrafter, mustJSON(t, draftRequest()), "")
	var ae *AdapterError
	if !errors.As(err, &ae) || ae.Status != 0 || ae.TimedOut || !strings.Contains(ae.Reason, "request failed after 1 attempt(s)") {
		t.Fatalf("Call against a closed port = %v, want a request failure", err)
	}
}
