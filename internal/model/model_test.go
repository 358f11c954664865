package model

import (
	"errors"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		ok   bool
	}{
		{"cmd:./reviewer", Spec{Kind: KindCmd, Program: "./reviewer"}, true},
		{"cmd:/usr/local/bin/fixer", Spec{Kind: KindCmd, Program: "/usr/local/bin/fixer"}, true},
		{"openai/gpt-4o-mini", Spec{Kind: KindOpenAI, Model: "gpt-4o-mini"}, true},
		{"openai/org/model:tag", Spec{Kind: KindOpenAI, Model: "org/model:tag"}, true},
		{"cmd:", Spec{}, false},
		{"cmd:./fixer --fast", Spec{}, false},
		{"cmd: ./fixer", Spec{}, false},
		{"cmd:dir/", Spec{}, false},
		{"cmd:a\nb", Spec{}, false},
		{"openai/", Spec{}, false},
		{"openai/gpt 4", Spec{}, false},
		{"openai:gpt-4", Spec{}, false},
		{"./reviewer", Spec{}, false},
		{"", Spec{}, false},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if tt.ok != (err == nil) || got != tt.want {
			t.Errorf("ParseSpec(%q) = %v, %v, want %v (ok=%v)", tt.in, got, err, tt.want, tt.ok)
		}
		var se *SpecError
		if err != nil && !errors.As(err, &se) {
			t.Errorf("ParseSpec(%q) error %T, want *SpecError", tt.in, err)
		}
	}
}

func TestParseLenses(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"", 0, true},
		{"correctness", 1, true},
		{"correctness, code_simplicity,solution_simplicity", 3, true},
		{"aggregate", 0, false},
		{"correctness,correctness", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseLenses(tt.in)
		if tt.ok != (err == nil) || len(got) != tt.want {
			t.Errorf("ParseLenses(%q) = %v, %v, want %d lenses (ok=%v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// FuzzParseSpec: an error returns the zero Spec; an accepted spec prints
// back to itself.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"cmd:./x", "openai/m", "cmd:", "openai/a b", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if sp != (Spec{}) {
				t.Fatalf("ParseSpec(%q) = %v with error %v", s, sp, err)
			}
			return
		}
		if sp.String() != s {
			t.Fatalf("ParseSpec(%q).String() = %q", s, sp.String())
		}
	})
}
