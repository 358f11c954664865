package card

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const prepareBlock = `prepare:
  cmd: ["go", "mod", "download"]
  env: {GOPROXY: "https://proxy.example.org", GOSUMDB: "off"}
`

func TestPrepareParse(t *testing.T) {
	c, err := Parse("card.yml", []byte(add(prepareBlock)))
	if err != nil {
		t.Fatalf("Parse(prepare) = %v", err)
	}
	p := c.Prepare
	if p == nil || p.Workdir != "." || p.Timeout != DefaultTimeout || !slices.Equal(p.Cmd, []string{"go", "mod", "download"}) ||
		p.Env["GOPROXY"] != "https://proxy.example.org" || p.Env["GOSUMDB"] != "off" {
		t.Fatalf("Parse(prepare).Prepare = %+v", p)
	}
	got, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	// The signed bytes of the block, pinned: a change invalidates every
	// signature of a card with a prepare command.
	want := `"prepare":{"cmd":["go","mod","download"],"env":{"GOPROXY":"https://proxy.example.org","GOSUMDB":"off"},"timeout":"10m","workdir":"."}`
	if !strings.Contains(string(got), want) {
		t.Errorf("Canonical(prepare) =\n%s\nwant it to hold\n%s", got, want)
	}
	cmd := p.Command()
	if !slices.Equal(cmd.Cmd, p.Cmd) || cmd.ExpectExit != 0 || cmd.Workdir != "." || cmd.Timeout != DefaultTimeout || cmd.Env["GOSUMDB"] != "off" {
		t.Errorf("Command() = %+v", cmd)
	}
	// Marshal then Parse is the identity.
	b, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("card.yml", b)
	if err != nil {
		t.Fatalf("Parse(Marshal) = %v\n%s", err, b)
	}
	if d0, _ := c.Digest(); func() string { d, _ := back.Digest(); return d }() != d0 {
		t.Errorf("Marshal changed the signed bytes:\n%s", b)
	}
	// Defaults spelled out sign the same bytes.
	c2, err := Parse("card.yml", []byte(add("prepare: {workdir: \".\", cmd: [go, mod, download], timeout: 10m, env: {GOSUMDB: \"off\", GOPROXY: \"https://proxy.example.org\"}}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digest(t, c), digest(t, c2); a != b {
		t.Errorf("spelled-out defaults sign other bytes: %s, %s", a, b)
	}
	c3, _ := Parse("card.yml", []byte(add("prepare: {cmd: [go], timeout: 90s}\n")))
	if c3.Prepare.Timeout != 90*time.Second || c3.Prepare.Env != nil {
		t.Errorf("Prepare = %+v, want timeout 90s and no env", c3.Prepare)
	}
}

func digest(t *testing.T, c *Card) string {
	t.Helper()
	d, err := c.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPrepareRefuses(t *testing.T) {
	h := func(lines ...string) string { return add("prepare:\n" + strings.Join(lines, "\n") + "\n") }
	cmd := `  cmd: ["go", "mod", "download"]`
	tests := []struct {
		name      string
		in        string
		line, col int
		field     string
		msg       string
	}{
		{"not a mapping", add("prepare: go mod download\n"), 18, 10, "prepare", "expected a mapping"},
		{"unknown key", h(cmd, "  expect_exit: 0"), 20, 3, "prepare.expect_exit", "unknown key"},
		{"missing cmd", h(`  workdir: "."`), 19, 3, "prepare.cmd", "missing"},
		{"cmd a string", h(`  cmd: "go mod download"`), 19, 8, "prepare.cmd", "not a string"},
		{"empty cmd", h(`  cmd: []`), 19, 8, "prepare.cmd", "must not be empty"},
		{"dotdot workdir", h(cmd, `  workdir: "../x"`), 20, 12, "prepare.workdir", "must not contain"},
		{"bad timeout", h(cmd, `  timeout: "soon"`), 20, 12, "prepare.timeout", "not a duration"},
		{"bad env name", h(cmd, `  env: {"1X": "y"}`), 20, 9, "prepare.env.1X", "not a valid variable name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("card.yml", []byte(tc.in))
			pe, ok := err.(*ParseError)
			if !ok || c != nil {
				t.Fatalf("Parse = %v, %v; want a *ParseError\n%s", c, err, tc.in)
			}
			if pe.Line != tc.line || pe.Col != tc.col || pe.Field != tc.field || !strings.Contains(pe.Msg, tc.msg) || pe.Hint == "" {
				t.Errorf("Parse = %d:%d %q %q (hint %q), want %d:%d %q containing %q", pe.Line, pe.Col, pe.Field, pe.Msg, pe.Hint, tc.line, tc.col, tc.field, tc.msg)
			}
		})
	}
}

func TestPrepareCanonicalChanges(t *testing.T) {
	c0, err := Parse("card.yml", []byte(add(prepareBlock)))
	if err != nil {
		t.Fatal(err)
	}
	d0 := digest(t, c0)
	plain, _ := Parse("card.yml", []byte(text(base)))
	if digest(t, plain) == d0 {
		t.Errorf("a card with a prepare command signs the bytes of one without")
	}
	for name, change := range map[string]func(p *Prepare){
		"workdir": func(p *Prepare) { p.Workdir = "sub" },
		"cmd":     func(p *Prepare) { p.Cmd = []string{"go", "mod", "download", "-x"} },
		"timeout": func(p *Prepare) { p.Timeout = time.Minute },
		"env":     func(p *Prepare) { p.Env = map[string]string{"GOPROXY": "off"} },
		"no env":  func(p *Prepare) { p.Env = nil },
	} {
		c, _ := Parse("card.yml", []byte(add(prepareBlock)))
		change(c.Prepare)
		if d, err := c.Digest(); err != nil || d == d0 {
			t.Errorf("Digest after a %s change = %s, %v; want another digest", name, d, err)
		}
	}
}
