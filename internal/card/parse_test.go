package card

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// base is a valid card; refusal cases edit one thing in it, so each case's
// expected line and column point at the edit.
var base = []string{
	`id: "X-1"`,        // 1
	`base_ref: "main"`, // 2
	`fail:`,            // 3
	`  workdir: "."`,   // 4
	`  cmd: ["go", "test", "-run", "TestBug", "./..."]`, // 5
	`  expect_exit: 1`, // 6
	`pass:`,            // 7
	`  workdir: "."`,   // 8
	`  cmd: ["go", "test", "-run", "TestBug", "./..."]`, // 9
	`  expect_exit: 0`,               // 10
	`invariant:`,                     // 11
	`  cmd: ["go", "test", "./..."]`, // 12
	`  expect_exit: 0`,               // 13
	`budget:`,                        // 14
	`  max_files: 3`,                 // 15
	`  max_changed_lines: 80`,        // 16
	`  deny_globs: ["docs/**"]`,      // 17
}

func text(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// edit replaces line n (1-based) of base with s; s may hold several lines.
func edit(n int, s string) string {
	l := append([]string(nil), base...)
	l[n-1] = s
	return text(l)
}

// drop removes lines from..to (1-based, inclusive) of base.
func drop(from, to int) string {
	l := append([]string(nil), base[:from-1]...)
	return text(append(l, base[to:]...))
}

func add(s string) string { return text(base) + s }

func TestParseBase(t *testing.T) {
	c, err := Parse("card.yml", []byte(text(base)))
	if err != nil {
		t.Fatalf("Parse(base) = %v, want no error", err)
	}
	want := Command{Workdir: ".", Cmd: []string{"go", "test", "./..."}, ExpectExit: 0, Timeout: DefaultTimeout}
	if got := c.Invariant; got.Workdir != want.Workdir || strings.Join(got.Cmd, " ") != "go test ./..." || got.Timeout != want.Timeout || got.Env != nil {
		t.Errorf("Parse(base).Invariant = %+v, want %+v", got, want)
	}
	if c.Budget.MaxFiles != 3 || c.Budget.MaxChangedLines != 80 || len(c.Budget.DenyGlobs) != 1 {
		t.Errorf("Parse(base).Budget = %+v", c.Budget)
	}
}

func TestParseRefuses(t *testing.T) {
	long := "# " + strings.Repeat("x", MaxSize) + "\n"
	tests := []struct {
		name      string
		in        string
		line, col int
		field     string
		msg       string
	}{
		// Unknown and duplicate keys.
		{"unknown root key", add("colour: red\n"), 18, 1, "colour", "unknown key"},
		{"unknown command key", edit(4, `  wrkdir: "."`), 4, 3, "fail.wrkdir", "unknown key"},
		{"unknown budget key", edit(17, `  deny: ["docs/**"]`), 17, 3, "budget.deny", "unknown key"},
		{"duplicate root key", add("id: \"X-2\"\n"), 18, 1, "id", "duplicate key (first at line 1)"},
		{"duplicate budget key", add("  max_files: 4\n"), 18, 3, "budget.max_files", "duplicate key"},
		{"duplicate command key", edit(6, "  expect_exit: 1\n  expect_exit: 2"), 7, 3, "fail.expect_exit", "duplicate key"},
		{"non-string key", add("1: x\n"), 18, 1, "", "a key must be a plain name"},
		{"quoted merge-like key", add("\"<<\": x\n"), 18, 1, "<<", "unknown key"},
		// Missing blocks and fields.
		{"missing invariant", drop(11, 13), 1, 1, "invariant", "missing"},
		{"missing budget", drop(14, 17), 1, 1, "budget", "missing"},
		{"missing fail", drop(3, 6), 1, 1, "fail", "missing"},
		{"missing id", edit(1, `origin: "x"`), 1, 1, "id", "missing"},
		{"missing base_ref", edit(2, `origin: "x"`), 1, 1, "base_ref", "missing"},
		{"missing cmd", edit(5, `  timeout: "1m"`), 4, 3, "fail.cmd", "missing"},
		{"missing expect_exit", edit(10, `  timeout: "1m"`), 8, 3, "pass.expect_exit", "missing"},
		{"missing max_files", edit(15, "  # none"), 16, 3, "budget.max_files", "missing"},
		{"missing max_changed_lines", edit(16, "  # none"), 15, 3, "budget.max_changed_lines", "missing"},
		{"block is null", drop(12, 13), 11, 11, "invariant", "expected a mapping, got nothing (null)"},
		{"block is a list", strings.Replace(drop(12, 13), "invariant:", "invariant: []", 1), 11, 12, "invariant", "expected a mapping, got a list"},
		{"root is a list", "- a\n", 1, 1, "", "expected a mapping, got a list"},
		{"root is a string", "hello\n", 1, 1, "", "expected a mapping"},
		{"empty card", "", 1, 1, "", "empty"},
		{"only comments", "# nothing\n", 1, 1, "", "empty"},
		// cmd shape.
		{"cmd is a string", edit(5, `  cmd: "go test ./..."`), 5, 8, "fail.cmd", "not a string"},
		{"cmd is empty", edit(5, `  cmd: []`), 5, 8, "fail.cmd", "must not be empty"},
		{"cmd is null", edit(5, `  cmd:`), 5, 7, "fail.cmd", "expected a list, got nothing (null)"},
		{"cmd is a mapping", edit(5, `  cmd: {go: test}`), 5, 8, "fail.cmd", "expected a list, got a mapping"},
		{"argv item ~", edit(5, `  cmd: ["go", ~, "x"]`), 5, 15, "fail.cmd[1]", "argv item is null"},
		{"argv item null", edit(9, `  cmd: ["go", null]`), 9, 15, "pass.cmd[1]", "argv item is null"},
		{"argv item empty block", edit(12, "  cmd:\n    - go\n    -\n    - test"), 14, 6, "invariant.cmd[1]", "argv item is null"},
		{"argv item integer", edit(5, `  cmd: ["sleep", 1]`), 5, 18, "fail.cmd[1]", "expected a string, got the integer 1"},
		{"argv item float", edit(5, `  cmd: ["sleep", 1.5]`), 5, 18, "fail.cmd[1]", "expected a string, got the number 1.5"},
		{"argv item bool", edit(5, `  cmd: ["x", true]`), 5, 14, "fail.cmd[1]", "expected a string, got the boolean true"},
		{"argv item mapping", edit(5, `  cmd: ["x", {a: b}]`), 5, 14, "fail.cmd[1]", "expected a string, got a mapping"},
		{"argv item list", edit(5, `  cmd: ["x", [a]]`), 5, 14, "fail.cmd[1]", "expected a string, got a list"},
		{"empty program", edit(5, `  cmd: ["", "x"]`), 5, 9, "fail.cmd[0]", "program name is empty"},
		// Integers.
		{"expect_exit float", edit(6, `  expect_exit: 1.0`), 6, 16, "fail.expect_exit", "expected an integer, got the number 1.0"},
		{"expect_exit fraction", edit(6, `  expect_exit: 1.5`), 6, 16, "fail.expect_exit", "got the number 1.5"},
		{"expect_exit exponent", edit(6, `  expect_exit: 1e0`), 6, 16, "fail.expect_exit", "got the number 1e0"},
		{"expect_exit string", edit(6, `  expect_exit: "1"`), 6, 16, "fail.expect_exit", `got the string "1"`},
		{"expect_exit plain word", edit(6, `  expect_exit: one`), 6, 16, "fail.expect_exit", `got the string "one"`},
		{"expect_exit bool", edit(6, `  expect_exit: true`), 6, 16, "fail.expect_exit", "got the boolean true"},
		{"expect_exit null", edit(6, `  expect_exit:`), 6, 15, "fail.expect_exit", "got nothing (null)"},
		{"expect_exit hex", edit(6, `  expect_exit: 0x1`), 6, 16, "fail.expect_exit", "not in plain decimal"},
		{"expect_exit octal", edit(6, `  expect_exit: 0o7`), 6, 16, "fail.expect_exit", "not in plain decimal"},
		{"expect_exit plus", edit(6, `  expect_exit: +1`), 6, 16, "fail.expect_exit", "not in plain decimal"},
		{"expect_exit leading zero", edit(6, `  expect_exit: 01`), 6, 16, "fail.expect_exit", "not in plain decimal"},
		{"expect_exit underscore", edit(6, `  expect_exit: 1_0`), 6, 16, "fail.expect_exit", "not in plain decimal"},
		{"expect_exit 256", edit(6, `  expect_exit: 256`), 6, 16, "fail.expect_exit", "out of range"},
		{"expect_exit -1", edit(10, `  expect_exit: -1`), 10, 16, "pass.expect_exit", "out of range"},
		{"expect_exit huge", edit(13, `  expect_exit: 99999999999999999999999`), 13, 16, "invariant.expect_exit", "out of range"},
		{"max_files 0", edit(15, `  max_files: 0`), 15, 14, "budget.max_files", "at least 1"},
		{"max_files negative", edit(15, `  max_files: -3`), 15, 14, "budget.max_files", "out of range"},
		{"max_changed_lines negative", edit(16, `  max_changed_lines: -1`), 16, 22, "budget.max_changed_lines", "negative budgets are refused"},
		{"max_changed_lines float", edit(16, `  max_changed_lines: 80.5`), 16, 22, "budget.max_changed_lines", "got the number 80.5"},
		{"max_files string", edit(15, `  max_files: "3"`), 15, 14, "budget.max_files", `got the string "3"`},
		{"max_files too big", edit(15, `  max_files: 2147483648`), 15, 14, "budget.max_files", "out of range"},
		// Anchors, aliases, merge keys, tags, documents.
		{"anchor", edit(5, `  cmd: &c ["go"]`), 5, 8, "fail.cmd", "anchors are not allowed"},
		{"anchor on scalar", edit(1, `id: &i "X-1"`), 1, 5, "id", "anchors are not allowed"},
		{"alias", strings.Replace(text(base[13:]), "max_files: 3", "max_files: &n 3", 1) + text(base[:5]) + "  expect_exit: *n\n" + text(base[6:13]), 10, 16, "fail.expect_exit", "aliases are not allowed"},
		{"alias in argv", `x: &a "go"` + "\n" + text(base[:4]) + `  cmd: [*a]` + "\n", 1, 1, "x", "unknown key"},
		{"alias value", edit(17, "  deny_globs: &g [\"a\"]") + "extra: *g\n", 18, 1, "extra", "unknown key"},
		{"merge key", edit(4, `  <<: {workdir: "."}`), 4, 3, "fail.<<", "merge keys"},
		{"explicit str tag", edit(1, `id: !!str X-1`), 1, 5, "id", "explicit YAML tags"},
		{"explicit int tag", edit(6, `  expect_exit: !!int "1"`), 6, 16, "fail.expect_exit", "explicit YAML tags"},
		{"non-specific tag", edit(1, `id: ! X-1`), 1, 5, "id", "explicit YAML tags"},
		{"local tag", edit(5, `  cmd: !argv ["go"]`), 5, 8, "fail.cmd", "explicit YAML tags"},
		{"binary tag", edit(1, `id: !!binary aGVsbG8=`), 1, 5, "id", "explicit YAML tags"},
		{"non-specific tag on flow list", edit(5, `  cmd: ! ["go"]`), 5, 8, "fail.cmd", "explicit YAML tags"},
		{"non-specific tag on block mapping", edit(3, `fail: !`), 3, 7, "fail", "explicit YAML tags"},
		{"non-specific tag on key", edit(2, `! base_ref: "main"`), 2, 1, "base_ref", "explicit YAML tags"},
		{"tag on key", edit(1, `!!str id: "X-1"`), 1, 1, "id", "explicit YAML tags"},
		{"second document", add("---\nid: x\n"), 18, 1, "", "second YAML document"},
		{"empty second document", add("---\n"), 18, 1, "", "second YAML document"},
		{"syntax error", add("fail: [\n"), 18, 1, "", "YAML syntax"},
		{"tab indentation", "id: x\n\tbase_ref: y\n", 2, 1, "", "YAML syntax"},
		// Characters.
		{"tab in argv", edit(5, `  cmd: ["go", "te\tst"]`), 5, 15, "fail.cmd[1]", "U+0009"},
		{"newline in argv", edit(5, `  cmd: ["go", "a\nb"]`), 5, 15, "fail.cmd[1]", "U+000A"},
		{"escaped bidi in argv", edit(9, `  cmd: ["go", "\u202etest"]`), 9, 15, "pass.cmd[1]", "U+202E"},
		{"escaped NUL in argv", edit(9, `  cmd: ["go", "\0"]`), 9, 15, "pass.cmd[1]", "U+0000"},
		{"zero-width in workdir", edit(4, `  workdir: "te\u200bsts"`), 4, 12, "fail.workdir", "U+200B"},
		{"newline in workdir", edit(4, `  workdir: "a\nb"`), 4, 12, "fail.workdir", "U+000A"},
		{"bidi in glob", edit(17, `  deny_globs: ["docs/\u2066**"]`), 17, 16, "budget.deny_globs[0]", "U+2066"},
		{"control in id", edit(1, `id: "X\x1b[31m"`), 1, 5, "id", "U+001B"},
		{"literal bidi in file", edit(1, "id: \"X-1\" # \u202e comment"), 1, 13, "", "U+202E"},
		{"literal BOM", "\ufeff" + text(base), 1, 1, "", "U+FEFF"},
		{"NUL byte", edit(2, "base_ref: \"ma\x00in\""), 2, 14, "", "U+0000"},
		{"invalid UTF-8", edit(2, "base_ref: \"ma\xffin\""), 2, 14, "", "invalid UTF-8"},
		{"oversized", text(base) + long, 18, MaxSize - len(text(base)) + 1, "", "larger than 262144 bytes"},
		// Workdirs.
		{"absolute workdir", edit(4, `  workdir: "/tmp"`), 4, 12, "fail.workdir", "not absolute"},
		{"dotdot workdir", edit(4, `  workdir: ".."`), 4, 12, "fail.workdir", `must not contain ".."`},
		{"inner dotdot workdir", edit(8, `  workdir: "a/../../b"`), 8, 12, "pass.workdir", `must not contain ".."`},
		{"escaping workdir", edit(8, `  workdir: "tests/../.."`), 8, 12, "pass.workdir", `must not contain ".."`},
		{"unclean workdir", edit(4, `  workdir: "./tests"`), 4, 12, "fail.workdir", "clean form"},
		{"trailing slash workdir", edit(4, `  workdir: "tests/"`), 4, 12, "fail.workdir", "clean form"},
		{"double slash workdir", edit(4, `  workdir: "a//b"`), 4, 12, "fail.workdir", "clean form"},
		{"empty workdir", edit(4, `  workdir: ""`), 4, 12, "fail.workdir", "must not be empty"},
		{"git dir workdir", edit(4, `  workdir: ".git/hooks"`), 4, 12, "fail.workdir", "inside .git"},
		{"backslash workdir", edit(4, `  workdir: "a\\b"`), 4, 12, "fail.workdir", "separator"},
		{"integer workdir", edit(4, `  workdir: 1`), 4, 12, "fail.workdir", "expected a string"},
		// Globs.
		{"negated glob", edit(17, `  deny_globs: ["!docs/**"]`), 17, 16, "budget.deny_globs[0]", "negation"},
		{"dotdot glob", edit(17, `  deny_globs: ["docs/**", "../x"]`), 17, 27, "budget.deny_globs[1]", `".." segment`},
		{"empty glob", edit(17, `  deny_globs: [""]`), 17, 16, "budget.deny_globs[0]", "empty pattern"},
		{"null glob", edit(17, `  deny_globs: [~]`), 17, 16, "budget.deny_globs[0]", "expected a string, got null"},
		{"glob list null", edit(17, `  deny_globs:`), 17, 14, "budget.deny_globs", "expected a list"},
		{"glob is a string", edit(17, `  deny_globs: "docs/**"`), 17, 15, "budget.deny_globs", "expected a list"},
		// Timeouts and env.
		{"timeout without unit", edit(6, "  expect_exit: 1\n  timeout: \"10\""), 7, 12, "fail.timeout", "not a duration"},
		{"timeout integer", edit(6, "  expect_exit: 1\n  timeout: 10"), 7, 12, "fail.timeout", "expected a string"},
		{"timeout negative", edit(6, "  expect_exit: 1\n  timeout: \"-1m\""), 7, 12, "fail.timeout", "out of range"},
		{"timeout zero", edit(6, "  expect_exit: 1\n  timeout: \"0s\""), 7, 12, "fail.timeout", "out of range"},
		{"timeout too long", edit(6, "  expect_exit: 1\n  timeout: \"25h\""), 7, 12, "fail.timeout", "at most 24h"},
		{"timeout nanoseconds", edit(6, "  expect_exit: 1\n  timeout: \"1500us\""), 7, 12, "fail.timeout", "finer than a millisecond"},
		{"env name with =", edit(6, "  expect_exit: 1\n  env: {\"A=B\": \"x\"}"), 7, 9, "fail.env.A=B", "not a valid variable name"},
		{"env name empty", edit(6, "  expect_exit: 1\n  env: {\"\": \"x\"}"), 7, 9, "fail.env.", "not a valid variable name"},
		{"env value integer", edit(6, "  expect_exit: 1\n  env: {SEED: 0}"), 7, 15, "fail.env.SEED", "expected a string, got the integer 0"},
		{"env value NUL", edit(6, "  expect_exit: 1\n  env: {SEED: \"\\0\"}"), 7, 15, "fail.env.SEED", "U+0000"},
		{"env duplicate", edit(6, "  expect_exit: 1\n  env: {A: \"1\", A: \"2\"}"), 7, 17, "fail.env.A", "duplicate key"},
		{"env is a list", edit(6, "  expect_exit: 1\n  env: [A]"), 7, 8, "fail.env", "expected a mapping"},
		// Identity fields.
		{"id empty", edit(1, `id: ""`), 1, 5, "id", "must not be empty"},
		{"id integer", edit(1, `id: 4419`), 1, 5, "id", "expected a string, got the integer 4419"},
		{"origin empty", add("origin: \"\"\n"), 18, 9, "origin", "must not be empty"},
		{"base_ref option", edit(2, `base_ref: "--upload-pack=x"`), 2, 11, "base_ref", `must not start with "-"`},
		{"base_ref range", edit(2, `base_ref: "a..b"`), 2, 11, "base_ref", "one revision"},
		{"base_ref path", edit(2, `base_ref: "main:file"`), 2, 11, "base_ref", "whitespace"},
		{"base_sha short", add("base_sha: \"abc123\"\n"), 18, 11, "base_sha", "40"},
		{"base_sha upper", add("base_sha: \"" + strings.Repeat("A", 40) + "\"\n"), 18, 11, "base_sha", "lowercase hex"},
		{"expires unquoted", add("expires: 2027-01-01T00:00:00Z\n"), 18, 10, "expires", "quoted RFC 3339"},
		{"expires date only", add("expires: \"2027-01-01\"\n"), 18, 10, "expires", "not an RFC 3339 time"},
		{"expires garbage", add("expires: \"soon\"\n"), 18, 10, "expires", "not an RFC 3339 time"},
		// Sandbox.
		{"sandbox unknown", add("sandbox: {require: [gpu]}\n"), 18, 21, "sandbox.require[0]", `unknown requirement "gpu"`},
		{"sandbox duplicate", add("sandbox: {require: [network, network]}\n"), 18, 30, "sandbox.require[1]", "listed twice"},
		{"sandbox unknown key", add("sandbox: {requires: [network]}\n"), 18, 11, "sandbox.requires", "unknown key"},
		{"max_disk unquoted number", add("sandbox: {max_disk: 8589934592}\n"), 18, 21, "sandbox.max_disk", "expected a string"},
		{"max_disk decimal unit", add("sandbox: {max_disk: \"8GB\"}\n"), 18, 21, "sandbox.max_disk", "not a size"},
		{"max_disk no unit", add("sandbox: {max_disk: \"8\"}\n"), 18, 21, "sandbox.max_disk", "not a size"},
		{"max_disk fraction", add("sandbox: {max_disk: \"1.5GiB\"}\n"), 18, 21, "sandbox.max_disk", "not a size"},
		{"max_disk negative", add("sandbox: {max_disk: \"-1GiB\"}\n"), 18, 21, "sandbox.max_disk", "not a size"},
		{"max_disk zero", add("sandbox: {max_disk: \"0GiB\"}\n"), 18, 21, "sandbox.max_disk", "not a size"},
		{"max_disk space", add("sandbox: {max_disk: \"8 GiB\"}\n"), 18, 21, "sandbox.max_disk", "not a size"},
		{"max_disk too small", add("sandbox: {max_disk: \"8KiB\"}\n"), 18, 21, "sandbox.max_disk", "out of range"},
		{"max_disk too large", add("sandbox: {max_disk: \"2TiB\"}\n"), 18, 21, "sandbox.max_disk", "out of range"},
		{"max_disk overflow", add("sandbox: {max_disk: \"9999999999999999TiB\"}\n"), 18, 21, "sandbox.max_disk", "too large"},
		{"max_disk_files quoted", add("sandbox: {max_disk_files: \"500\"}\n"), 18, 27, "sandbox.max_disk_files", "expected an integer"},
		{"max_disk_files too few", add("sandbox: {max_disk_files: 5}\n"), 18, 27, "sandbox.max_disk_files", "out of range"},
		{"max_disk_files negative", add("sandbox: {max_disk_files: -1}\n"), 18, 27, "sandbox.max_disk_files", "out of range"},
		{"max_disk_files hex", add("sandbox: {max_disk_files: 0x1000}\n"), 18, 27, "sandbox.max_disk_files", "plain decimal"},
		// Canary.
		{"canary on", add("canary: \"on\"\n"), 18, 9, "canary", `"on" is not a canary setting`},
		{"canary false", add("canary: false\n"), 18, 9, "canary", "expected a string, got the boolean false"},
		{"canary empty", add("canary: \"\"\n"), 18, 9, "canary", `"" is not a canary setting`},
		{"canary list", add("canary: [off]\n"), 18, 9, "canary", "expected a string"},
		// Signoff, signatures, annotations.
		{"signoff decision", add("signoff: {at: \"2026-01-01T00:00:00Z\", tool: t, decision: stale, runs: [{role: fail, exit: 1, duration_ms: 1}]}\n"), 18, 58, "signoff.decision", "not a signing decision"},
		{"signoff missing tool", add("signoff: {at: \"2026-01-01T00:00:00Z\", decision: sign, runs: []}\n"), 18, 10, "signoff.tool", "missing"},
		{"signoff no runs", add("signoff: {at: \"2026-01-01T00:00:00Z\", tool: t, decision: sign, runs: []}\n"), 18, 70, "signoff.runs", "must not be empty"},
		{"signoff run role", add("signoff: {at: \"2026-01-01T00:00:00Z\", tool: t, decision: sign, runs: [{role: build, exit: 1, duration_ms: 1}]}\n"), 18, 78, "signoff.runs[0].role", `unknown role "build"`},
		{"signoff run exit", add("signoff: {at: \"2026-01-01T00:00:00Z\", tool: t, decision: sign, runs: [{role: fail, exit: 300, duration_ms: 1}]}\n"), 18, 90, "signoff.runs[0].exit", "out of range"},
		{"signoff run duration", add("signoff: {at: \"2026-01-01T00:00:00Z\", tool: t, decision: sign, runs: [{role: fail, exit: 1, duration_ms: -5}]}\n"), 18, 106, "signoff.runs[0].duration_ms", "out of range"},
		{"signoff reference", add("signoff: {at: \"2026-01-01T00:00:00Z\", tool: t, decision: sign, reference: \"sha1:00\", runs: [{role: fail, exit: 1, duration_ms: 1}]}\n"), 18, 75, "signoff.reference", "not a digest"},
		{"signoff at unquoted", add("signoff: {at: 2026-01-01T00:00:00Z, tool: t, decision: sign, runs: []}\n"), 18, 15, "signoff.at", "quoted RFC 3339"},
		{"signature missing", add("signatures:\n  - principal: \"a@b\"\n"), 19, 5, "signatures[0].signature", "missing"},
		{"signature not a list", add("signatures: {principal: a}\n"), 18, 13, "signatures", "expected a list"},
		{"annotation raises max_files", add("annotations:\n  - {by: r, at: \"2026-01-01T00:00:00Z\", note: n, tighten: {max_files: 5}}\n"), 19, 71, "annotations[0].tighten.max_files", "raises the signed limit 3"},
		{"annotation raises lines", add("annotations:\n  - {by: r, at: \"2026-01-01T00:00:00Z\", note: n, tighten: {max_changed_lines: 81}}\n"), 19, 79, "annotations[0].tighten.max_changed_lines", "raises the signed limit 80"},
		{"annotation negated glob", add("annotations:\n  - {by: r, at: \"2026-01-01T00:00:00Z\", note: n, tighten: {deny_globs: [\"!x\"]}}\n"), 19, 73, "annotations[0].tighten.deny_globs[0]", "negation"},
		{"annotation allows another runner input", add("annotations:\n  - {by: r, at: \"2026-01-01T00:00:00Z\", note: n, tighten: {allow_harness: [\"conftest.py\"]}}\n"), 19, 76, "annotations[0].tighten.allow_harness[0]", "not in the signed budget.allow_harness"},
		{"annotation unknown key", add("annotations:\n  - {by: r, at: \"2026-01-01T00:00:00Z\", note: n, raise: {max_files: 9}}\n"), 19, 50, "annotations[0].raise", "unknown key"},
		{"annotation missing note", add("annotations:\n  - {by: r, at: \"2026-01-01T00:00:00Z\"}\n"), 19, 5, "annotations[0].note", "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("card.yml", []byte(tt.in))
			if c != nil {
				t.Errorf("Parse(%s) returned a card with error %v", tt.name, err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%s) = %v, want a *ParseError\n%s", tt.name, err, tt.in)
			}
			if pe.Line != tt.line || pe.Col != tt.col || pe.Field != tt.field || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("Parse(%s) = %q (hint %q), want %d:%d: %s: ...%s...", tt.name, err, pe.Hint, tt.line, tt.col, tt.field, tt.msg)
			}
			if pe.File != "card.yml" || !strings.HasPrefix(err.Error(), "card.yml:") {
				t.Errorf("Parse(%s) error %q does not name the file", tt.name, err)
			}
			if len(pe.Hints()) == 0 {
				t.Errorf("Parse(%s) error %q has no hint", tt.name, err)
			}
		})
	}
}

func TestParseErrorFormat(t *testing.T) {
	_, err := Parse("c.yml", []byte(edit(6, "  expect_exit: 256")))
	if got, want := err.Error(), "c.yml:6:16: fail.expect_exit: 256 is out of range: an exit code is 0..255"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	_, err = Parse("c.yml", []byte(text(base)+"# "+strings.Repeat("x", MaxSize)))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse(oversized) = %v, want ErrTooLarge", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/card.yml"
	if err := os.WriteFile(path, []byte(text(base)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || c.ID != "X-1" {
		t.Errorf("Load(%s) = %v, %v, want card X-1", path, c, err)
	}
	big := dir + "/big.yml"
	if err := os.WriteFile(big, []byte(text(base)+"# "+strings.Repeat("x", 4*MaxSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(big); c != nil || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Load(big) = %v, %v, want ErrTooLarge", c, err)
	}
	for _, p := range []string{dir + "/missing.yml", dir, "/dev/null"} {
		c, err := Load(p)
		var re *ReadError
		if c != nil || !errors.As(err, &re) || len(re.Hints()) == 0 {
			t.Errorf("Load(%s) = %v, %v, want a *ReadError", p, c, err)
		}
	}
}

// TestReadNotRegular checks Load and Read refuse a FIFO and a folder at
// once: opening a FIFO to read it would block until a writer came.
func TestReadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "card.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{fifo, dir} {
		done := make(chan error, 1)
		go func() { _, _, err := Read(p); done <- err }()
		select {
		case err := <-done:
			var re *ReadError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Read(%s) = %v, want a ReadError: not a regular file", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read(%s) blocked", p)
		}
	}
}
