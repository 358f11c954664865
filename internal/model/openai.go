package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/version"
)

// defaultBaseURL is used when neither --base-url nor OPENAI_BASE_URL is set.
const defaultBaseURL = "https://api.openai.com/v1/"

// maxErrorText bounds how much of an endpoint's error message is repeated.
const maxErrorText = 200

// openAIAdapter calls an OpenAI-compatible chat-completions endpoint with
// net/http: one POST, a small JSON body, a small decoded reply.
//
// Design note: this replaced github.com/openai/openai-go, used for this one
// call, which made the binary nearly three times larger and cost every failpass
// start (and every sandboxed re-execution) milliseconds of package init.
// The adapter sends exactly the headers below and reads only its own
// variables (through Options.Getenv), so a stray OPENAI_ORG_ID or
// OPENAI_CUSTOM_HEADERS in the tool's environment cannot reach the endpoint.
type openAIAdapter struct {
	model   string
	baseURL string // ends in "/"
	key     string
	opts    Options
	client  *http.Client
	// wait sleeps between attempts; tests replace it to see the waits
	// asked for without spending them.
	wait func(ctx context.Context, d time.Duration) bool
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
	if strings.ContainsFunc(key, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		// net/http would refuse the header on every attempt; say why once.
		return nil, &ConfigError{Msg: fmt.Sprintf("API key in $%s contains a control character (a trailing newline?)", opts.KeyEnv),
			Hint: fmt.Sprintf("export %s without the newline, e.g. %s=$(tr -d '\\n' < keyfile)", opts.KeyEnv, opts.KeyEnv)}
	}
	client := &http.Client{
		// An API endpoint does not redirect; following one could carry the
		// request body (and, on the same host, the key) somewhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &openAIAdapter{model: modelName, baseURL: base, key: key, opts: opts, client: client, wait: sleep}, nil
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

// chatRequest is the body of POST {base}chat/completions: only the fields
// failpass sets.
type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

// chatResponse is the part of a chat completion failpass reads. Unknown
// fields are ignored, so an endpoint's extensions do not break the call.
type chatResponse struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content string `json:"content"`
			Refusal string `json:"refusal"`
		} `json:"message"`
	} `json:"choices"`
}

// exchange is what one HTTP attempt ended with.
type exchange struct {
	status   int         // 0 when no response arrived
	header   http.Header // the response's, for Retry-After
	body     []byte      // at most MaxReply bytes
	err      error       // the request or the body read failed
	timedOut bool        // the per-attempt timeout (or the call's deadline) hit
	oversize bool        // the reply is over MaxReply: never retried
}

// retryable reports whether another attempt may fare better.
func (r *exchange) retryable() bool {
	if r.oversize {
		return false
	}
	if r.err != nil {
		return true // connection refused or reset, per-attempt timeout
	}
	return retryableStatus(r.status)
}

// Call sends one chat completion for role and returns the reply text.
func (a *openAIAdapter) Call(ctx context.Context, role Role, request []byte, workdir string) ([]byte, error) {
	if len(request) > MaxRequest {
		return nil, &OversizeError{What: "request", Limit: MaxRequest}
	}
	p, err := PromptFor(role, request)
	if err != nil {
		return nil, err
	}
	cr := chatRequest{Model: a.model}
	if p.System != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: p.System})
	}
	cr.Messages = append(cr.Messages, chatMessage{Role: "user", Content: p.User})
	if p.JSON {
		cr.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	body, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("model: encoding the chat request: %w", err)
	}
	// The whole call, retries and backoff included, has a deadline too, so
	// a storm of slow failures cannot hold the tool longer than this.
	overall := a.opts.Timeout*time.Duration(a.opts.Retries+1) + backoffCap*time.Duration(a.opts.Retries)
	cctx, cancel := context.WithTimeout(ctx, overall)
	defer cancel()
	spec := "openai/" + a.model

	var last exchange
	status, attempts := 0, 0
	for {
		attempts++
		last = a.send(cctx, body)
		if last.status != 0 {
			status = last.status
		}
		if last.oversize {
			return nil, &OversizeError{What: spec + " reply", Limit: a.opts.MaxReply}
		}
		if last.err == nil && last.status/100 == 2 {
			break
		}
		if attempts > a.opts.Retries || !last.retryable() ||
			!a.wait(cctx, retryWait(attempts-1, last.header, time.Now(), rand.Float64())) {
			break
		}
	}

	if last.err != nil || last.status/100 != 2 {
		ae := &AdapterError{Spec: spec, Role: role, Exit: -1, Status: status}
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			ae.Reason = fmt.Sprintf("cancelled after %d attempt(s)", attempts)
		case last.timedOut || cctx.Err() != nil:
			ae.TimedOut = true
			ae.Reason = fmt.Sprintf("timed out after %d attempt(s) (timeout %s each)", attempts, a.opts.Timeout)
		case last.err != nil:
			ae.Reason = fmt.Sprintf("request failed after %d attempt(s): %s", attempts, clip(last.err.Error(), maxErrorText))
		default:
			ae.Reason = fmt.Sprintf("HTTP %d after %d attempt(s)", last.status, attempts)
			if m := errorMessage(last); m != "" {
				ae.Reason += ": " + clip(m, maxErrorText)
			}
		}
		ae.Reason = a.redact(ae.Reason)
		ae.Err = ctx.Err()
		return nil, ae
	}

	var res chatResponse
	if err := json.Unmarshal(last.body, &res); err != nil {
		return nil, &AdapterError{Spec: spec, Role: role, Exit: -1, Status: status,
			Reason: fmt.Sprintf("HTTP %d after %d attempt(s), but the endpoint's reply is not a chat completion: %s",
				status, attempts, clip(a.redact(err.Error()), maxErrorText))}
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

// send makes one POST under the per-attempt timeout, reading at most
// MaxReply bytes of the reply. The timeout covers the body too: a server
// that trickles its reply is as slow as one that never answers.
func (a *openAIAdapter) send(ctx context.Context, body []byte) exchange {
	actx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	failed := func(err error) exchange {
		return exchange{err: err, timedOut: errors.Is(actx.Err(), context.DeadlineExceeded)}
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, a.baseURL+"chat/completions", bytes.NewReader(body))
	if err != nil {
		return failed(err)
	}
	// Exactly these headers: nothing of the tool's environment (an
	// organisation, a project, custom headers) reaches the endpoint.
	req.Header = http.Header{
		"Authorization": {"Bearer " + a.key},
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json"},
		"User-Agent":    {userAgent()},
	}
	res, err := a.client.Do(req)
	if err != nil {
		return failed(err)
	}
	defer res.Body.Close()
	r := exchange{status: res.StatusCode, header: res.Header}
	// Content-Length already saying too much fails before a byte is read.
	if res.ContentLength > a.opts.MaxReply {
		r.oversize = true
		return r
	}
	r.body, err = io.ReadAll(io.LimitReader(res.Body, a.opts.MaxReply+1))
	if int64(len(r.body)) > a.opts.MaxReply {
		r.body, r.oversize = nil, true
		return r
	}
	if err != nil {
		// A reply cut short is a connection failure, worth a retry; the
		// status stays known for the error message.
		r.err, r.timedOut = err, errors.Is(actx.Err(), context.DeadlineExceeded)
	}
	return r
}

// errorMessage is the endpoint's own words for a failed attempt:
// {"error":{"message":...}} as OpenAI writes it, {"error":"..."} as some
// compatible servers do, or where a redirect points. Anything else says
// nothing: the status is the message.
func errorMessage(r exchange) string {
	if r.status/100 == 3 {
		if loc := r.header.Get("Location"); loc != "" {
			return "the endpoint redirects to " + loc + " (set the base URL to where it points)"
		}
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(r.body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &obj) == nil {
		return strings.TrimSpace(obj.Message)
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return strings.TrimSpace(s)
	}
	return ""
}

// sleep waits for d, or until ctx is done; it reports whether the wait ran
// its course.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// userAgent names failpass and its version to the endpoint.
func userAgent() string {
	return "failpass/" + strings.TrimPrefix(version.String(), "failpass ")
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
