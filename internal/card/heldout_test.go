package card

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const heldOutBlock = `held_out:
  digest: "sha256:b883efbb8f7ec19f0bd5d4ca17e22befe9224b6f479854598ce3e2109efa8df6"
  dest: "tests"
  cmd: ["python3", "-m", "pytest", "-q", "{held_out}"]
  expect_exit: 0
`

func TestHeldOutParse(t *testing.T) {
	c, err := Parse("card.yml", []byte(add(heldOutBlock)))
	if err != nil {
		t.Fatalf("Parse(held_out) = %v", err)
	}
	h := c.HeldOut
	if h == nil || h.Dest != "tests" || h.Workdir != "." || h.Timeout != DefaultTimeout || h.ExpectExit != 0 ||
		!slices.Equal(h.Cmd, []string{"python3", "-m", "pytest", "-q", "{held_out}"}) ||
		h.Digest != "sha256:b883efbb8f7ec19f0bd5d4ca17e22befe9224b6f479854598ce3e2109efa8df6" {
		t.Fatalf("Parse(held_out).HeldOut = %+v", h)
	}
	got, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	// The signed bytes of the block, pinned: a change invalidates every
	// signature of a card with held-out tests.
	want := `"held_out":{"cmd":["python3","-m","pytest","-q","{held_out}"],"dest":"tests",` +
		`"digest":"sha256:b883efbb8f7ec19f0bd5d4ca17e22befe9224b6f479854598ce3e2109efa8df6","expect_exit":0,"timeout":"10m","workdir":"."}`
	if !strings.Contains(string(got), want) {
		t.Errorf("Canonical(held_out) =\n%s\nwant it to hold\n%s", got, want)
	}
	cmd := h.Command([]string{"tests/test_a.py", "tests/test_b.py"})
	if !slices.Equal(cmd.Cmd, []string{"python3", "-m", "pytest", "-q", "tests/test_a.py", "tests/test_b.py"}) || cmd.Workdir != "." || cmd.Timeout != DefaultTimeout {
		t.Errorf("Command(paths) = %+v", cmd)
	}

	// Without a digest (before card sign --held-out), with a spelled-out
	// default: valid, warned about, and the digest is left out of the bytes.
	// expect_stdout: signed, written back, absent from the bytes of a
	// card without it (above).
	c, err = Parse("card.yml", []byte(add("held_out: {dest: probe, cmd: [go, run, \"{held_out}\"], expect_exit: 0, expect_stdout: probe.out}\n")))
	if err != nil || c.HeldOut.ExpectStdout != "probe.out" {
		t.Fatalf("Parse(expect_stdout) = %v, %v", c, err)
	}
	if got, _ = c.Canonical(); !strings.Contains(string(got), `"expect_stdout":"probe.out"`) {
		t.Errorf("Canonical(expect_stdout) = %s", got)
	}
	if m, _ := Marshal(c); !strings.Contains(string(m), `expect_stdout: "probe.out"`) {
		t.Errorf("Marshal(expect_stdout) = %s", m)
	}

	c, err = Parse("card.yml", []byte(add("held_out: {dest: tests, workdir: \".\", cmd: [go, test, ./tests], expect_exit: 0, timeout: 10m}\n")))
	if err != nil {
		t.Fatalf("Parse(held_out without digest) = %v", err)
	}
	if !slices.ContainsFunc(c.Warnings(), func(w string) bool { return strings.HasPrefix(w, "held_out has no digest") }) {
		t.Errorf("Warnings() = %q, want one about the missing digest", c.Warnings())
	}
	got, _ = c.Canonical()
	if !strings.Contains(string(got), `"held_out":{"cmd":["go","test","./tests"],"dest":"tests","expect_exit":0,"timeout":"10m","workdir":"."}`) {
		t.Errorf("Canonical(no digest) = %s", got)
	}
	if c.HeldOut.Timeout != DefaultTimeout {
		t.Errorf("timeout = %v", c.HeldOut.Timeout)
	}
	c, _ = Parse("card.yml", []byte(add("held_out: {dest: tests, cmd: [go], expect_exit: 0, timeout: 90s}\n")))
	if c.HeldOut.Timeout != 90*time.Second {
		t.Errorf("timeout = %v, want 90s", c.HeldOut.Timeout)
	}
}

func TestHeldOutRefuses(t *testing.T) {
	h := func(lines ...string) string { return add("held_out:\n" + strings.Join(lines, "\n") + "\n") }
	dest, cmd, exp := `  dest: "tests"`, `  cmd: ["python3", "-m", "pytest", "{held_out}"]`, `  expect_exit: 0`
	tests := []struct {
		name      string
		in        string
		line, col int
		field     string
		msg       string
	}{
		{"not a mapping", add("held_out: tests\n"), 18, 11, "held_out", "expected a mapping"},
		{"unknown key", h(dest, cmd, exp, "  folder: x"), 22, 3, "held_out.folder", "unknown key"},
		{"duplicate key", h(dest, dest, cmd, exp), 20, 3, "held_out.dest", "duplicate key"},
		{"missing dest", h(cmd, exp), 19, 3, "held_out.dest", "missing"},
		{"missing cmd", h(dest, exp), 19, 3, "held_out.cmd", "missing"},
		{"missing expect_exit", h(dest, cmd), 19, 3, "held_out.expect_exit", "missing"},
		{"absolute dest", h(`  dest: "/tmp/x"`, cmd, exp), 19, 9, "held_out.dest", "not absolute"},
		{"dotdot dest", h(`  dest: "tests/../.."`, cmd, exp), 19, 9, "held_out.dest", "must not contain \"..\""},
		{"unclean dest", h(`  dest: "./tests"`, cmd, exp), 19, 9, "held_out.dest", "clean form"},
		{"dest in .git", h(`  dest: ".git/hooks"`, cmd, exp), 19, 9, "held_out.dest", "inside .git"},
		{"empty dest", h(`  dest: ""`, cmd, exp), 19, 9, "held_out.dest", "must not be empty"},
		{"dotdot workdir", h(dest, `  workdir: ".."`, cmd, exp), 20, 12, "held_out.workdir", "must not contain"},
		{"cmd a string", h(dest, `  cmd: "pytest {held_out}"`, exp), 20, 8, "held_out.cmd", "not a string"},
		{"placeholder inside an element", h(dest, `  cmd: ["pytest", "--x={held_out}"]`, exp), 20, 19, "held_out.cmd[1]", "whole argv element"},
		{"placeholder as the program", h(dest, `  cmd: ["{held_out}"]`, exp), 20, 9, "held_out.cmd[0]", "program cannot be"},
		{"digest uppercase", h(`  digest: "sha256:`+strings.Repeat("A", 64)+`"`, dest, cmd, exp), 19, 11, "held_out.digest", "lowercase hex"},
		{"digest short", h(`  digest: "sha256:abc"`, dest, cmd, exp), 19, 11, "held_out.digest", "64 lowercase"},
		{"digest sha1", h(`  digest: "sha1:`+strings.Repeat("a", 40)+`"`, dest, cmd, exp), 19, 11, "held_out.digest", "not \"sha256:\""},
		{"digest bare hex", h(`  digest: "`+strings.Repeat("a", 64)+`"`, dest, cmd, exp), 19, 11, "held_out.digest", "not \"sha256:\""},
		{"exit out of range", h(dest, cmd, `  expect_exit: 256`), 21, 16, "held_out.expect_exit", "out of range"},
		{"bad timeout", h(dest, cmd, exp, `  timeout: "forever"`), 22, 12, "held_out.timeout", "not a duration"},
		{"zero timeout", h(dest, cmd, exp, `  timeout: "0s"`), 22, 12, "held_out.timeout", "out of range"},
		{"alias", add("held_out: &h {dest: tests, cmd: [go], expect_exit: 0}\n"), 18, 11, "held_out", "anchors"},
		{"expect_stdout a path", h(dest, cmd, exp, `  expect_stdout: "sub/probe.out"`), 22, 18, "held_out.expect_stdout", "not a file name"},
		{"expect_stdout empty", h(dest, cmd, exp, `  expect_stdout: ""`), 22, 18, "held_out.expect_stdout", "must not be empty"},
		{"expect_stdout dotdot", h(dest, cmd, exp, `  expect_stdout: ".."`), 22, 18, "held_out.expect_stdout", "not a file name"},
		{"expect_stdout with dest the top", h(`  dest: "."`, cmd, exp, `  expect_stdout: "probe.out"`), 19, 9, "held_out.dest", "base does not have"},
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

func TestHeldOutCanonicalChanges(t *testing.T) {
	c0, err := Parse("card.yml", []byte(add(heldOutBlock)))
	if err != nil {
		t.Fatal(err)
	}
	d0, _ := c0.Digest()
	plain, _ := Parse("card.yml", []byte(text(base)))
	if d, _ := plain.Digest(); d == d0 {
		t.Errorf("a card with held-out tests signs the bytes of one without")
	}
	for name, change := range map[string]func(h *HeldOut){
		"digest":        func(h *HeldOut) { h.Digest = "sha256:" + strings.Repeat("0", 64) },
		"no digest":     func(h *HeldOut) { h.Digest = "" },
		"dest":          func(h *HeldOut) { h.Dest = "tests/hidden" },
		"workdir":       func(h *HeldOut) { h.Workdir = "tests" },
		"cmd":           func(h *HeldOut) { h.Cmd = []string{"python3", "-m", "pytest", "{held_out}"} },
		"expect_exit":   func(h *HeldOut) { h.ExpectExit = 1 },
		"timeout":       func(h *HeldOut) { h.Timeout = time.Minute },
		"expect_stdout": func(h *HeldOut) { h.ExpectStdout = "probe.out" },
	} {
		c, _ := Parse("card.yml", []byte(add(heldOutBlock)))
		change(c.HeldOut)
		if d, err := c.Digest(); err != nil || d == d0 {
			t.Errorf("Digest after a %s change = %s, %v; want another digest", name, d, err)
		}
	}
	c, _ := Parse("card.yml", []byte(add(heldOutBlock)))
	c.HeldOut.Cmd = []string{"pytest", "a{held_out}"}
	if _, err := c.Canonical(); err == nil {
		t.Errorf("Canonical accepted a held-out argv with a partial placeholder")
	}
}
