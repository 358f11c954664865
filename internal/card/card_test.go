package card

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustLoad(t testing.TB, path string) *Card {
	t.Helper()
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s) = %v", path, err)
	}
	return c
}

func TestRoundTrip(t *testing.T) {
	for _, path := range []string{"testdata/seed.yml", "testdata/full.yml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(path, data) // not Load: a loaded card carries its canonical form too
		if err != nil {
			t.Fatalf("Parse(%s) = %v", path, err)
		}
		out, err := Marshal(c)
		if err != nil {
			t.Fatalf("Marshal(%s) = %v", path, err)
		}
		back, err := Parse(path, out)
		if err != nil {
			t.Fatalf("Parse(Marshal(%s)) = %v\n%s", path, err, out)
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("Parse(Marshal(%s)) = %+v, want %+v", path, back, c)
		}
		again, _ := Marshal(back)
		if !bytes.Equal(again, out) {
			t.Errorf("Marshal is not idempotent on %s:\n%s\nthen\n%s", path, out, again)
		}
	}
}

func TestParseFull(t *testing.T) {
	c := mustLoad(t, "testdata/full.yml")
	exp := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if c.Expires == nil || !c.Expires.Equal(exp) || c.Expires.Location() != time.UTC {
		t.Errorf("Expires = %v, want %v in UTC", c.Expires, exp)
	}
	if c.Fail.Timeout != 90*time.Second || c.Pass.Timeout != 90*time.Minute || c.Invariant.Timeout != DefaultTimeout {
		t.Errorf("timeouts = %v %v %v, want 1m30s 1h30m 10m", c.Fail.Timeout, c.Pass.Timeout, c.Invariant.Timeout)
	}
	if c.Fail.Env["LC_ALL"] != "C" || c.Fail.Env["PYTHONHASHSEED"] != "0" || c.Pass.Env != nil {
		t.Errorf("env = %v / %v", c.Fail.Env, c.Pass.Env)
	}
	if c.Fail.Workdir != "tests" || c.Invariant.Workdir != "." {
		t.Errorf("workdirs = %q %q, want tests and .", c.Fail.Workdir, c.Invariant.Workdir)
	}
	if !slices.Equal(c.Budget.AllowHarness, []string{"tests/conftest.py", "setup.cfg"}) || c.EffectiveBudget().AllowHarness != nil ||
		c.Annotations[2].Tighten.AllowHarness == nil || !slices.Equal(c.Annotations[1].Tighten.AllowHarness, []string{"setup.cfg"}) {
		t.Errorf("allow_harness = %q, effective %q, annotations %+v", c.Budget.AllowHarness, c.EffectiveBudget().AllowHarness, c.Annotations)
	}
	if c.Sandbox == nil || !slices.Equal(c.Sandbox.Require, []string{"network", "filesystem"}) {
		t.Errorf("sandbox = %+v", c.Sandbox)
	}
	if c.Canary != CanaryOff {
		t.Errorf("canary = %q, want %q", c.Canary, CanaryOff)
	}
	if c.Signoff == nil || len(c.Signoff.Runs) != 2 || c.Signoff.Runs[0] != (Run{Role: "fail", Exit: 1, DurationMS: 812}) ||
		c.Signoff.Reference != "sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("signoff = %+v", c.Signoff)
	}
	if len(c.Signatures) != 1 || !strings.Contains(c.Signatures[0].Signature, "\nAAAA\n") {
		t.Errorf("signatures = %+v", c.Signatures)
	}
	if got := c.Command(RolePass).Timeout; got != 90*time.Minute {
		t.Errorf("Command(pass).Timeout = %v", got)
	}
	if got := c.Command("build"); got.Cmd != nil {
		t.Errorf("Command(build) = %+v, want zero", got)
	}
}

// TestCanonicalSeed pins the signed bytes of the seed card: any change here
// invalidates every signature ever made.
func TestCanonicalSeed(t *testing.T) {
	c := mustLoad(t, "testdata/seed.yml")
	got, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"base_ref":"main","budget":{"deny_globs":["pyproject.toml","setup.cfg",".github/**","docs/**"],"max_changed_lines":80,"max_files":3},` +
		`"fail":{"cmd":["python","-m","pytest","tests/test_header.py::test_empty_header","-q"],"env":{},"expect_exit":1,"timeout":"10m","workdir":"."},` +
		`"id":"ISSUE-4419","invariant":{"cmd":["python","-m","pytest","tests/test_header.py","-q"],"env":{},"expect_exit":0,"timeout":"10m","workdir":"."},` +
		`"origin":"https://github.com/example/libparse/issues/4419",` +
		`"pass":{"cmd":["python","-m","pytest","tests/test_header.py::test_empty_header","-q"],"env":{},"expect_exit":0,"timeout":"10m","workdir":"."}}`
	if string(got) != want {
		t.Errorf("Canonical(seed) =\n%s\nwant\n%s", got, want)
	}
	d, err := c.Digest()
	if err != nil || !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Errorf("Digest(seed) = %q, %v", d, err)
	}
}

// TestCanonicalIndependence: key order, flow or block style, quoting,
// comments, spelled-out defaults, signatures and annotations do not change
// the signed bytes.
func TestCanonicalIndependence(t *testing.T) {
	seed, err := os.ReadFile("testdata/seed.yml")
	if err != nil {
		t.Fatal(err)
	}
	variants := []string{
		string(seed),
		`budget: {deny_globs: [pyproject.toml, setup.cfg, .github/**, docs/**], max_changed_lines: 80, max_files: 3}
invariant: {expect_exit: 0, cmd: [python, -m, pytest, tests/test_header.py, -q]}
pass:
  expect_exit: 0
  timeout: 10m
  env: {}
  cmd: [python, -m, pytest, "tests/test_header.py::test_empty_header", -q]
fail:
  cmd: ['python', '-m', 'pytest', 'tests/test_header.py::test_empty_header', '-q']
  expect_exit: 1
  workdir: .
  timeout: "600s"
base_ref: main
origin: https://github.com/example/libparse/issues/4419
id: ISSUE-4419
sandbox: {require: []}
signatures:
  - {principal: a@example.org, signature: "sig"}
annotations:
  - {by: r, at: "2026-01-01T00:00:00Z", note: "tighter", tighten: {max_files: 1, deny_globs: ["src/**"]}}
`,
	}
	var first []byte
	for i, v := range variants {
		c, err := Parse("v.yml", []byte(v))
		if err != nil {
			t.Fatalf("Parse(variant %d) = %v", i, err)
		}
		got, err := c.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("Canonical(variant %d) =\n%s\nwant\n%s", i, got, first)
		}
	}
}

func TestCanonicalChanges(t *testing.T) {
	base := mustLoad(t, "testdata/seed.yml")
	d0, _ := base.Digest()
	for name, change := range map[string]func(c *Card){
		"expect_exit":    func(c *Card) { c.Fail.ExpectExit = 2 },
		"argv":           func(c *Card) { c.Pass.Cmd = append(slices.Clone(c.Pass.Cmd), "-x") },
		"timeout":        func(c *Card) { c.Invariant.Timeout = time.Minute },
		"env":            func(c *Card) { c.Fail.Env = map[string]string{"A": "1"} },
		"budget":         func(c *Card) { c.Budget.MaxFiles = 4 },
		"deny":           func(c *Card) { c.Budget.DenyGlobs = c.Budget.DenyGlobs[1:] },
		"base_sha":       func(c *Card) { c.BaseSHA = strings.Repeat("a", 40) },
		"max_disk":       func(c *Card) { c.Sandbox = &Sandbox{MaxDisk: 8 << 30} },
		"max_disk_files": func(c *Card) { c.Sandbox = &Sandbox{MaxDiskFiles: 500} },
		"signoff": func(c *Card) {
			c.Signoff = &Signoff{At: "2026-01-01T00:00:00Z", Tool: "t", Decision: "sign", Runs: []Run{{Role: "fail", Exit: 1}}}
		},
		"signoff.reference": func(c *Card) {
			c.Signoff = &Signoff{At: "2026-01-01T00:00:00Z", Tool: "t", Decision: "sign", Runs: []Run{{Role: "fail", Exit: 1}}}
			d0, _ := c.Digest()
			c.Signoff.Reference = "sha256:" + strings.Repeat("0", 64)
			if d1, _ := c.Digest(); d1 == d0 {
				t.Errorf("Digest did not change when signoff.reference was added")
			}
		},
	} {
		c := mustLoad(t, "testdata/seed.yml")
		change(c)
		d, err := c.Digest()
		if err != nil {
			t.Errorf("Digest after %s change = %v", name, err)
		} else if d == d0 {
			t.Errorf("Digest did not change when %s changed", name)
		}
	}
}

func TestCanonicalRefusesInvalid(t *testing.T) {
	for name, change := range map[string]func(c *Card){
		"empty id":       func(c *Card) { c.ID = "" },
		"empty cmd":      func(c *Card) { c.Fail.Cmd = nil },
		"exit 300":       func(c *Card) { c.Pass.ExpectExit = 300 },
		"dotdot workdir": func(c *Card) { c.Fail.Workdir = "../x" },
		"negated glob":   func(c *Card) { c.Budget.DenyGlobs = []string{"!x"} },
		"bidi argv":      func(c *Card) { c.Fail.Cmd = []string{"go", "\u202e"} },
		"invalid utf8":   func(c *Card) { c.ID = "a\xffb" },
		"max_files 0":    func(c *Card) { c.Budget.MaxFiles = 0 },
		"raising tighten": func(c *Card) {
			n := 9
			c.Annotations = []Annotation{{By: "b", At: "2026-01-01T00:00:00Z", Note: "n", Tighten: &Tightening{MaxFiles: &n}}}
		},
	} {
		c := mustLoad(t, "testdata/seed.yml")
		change(c)
		if b, err := c.Canonical(); err == nil {
			t.Errorf("Canonical after %s = %s, want an error", name, b)
		}
	}
}

func TestEffectiveBudget(t *testing.T) {
	two, five, forty := 2, 5, 40
	c := &Card{Budget: Budget{MaxFiles: 3, MaxChangedLines: 80, DenyGlobs: []string{"docs/**"}}}
	tests := []struct {
		name string
		ann  []Annotation
		want Budget
	}{
		{"none", nil, Budget{3, 80, []string{"docs/**"}, nil}},
		{"empty tighten", []Annotation{{Tighten: &Tightening{}}}, Budget{3, 80, []string{"docs/**"}, nil}},
		{"no tighten", []Annotation{{Note: "x"}}, Budget{3, 80, []string{"docs/**"}, nil}},
		{"lower files", []Annotation{{Tighten: &Tightening{MaxFiles: &two}}}, Budget{2, 80, []string{"docs/**"}, nil}},
		{"min of all", []Annotation{{Tighten: &Tightening{MaxChangedLines: &forty}}, {Tighten: &Tightening{MaxFiles: &two, DenyGlobs: []string{"a/**", "docs/**"}}}, {Tighten: &Tightening{MaxFiles: &five, DenyGlobs: []string{"b"}}}},
			Budget{2, 40, []string{"docs/**", "a/**", "b"}, nil}},
	}
	for _, tt := range tests {
		c.Annotations = tt.ann
		if got := c.EffectiveBudget(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("EffectiveBudget(%s) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	// allow_harness: every annotation that names it keeps a subset.
	c.Budget.AllowHarness = []string{"tests/conftest.py", "go.sum", "setup.cfg"}
	for _, tt := range []struct {
		name string
		ann  []Annotation
		want []string
	}{
		{"signed", nil, []string{"tests/conftest.py", "go.sum", "setup.cfg"}},
		{"unnamed", []Annotation{{Tighten: &Tightening{MaxFiles: &two}}}, []string{"tests/conftest.py", "go.sum", "setup.cfg"}},
		{"subset", []Annotation{{Tighten: &Tightening{AllowHarness: []string{"setup.cfg", "go.sum"}}}}, []string{"go.sum", "setup.cfg"}},
		{"intersection", []Annotation{{Tighten: &Tightening{AllowHarness: []string{"setup.cfg", "go.sum"}}}, {Tighten: &Tightening{AllowHarness: []string{"tests/conftest.py", "go.sum"}}}}, []string{"go.sum"}},
		{"none", []Annotation{{Tighten: &Tightening{AllowHarness: []string{}}}}, nil},
	} {
		c.Annotations = tt.ann
		c.Budget.DenyGlobs = nil
		if got := c.EffectiveBudget().AllowHarness; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("EffectiveBudget(%s).AllowHarness = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Card)
		want   []string
	}{
		{"seed", func(c *Card) {}, nil},
		{"different pass", func(c *Card) { c.Pass.Cmd = []string{"pytest", "tests/test_new.py"} }, []string{"the pass command is not the fail command"}},
		{"other workdir", func(c *Card) { c.Pass.Workdir = "sub" }, []string{"another workdir"}},
		{"invariant is pass", func(c *Card) { c.Invariant = c.Pass }, []string{"invariant command is the pass command"}},
		{"fail expects 0", func(c *Card) { c.Fail.ExpectExit = 0 }, []string{"fail.expect_exit is 0"}},
		{"pass expects 1", func(c *Card) { c.Pass.ExpectExit = 1 }, []string{"pass.expect_exit is not 0"}},
		{"inconclusive", func(c *Card) { c.Fail.ExpectExit = 127 }, []string{"fail.expect_exit is 127: exits 125, 126 and 127 are inconclusive"}},
		{"no deny", func(c *Card) { c.Budget.DenyGlobs = nil }, []string{"deny_globs is empty"}},
	}
	for _, tt := range tests {
		c := mustLoad(t, "testdata/seed.yml")
		tt.change(c)
		got := c.Warnings()
		if len(got) != len(tt.want) {
			t.Errorf("Warnings(%s) = %q, want %d warnings", tt.name, got, len(tt.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("Warnings(%s)[%d] = %q, want it to contain %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, d := range []time.Duration{time.Millisecond, 500 * time.Millisecond, time.Second, 90 * time.Second, 10 * time.Minute, time.Hour, 90 * time.Minute, 24 * time.Hour, time.Hour + time.Second, 1500 * time.Millisecond} {
		s := formatDuration(d)
		back, err := time.ParseDuration(s)
		if err != nil || back != d || strings.HasSuffix(s, "m0s") || strings.HasSuffix(s, "h0m") {
			t.Errorf("formatDuration(%v) = %q (reads back as %v, %v)", d, s, back, err)
		}
	}
	if got := formatDuration(DefaultTimeout); got != "10m" {
		t.Errorf("formatDuration(10m) = %q, want 10m", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/seed.yml", "testdata/full.yml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(text(base)))
	f.Add([]byte(edit(5, `  cmd: &c ["go"]`)))
	f.Add([]byte(edit(6, `  expect_exit: 1.0`)))
	f.Add([]byte(add("---\nid: x\n")))
	f.Add([]byte(add(prepareBlock)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yml", data)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a card and the error %v", err)
			}
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse error %T %v is not a *ParseError", err, err)
			}
			return
		}
		out, err := Marshal(c)
		if err != nil {
			t.Fatalf("Marshal(accepted card) = %v", err)
		}
		back, err := Parse("f.yml", out)
		if err != nil {
			t.Fatalf("Parse(Marshal(c)) = %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("Parse(Marshal(c)) = %+v, want %+v", back, c)
		}
		again, _ := Marshal(back)
		if !bytes.Equal(again, out) {
			t.Fatalf("Marshal not idempotent:\n%s\nthen\n%s", out, again)
		}
		c1, err := c.Canonical()
		if err != nil {
			t.Fatalf("Canonical(accepted card) = %v", err)
		}
		c2, _ := back.Canonical()
		if !bytes.Equal(c1, c2) {
			t.Fatalf("Canonical unstable across Marshal:\n%s\n%s", c1, c2)
		}
	})
}

// FuzzFields puts arbitrary strings into the fields of a valid card, so
// the accepting paths (quoting in Marshal, odd but valid strings) are
// fuzzed too, not only the refusals raw bytes mostly reach.
func FuzzFields(f *testing.F) {
	f.Add("X-1", "te st", "tests", "docs/**", "K", "v", "10m")
	f.Add("é\"'\\", "#x: y", "a/b", "*.lock", "_", "a\\nb", "1h")
	f.Fuzz(func(t *testing.T, id, arg, wd, glob, envK, envV, tmo string) {
		src := strings.Join([]string{
			"id: " + q(id),
			"base_ref: main",
			"fail: {workdir: " + q(wd) + ", cmd: [go, " + q(arg) + "], expect_exit: 1, timeout: " + q(tmo) + ", env: {" + q(envK) + ": " + q(envV) + "}}",
			"pass: {cmd: [go, " + q(arg) + "], expect_exit: 0}",
			"invariant: {cmd: [go], expect_exit: 0}",
			"budget: {max_files: 1, max_changed_lines: 0, deny_globs: [" + q(glob) + "]}",
		}, "\n")
		c, err := Parse("f.yml", []byte(src))
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a card and the error %v", err)
			}
			return
		}
		if c.ID != id || c.Fail.Cmd[1] != arg || c.Fail.Workdir != wd || c.Budget.DenyGlobs[0] != glob || c.Fail.Env[envK] != envV {
			t.Fatalf("Parse read back %+v, want the strings it was given", c)
		}
		out, _ := Marshal(c)
		back, err := Parse("f.yml", out)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("Parse(Marshal(c)) = %+v, %v, want %+v\n%s", back, err, c, out)
		}
		if _, err := c.Canonical(); err != nil {
			t.Fatalf("Canonical(accepted card) = %v", err)
		}
	})
}

// TestCanarySigned: turning the canary off changes the signed bytes, so
// it cannot be done to a signed card without re-signing it.
func TestCanarySigned(t *testing.T) {
	c := mustLoad(t, "testdata/seed.yml")
	on, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	c.Canary = CanaryOff
	off, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(on, off) || !bytes.Contains(off, []byte(`"canary":"off"`)) || bytes.Contains(on, []byte("canary")) {
		t.Errorf("Canonical with canary off = %s, on = %s", off, on)
	}
	data, _ := os.ReadFile("testdata/seed.yml")
	plain, err := Parse("seed", append(data, "canary: off\n"...))
	if err != nil || plain.Canary != CanaryOff {
		t.Errorf("Parse(canary: off) = %v, %v", plain, err)
	}
}

func TestDiskCap(t *testing.T) {
	seed, err := os.ReadFile("testdata/seed.yml")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(block string) *Card {
		t.Helper()
		c, err := Parse("c.yml", append(slices.Clone(seed), block...))
		if err != nil {
			t.Fatalf("Parse(%q) = %v", block, err)
		}
		return c
	}
	if b, f := parse("").DiskCap(); b != 0 || f != 0 {
		t.Errorf("DiskCap of a card without the fields = %d, %d, want 0, 0 (the defaults)", b, f)
	}
	a := parse("sandbox: {max_disk: \"8GiB\", max_disk_files: 500}\n")
	if b, f := a.DiskCap(); b != 8<<30 || f != 500 {
		t.Errorf("DiskCap = %d, %d, want %d, 500", b, f, int64(8<<30))
	}
	// One size, two spellings: the same signed bytes.
	b := parse("sandbox:\n  max_disk_files: 500\n  max_disk: \"8192MiB\"\n")
	ca, _ := a.Canonical()
	cb, _ := b.Canonical()
	if !bytes.Equal(ca, cb) || !bytes.Contains(ca, []byte(`"max_disk":"8GiB"`)) {
		t.Errorf("Canonical = %s and %s, want both equal with max_disk 8GiB", ca, cb)
	}
	out, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("c.yml", out)
	if err != nil || !reflect.DeepEqual(back.Sandbox, b.Sandbox) {
		t.Errorf("Parse(Marshal) = %+v, %v, want %+v\n%s", back.Sandbox, err, b.Sandbox, out)
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "1536MiB": 1536 << 20, "1048577B": 1<<20 + 1, "64KiB": 64 << 10, "1TiB": 1 << 40} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for n, want := range map[int64]string{8 << 30: "8GiB", 1536 << 20: "1536MiB", 1<<20 + 1: "1048577B", 3 << 10: "3KiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
	for _, in := range []string{"", "8", "8G", "8gib", "8GB", "08GiB", "+8GiB", "-8GiB", "1.5GiB", "8 GiB", " 8GiB", "0B", "99999999999999999B", "9999999999999999TiB"} {
		if v, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, v)
		}
	}
}
