package model

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTrimStack(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("frame %d", i)
	}
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank lines only", "\n\n", ""},
		{"short", "a\nb", "a\nb\n"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"control characters", "a\x1b[31mred\x00\tend\n", "a\uFFFD[31mred\uFFFD\tend\n"},
		{"invalid utf-8", "a\xffb\n", "a\uFFFDb\n"},
		{"long line", strings.Repeat("x", 300), strings.Repeat("x", MaxStackLineRunes-1) + "…\n"},
		{"many lines", strings.Join(many, "\n"),
			strings.Join(many[:19], "\n") + "\n… 62 lines trimmed …\n" + strings.Join(many[81:], "\n") + "\n"},
	}
	for _, tt := range tests {
		if got := TrimStack(tt.in); got != tt.want {
			t.Errorf("TrimStack(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzTrimStack: the result is bounded, valid UTF-8, and a fixed point.
func FuzzTrimStack(f *testing.F) {
	f.Add("Traceback:\n  File \"a.py\", line 1\nError")
	f.Add(strings.Repeat("x\n", 100))
	f.Add(strings.Repeat("é", 500))
	f.Fuzz(func(t *testing.T, s string) {
		got := TrimStack(s)
		if !utf8.ValidString(got) {
			t.Fatalf("TrimStack(%q) is not UTF-8", s)
		}
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) > MaxStackLines {
			t.Fatalf("TrimStack(%q) has %d lines", s, len(lines))
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) > MaxStackLineRunes {
				t.Fatalf("TrimStack(%q) has a line of %d characters", s, utf8.RuneCountInString(l))
			}
		}
		if again := TrimStack(got); again != got {
			t.Fatalf("TrimStack not idempotent on %q: %q then %q", s, got, again)
		}
	})
}

func TestBuildPrompt(t *testing.T) {
	tests := []struct {
		parts PromptParts
		want  []string // section headings, in order
	}{
		{PromptParts{Card: "id: \"X\"\n"}, []string{"## Contract card", "## Instruction"}},
		{PromptParts{Card: "id: \"X\"\n", DiffStat: " a | 1 +\n"}, []string{"## Contract card", "## Candidate (git diff --stat against the base)", "## Instruction"}},
		{PromptParts{Card: "id: \"X\"\n", DiffStat: " a | 1 +\n", Stack: "boom\n"}, []string{"## Contract card", "## Candidate (git diff --stat against the base)", "## Stack", "## Instruction"}},
	}
	for _, tt := range tests {
		got := BuildPrompt(tt.parts)
		var heads []string
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, "## ") {
				heads = append(heads, l)
			}
		}
		if strings.Join(heads, "|") != strings.Join(tt.want, "|") {
			t.Errorf("BuildPrompt(%+v) sections = %q, want %q", tt.parts, heads, tt.want)
		}
		if !strings.HasSuffix(got, DraftInstruction+"\n") {
			t.Errorf("BuildPrompt(%+v) does not end with the instruction: %q", tt.parts, got)
		}
	}
}
