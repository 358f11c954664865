package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// defaultBaseURL is used when neither --base-url nor OPENAI_BASE_URL is set.
const defaultBaseURL = "https://api.openai.com/v1/"

// maxErrorText bounds how much of an endpoint's error message is repeated.
const maxErrorText = 200

// openAIAdapter calls an OpenAI-compatible chat-completions endpoint through
// openai-go. The client is built without the SDK's environment defaults:
// failpass reads its own variables (through Options.Getenv), so a stray
// OPENAI_ORG_ID or OPENAI_CUSTOM_HEADERS in the tool's environment cannot
// reach the endpoint.
type openAIAdapter struct {
	model   string
	baseURL string
	key     string
	opts    Options
}

func newOpenAI(modelName string, opts Options) (*openAIAdapter, error) {
	base := opts.BaseURL
	if base == "" {
		base = opts.Getenv(DefaultBaseURLEnv)
	}
	if base == "" {
		base = defaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("base URL %q is not an http(s) URL", base),
			Hint: "set --base-url or OPENAI_BASE_URL to e.g. https://api.openai.com/v1"}
	}
	if u.User != nil {
		// Credentials in a URL end up in logs and error messages.
		return nil, &ConfigError{Msg: "base URL carries credentials",
			Hint: fmt.Sprintf("put the API key in $%s, not in the URL", opts.KeyEnv)}
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	key := opts.Getenv(opts.KeyEnv)
	if key == "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("no API key: $%s is empty", opts.KeyEnv),
			Hint: fmt.Sprintf("export %s=... (or name another variable with --key-env)", opts.KeyEnv)}
	}
	return &openAIAdapter{model: modelName, baseURL: base, key: key, opts: opts}, nil
}

// ConfigError is an adapter that cannot be set up: no key, a bad URL.
type ConfigError struct {
	Msg  string
	Hint string
}

func (e *ConfigError) Error() string { return e.Msg }

// Hints gives the fix.
func (e *ConfigError) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// boundedTransport refuses response bodies over max bytes. It sits under
// the SDK, so no layer above ever holds more than max bytes of a reply.
type boundedTransport struct {
	next     http.RoundTripper
	max      int64
	mu       sync.Mutex
	oversize bool
	attempts int
	status   int
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.attempts++
	t.mu.Unlock()
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.status = res.StatusCode
	t.mu.Unlock()
	// An oversize reply is an answer, not a transport failure: returning
	// an error here would make the SDK retry it. The body fails on read
	// instead (at once when Content-Length already says too much).
	left := t.max
	if res.ContentLength > t.max {
		left = -1
	}
	res.Body = &boundedBody{rc: res.Body, left: left, t: t}
	return res, nil
}

func (t *boundedTransport) markOversize() {
	t.mu.Lock()
	t.oversize = true
	t.mu.Unlock()
}

type boundedBody struct {
	rc   io.ReadCloser
	left int64
	t    *boundedTransport
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		b.t.markOversize()
		return 0, &OversizeError{What: "model reply", Limit: b.t.max}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		b.t.markOversize()
		return 0, &OversizeError{What: "model reply", Limit: b.t.max}
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// Call sends one chat completion for role and returns the reply text.
func (a *openAIAdapter) Call(ctx context.Context, role Role, request []byte, workdir string) ([]byte, error) {
	if len(request) > MaxRequest {
		return nil, &OversizeError{What: "request", Limit: MaxRequest}
	}
	p, err := PromptFor(role, request)
	if err != nil {
		return nil, err
	}
	tr := &boundedTransport{next: http.DefaultTransport, max: a.opts.MaxReply}
	svc := openai.NewChatCompletionService(
		option.WithBaseURL(a.baseURL),
		option.WithAPIKey(a.key),
		option.WithHTTPClient(&http.Client{Transport: tr}),
		option.WithMaxRetries(a.opts.Retries),
		option.WithMaxRetryDelay(8*time.Second),
		option.WithRequestTimeout(a.opts.Timeout),
	)
	msgs := []openai.ChatCompletionMessageParamUnion{}
	if p.System != "" {
		msgs = append(msgs, openai.SystemMessage(p.System))
	}
	msgs = append(msgs, openai.UserMessage(p.User))
	params := openai.ChatCompletionNewParams{
		Model:    a.model,
		Messages: msgs,
	}
	if p.JSON {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONObject: &openai.ResponseFormatJSONObjectParam{},
		}
	}
	// The whole call, retries and backoff included, has a deadline too, so
	// a storm of slow failures cannot hold the tool longer than this.
	overall := a.opts.Timeout*time.Duration(a.opts.Retries+1) + 8*time.Second*time.Duration(a.opts.Retries)
	cctx, cancel := context.WithTimeout(ctx, overall)
	defer cancel()
	res, err := svc.New(cctx, params)
	tr.mu.Lock()
	attempts, status, oversize := tr.attempts, tr.status, tr.oversize
	tr.mu.Unlock()
	spec := "openai/" + a.model
	if oversize {
		return nil, &OversizeError{What: spec + " reply", Limit: a.opts.MaxReply}
	}
	if err != nil {
		ae := &AdapterError{Spec: spec, Role: role, Exit: -1, Status: status}
		var apiErr *openai.Error
		switch {
		case errors.As(err, &apiErr):
			ae.Status = apiErr.StatusCode
			ae.Reason = fmt.Sprintf("HTTP %d after %d attempt(s)", apiErr.StatusCode, attempts)
			if m := strings.TrimSpace(apiErr.Message); m != "" {
				ae.Reason += ": " + clip(m, maxErrorText)
			}
		case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil:
			ae.TimedOut = true
			ae.Reason = fmt.Sprintf("timed out after %d attempt(s) (timeout %s each)", attempts, a.opts.Timeout)
		default:
			ae.TimedOut = errors.Is(err, context.DeadlineExceeded)
			ae.Reason = fmt.Sprintf("request failed after %d attempt(s): %s", attempts, clip(err.Error(), maxErrorText))
		}
		ae.Reason = a.redact(ae.Reason)
		if ctx.Err() != nil {
			ae.Err = ctx.Err()
		}
		return nil, ae
	}
	if len(res.Choices) == 0 {
		return nil, refuse(role, "the endpoint returned no choices")
	}
	ch := res.Choices[0]
	if ch.FinishReason == "length" {
		return nil, refuse(role, "the reply was cut off at the model's length limit")
	}
	if ch.Message.Refusal != "" {
		return nil, refuse(role, "the model declined: %s", clip(a.redact(ch.Message.Refusal), maxErrorText))
	}
	out := []byte(ch.Message.Content)
	if int64(len(out)) > a.opts.MaxReply {
		return nil, &OversizeError{What: spec + " reply", Limit: a.opts.MaxReply}
	}
	return out, nil
}

// redact removes the API key from text that may reach a log, an error or
// --json output (an endpoint can echo a request header back).
func (a *openAIAdapter) redact(s string) string {
	if a.key == "" {
		return s
	}
	return strings.ReplaceAll(s, a.key, "[redacted]")
}

// clip folds whitespace and cuts s to n runes, so one hostile line cannot
// flood a terminal.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
