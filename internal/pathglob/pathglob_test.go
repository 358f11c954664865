package pathglob

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		// A pattern with no "/" matches the basename at any depth.
		{"pyproject.toml", "pyproject.toml", true},
		{"pyproject.toml", "sub/pyproject.toml", true},
		{"pyproject.toml", "pyproject.toml.bak", false},
		{"pyproject.toml", "xpyproject.toml", false},
		{"*.lock", "Cargo.lock", true},
		{"*.lock", "a/b/c/yarn.lock", true},
		{"*.lock", "lock", false},
		// ... and, naming a directory, everything under it.
		{"vendor", "vendor", true},
		{"vendor", "vendor/a/b.go", true},
		{"vendor", "src/vendor/a.go", true},
		{"vendor", "vendors/a.go", false},
		{"vendor", "src/myvendor/a.go", false},
		// "*" stays inside one segment.
		{"src/*.c", "src/a.c", true},
		{"src/*.c", "src/sub/a.c", false},
		{"src/*.c", "other/src/a.c", false},
		{"*", "anything/at/all", true},
		{"*", ".hidden", true},
		{"?.go", "a.go", true},
		{"?.go", "ab.go", false},
		{"?.go", "x/a.go", true},
		{"[ab].go", "a.go", true},
		{"[ab].go", "c.go", false},
		{"[^ab].go", "c.go", true},
		{"[^ab].go", "a.go", false},
		{"[a-c]x", "bx", true},
		{"[*]", "*", true},
		{"[*]", "a", false},
		// "**" crosses segments.
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/b/c", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**/b", "z/a/b", false},
		{"**/x", "x", true},
		{"**/x", "a/b/x", true},
		{"**/x", "a/b/xy", false},
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"**/", "a/b/c", true},
		// "dir/" and "dir/**" both mean everything under dir, and dir itself.
		{"docs/**", "docs/a.md", true},
		{"docs/**", "docs/x/y/z.md", true},
		{"docs/**", "docs", true},
		{"docs/**", "docsy/a.md", false},
		{"docs/**", "sub/docs/a.md", false},
		{"docs/", "docs/a.md", true},
		{"docs/", "docs", true},
		{"docs/", "sub/docs/a.md", true},
		{"docs/", "docsy", false},
		{".github/**", ".github/workflows/ci.yml", true},
		{".github/**", "x/.github/workflows/ci.yml", false},
		// A leading "/" or an inner "/" anchors at the root.
		{"/setup.cfg", "setup.cfg", true},
		{"/setup.cfg", "sub/setup.cfg", false},
		{"/docs/", "docs/a", true},
		{"/docs/", "x/docs/a", false},
		{"src/gen", "src/gen/a.go", true},
		{"src/gen", "x/src/gen/a.go", false},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/b/c", false},
		// Paths are cleaned; the empty path matches nothing.
		{"docs/**", "./docs/a", true},
		{"docs/**", "x/../docs/a", true},
		{"docs/**", "/docs/a", true},
		{"**", "", false},
		{"**", ".", false},
		// Case-sensitive, like git.
		{"README.md", "readme.md", false},
		{"docs/**", "Docs/a", false},
	}
	for _, tt := range tests {
		p, err := Compile(tt.pattern)
		if err != nil {
			t.Errorf("Compile(%q) = %v, want no error", tt.pattern, err)
			continue
		}
		if got := p.Match(tt.path); got != tt.want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		pattern string
		msg     string
	}{
		{"", "empty"},
		{"!docs/**", "negation"},
		{"!x", "negation"},
		{"/", "names no path"},
		{"//", "names no path"},
		{"a//b", "empty path segment"},
		{"../x", `".." segment`},
		{"a/../b", `".." segment`},
		{"./a", `"." segment`},
		{"a/./b", `"." segment`},
		{`a\b`, "backslash"},
		{`C:\x`, "backslash"},
		{"a**", "inside a name"},
		{"**.go", "inside a name"},
		{"a/b**/c", "inside a name"},
		{"[!a].go", "[!...]"},
		{"[abc", "malformed"},
		{"a/[]", "malformed"},
		{"docs\n", "control"},
		{"a\tb", "control"},
		{"do\u202ecs/**", "U+202E"},
		{"\u200bdocs", "U+200B"},
		{"\ufeffdocs", "U+FEFF"},
		{"a\u2028b", "U+2028"},
		{"a\x00b", "U+0000"},
		{"bad\xffutf8", "U+FFFD"},
		{strings.Repeat("a", MaxLen+1), "longer than"},
	}
	for _, tt := range tests {
		p, err := Compile(tt.pattern)
		if err == nil || p != nil {
			t.Errorf("Compile(%q) = %v, %v, want nil and an error", tt.pattern, p, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Compile(%q) error = %q, want it to mention %q", tt.pattern, err, tt.msg)
		}
		if e, ok := err.(*Error); !ok || len(e.Hints()) == 0 {
			t.Errorf("Compile(%q) error = %#v, want an *Error with a hint", tt.pattern, err)
		}
	}
}

func TestString(t *testing.T) {
	for _, s := range []string{"docs/**", "/setup.cfg", "docs/", "*.lock", "a/**/b"} {
		if got := MustCompile(s).String(); got != s {
			t.Errorf("Compile(%q).String() = %q, want %q", s, got, s)
		}
	}
	var nilp *Pattern
	if nilp.Match("a") || nilp.String() != "" {
		t.Errorf("nil Pattern matched or printed something")
	}
}

func TestMatchAny(t *testing.T) {
	ps := []*Pattern{MustCompile("docs/**"), MustCompile("*.toml")}
	if p, ok := MatchAny(ps, "a/pyproject.toml"); !ok || p.String() != "*.toml" {
		t.Errorf("MatchAny(a/pyproject.toml) = %v, %v, want *.toml, true", p, ok)
	}
	if p, ok := MatchAny(ps, "src/a.go"); ok {
		t.Errorf("MatchAny(src/a.go) = %v, true, want no match", p)
	}
}

// TestManyStars guards the linear matcher: a pattern of many "**" against a
// deep path must not backtrack exponentially.
func TestManyStars(t *testing.T) {
	pat := strings.Repeat("**/a/", 40) + "b"
	p := MustCompile(pat)
	deep := strings.Repeat("a/", 200) + "c"
	if p.Match(deep) {
		t.Errorf("Compile(%q).Match(deep) = true, want false", pat)
	}
}

func FuzzGlob(f *testing.F) {
	for _, s := range []string{"docs/**", "*.lock", "a/**/b", "/setup.cfg", "docs/", "[ab]?", "!x", "a//b", "**", "[^a]"} {
		f.Add(s, "docs/a/b.md")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := Compile(pattern)
		if err != nil {
			if p != nil {
				t.Fatalf("Compile(%q) returned a pattern and an error", pattern)
			}
			return
		}
		if p.String() != pattern {
			t.Fatalf("Compile(%q).String() = %q", pattern, p.String())
		}
		// Recompiling the printed form is the same language.
		q, err := Compile(p.String())
		if err != nil || q.Match(name) != p.Match(name) {
			t.Fatalf("Compile(Compile(%q).String()) disagrees on %q", pattern, name)
		}
		// The directory rule: a match of a path is a match of all under it.
		if p.Match(name) && !p.Match(name+"/child") {
			t.Fatalf("Compile(%q) matches %q but not %q/child", pattern, name, name)
		}
		// A literal pattern matches the path it spells.
		if !strings.ContainsAny(pattern, "*?[") {
			if !p.Match(strings.Trim(pattern, "/")) {
				t.Fatalf("literal Compile(%q) does not match itself", pattern)
			}
		}
	})
}

// MustCompile (tests) is Compile for patterns known to be valid; it panics otherwise.
func MustCompile(pattern string) *Pattern {
	p, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return p
}
