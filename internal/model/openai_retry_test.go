package model

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryableStatus(t *testing.T) {
	tests := []struct {
		code int
		want bool
	}{
		{200, false}, {301, false}, {307, false}, {400, false}, {401, false}, {403, false},
		{404, false}, {413, false}, {422, false}, {408, true}, {409, true}, {429, true},
		{500, true}, {502, true}, {503, true}, {504, true}, {599, true}, {600, false},
	}
	for _, tt := range tests {
		if got := retryableStatus(tt.code); got != tt.want {
			t.Errorf("retryableStatus(%d) = %v, want %v", tt.code, got, tt.want)
		}
	}
}

func TestRetryWait(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name   string
		retry  int
		h      http.Header
		jitter float64
		want   time.Duration
	}{
		{name: "first retry", retry: 0, want: 500 * time.Millisecond},
		{name: "second retry", retry: 1, want: time.Second},
		{name: "fourth retry", retry: 3, want: 4 * time.Second},
		{name: "capped", retry: 4, want: 8 * time.Second},
		{name: "far past the cap", retry: 100, want: 8 * time.Second},
		{name: "negative retry", retry: -3, want: 500 * time.Millisecond},
		{name: "jitter takes up to a quarter", retry: 1, jitter: 0.5, want: 875 * time.Millisecond},
		{name: "jitter out of range ignored", retry: 1, jitter: 7, want: time.Second},
		{name: "Retry-After-Ms", h: hdr("Retry-After-Ms", "5"), jitter: 0.9, want: 5 * time.Millisecond},
		{name: "Retry-After-Ms fraction", h: hdr("Retry-After-Ms", "2.5"), want: 2500 * time.Microsecond},
		{name: "Retry-After-Ms wins", h: hdr("Retry-After-Ms", "20", "Retry-After", "3"), want: 20 * time.Millisecond},
		{name: "bad Retry-After-Ms falls to Retry-After", h: hdr("Retry-After-Ms", "soon", "Retry-After", "3"), want: 3 * time.Second},
		{name: "Retry-After seconds", h: hdr("Retry-After", "3"), want: 3 * time.Second},
		{name: "Retry-After zero", h: hdr("Retry-After", "0"), retry: 2, want: 0},
		{name: "Retry-After clamped to the cap", h: hdr("Retry-After", "30"), want: 8 * time.Second},
		{name: "Retry-After at the limit", h: hdr("Retry-After", "60"), want: 8 * time.Second},
		{name: "Retry-After over the limit", h: hdr("Retry-After", "61"), retry: 1, want: time.Second},
		{name: "Retry-After-Ms over the limit", h: hdr("Retry-After-Ms", "60001"), want: 500 * time.Millisecond},
		{name: "Retry-After negative", h: hdr("Retry-After", "-1"), want: 500 * time.Millisecond},
		{name: "Retry-After NaN", h: hdr("Retry-After", "NaN"), want: 500 * time.Millisecond},
		{name: "Retry-After Inf", h: hdr("Retry-After", "+Inf"), want: 500 * time.Millisecond},
		{name: "Retry-After huge", h: hdr("Retry-After", "1e308"), want: 500 * time.Millisecond},
		{name: "Retry-After garbage", h: hdr("Retry-After", "later please"), want: 500 * time.Millisecond},
		{name: "Retry-After date", h: hdr("Retry-After", date(5*time.Second)), want: 5 * time.Second},
		{name: "Retry-After date clamped", h: hdr("Retry-After", date(50*time.Second)), want: 8 * time.Second},
		{name: "Retry-After date in the past", h: hdr("Retry-After", date(-time.Hour)), retry: 3, want: 0},
		{name: "Retry-After date too far", h: hdr("Retry-After", date(2*time.Minute)), want: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		h := tt.h
		if h == nil {
			h = http.Header{}
		}
		if got := retryWait(tt.retry, h, now, tt.jitter); got != tt.want {
			t.Errorf("%s: retryWait(%d, %v, jitter %v) = %v, want %v", tt.name, tt.retry, h, tt.jitter, got, tt.want)
		}
	}
}

// FuzzRetryWait checks no header, however hostile, makes a wait negative
// or longer than the cap the call's deadline counts on.
func FuzzRetryWait(f *testing.F) {
	f.Add(0, "5", "", 0.0)
	f.Add(3, "", "120", 0.3)
	f.Add(1, "-1", "Mon, 02 Jan 2006 15:04:05 GMT", 0.99)
	f.Add(-7, "0x1p-2", "1e-400", -1.0)
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, retry int, ms, ra string, jitter float64) {
		h := http.Header{}
		h.Set("Retry-After-Ms", ms)
		h.Set("Retry-After", ra)
		if got := retryWait(retry, h, now, jitter); got < 0 || got > backoffCap {
			t.Fatalf("retryWait(%d, %q, %q, %v) = %v, want within [0, %v]", retry, ms, ra, jitter, got, backoffCap)
		}
	})
}
