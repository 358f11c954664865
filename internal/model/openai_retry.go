package model

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The retry policy of openai/ calls. It is pure (a status, headers and the
// time in; a decision out) so it is table-tested without a server.
const (
	// backoffBase is the wait before the first retry; it doubles each time.
	backoffBase = 500 * time.Millisecond
	// backoffCap bounds every wait between attempts, a server's own hint
	// included. The overall deadline of a call counts on it.
	backoffCap = 8 * time.Second
	// maxRetryAfter is the longest Retry-After hint taken at its word (then
	// clamped to backoffCap). A longer hint (a daily quota, a hostile
	// "come back in a year") falls back to the plain backoff.
	maxRetryAfter = 60 * time.Second
)

// retryableStatus reports whether an HTTP status is worth another attempt:
// request timeout, conflict, rate limit and server errors. Every other
// status (a bad request, a wrong key, a redirect) will fail the same way
// again.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500 && code <= 599
}

// retryWait is how long to wait before retry number retry (0 for the
// first). The server's hint wins when it is usable; otherwise the wait is
// backoffBase·2^retry, capped at backoffCap, minus up to a quarter of it
// (jitter in [0,1) says how much), so clients that failed together do not
// come back together.
func retryWait(retry int, h http.Header, now time.Time, jitter float64) time.Duration {
	if d, ok := retryAfter(h, now); ok {
		return min(d, backoffCap)
	}
	d := backoffCap
	if retry < 5 { // 0.5s·2^5 = 16s is past the cap already
		d = min(backoffBase<<max(retry, 0), backoffCap)
	}
	if jitter > 0 && jitter < 1 {
		d -= time.Duration(float64(d/4) * jitter)
	}
	return d
}

// retryAfter reads the server's hint: Retry-After-Ms (milliseconds, as
// OpenAI sends it) first, then Retry-After in seconds or as an HTTP date.
// A hint is usable when it is a finite number or a date, and between 0 and
// maxRetryAfter away; a date in the past means "now".
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if d, ok := hintDuration(v, float64(time.Millisecond)); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := hintDuration(v, float64(time.Second)); ok {
		return d, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d > maxRetryAfter {
		return 0, false
	}
	return max(d, 0), true
}

// hintDuration parses a number of units, refusing NaN, infinities,
// negatives and anything over maxRetryAfter.
func hintDuration(v string, unit float64) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f*unit > float64(maxRetryAfter) {
		return 0, false
	}
	return time.Duration(f * unit), true
}
