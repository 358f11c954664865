package card

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// RolePrepare names the prepare command's run (it is not one of Roles:
// a card's three commands).
const RolePrepare Role = "prepare"

// Prepare is the card's prepare command: it fetches what the card's
// commands need (`go mod download`, a pip download into its cache) once
// per card and base, before the base runs, with network and with the
// card's dependency folder writable; every other run reads that folder
// and has no network. It must exit 0. Every field is signed.
type Prepare struct {
	// Workdir is a clean relative path inside the repository; "." is
	// the root.
	Workdir string
	// Cmd is the argv; never run through a shell unless it names one.
	Cmd []string
	// Timeout is positive and at most MaxTimeout; Parse fills in
	// DefaultTimeout.
	Timeout time.Duration
	// Env adds variables to the command's environment (a GOPROXY, a
	// package index); nil when none.
	Env map[string]string
}

// Command is the prepare command as a card command: it must exit 0.
func (p *Prepare) Command() Command {
	return Command{Workdir: workdir(p.Workdir), Cmd: slices.Clone(p.Cmd), ExpectExit: 0, Timeout: timeout(p.Timeout), Env: p.Env}
}

var prepareKeys = []string{"workdir", "cmd", "timeout", "env"}

func (p *parser) prepare(n *yaml.Node) (*Prepare, error) {
	const field = "prepare"
	v, _, err := p.mapping(n, field, prepareKeys)
	if err != nil {
		return nil, err
	}
	pr := &Prepare{Workdir: DefaultWorkdir, Timeout: DefaultTimeout}
	if wn, ok := v["workdir"]; ok {
		if pr.Workdir, err = p.workdir(wn, join(field, "workdir")); err != nil {
			return nil, err
		}
	}
	cn, ok := v["cmd"]
	if !ok {
		return nil, p.missing(n, join(field, "cmd"), "add cmd: the command that fetches the dependencies, e.g. [\"go\", \"mod\", \"download\"]")
	}
	if pr.Cmd, err = p.argv(cn, join(field, "cmd")); err != nil {
		return nil, err
	}
	if tn, ok := v["timeout"]; ok {
		if pr.Timeout, err = p.duration(tn, join(field, "timeout")); err != nil {
			return nil, err
		}
	}
	if en, ok := v["env"]; ok {
		if pr.Env, err = p.env(en, join(field, "env")); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// marshalPrepare writes the prepare block as Marshal writes the rest.
func marshalPrepare(b *strings.Builder, pr *Prepare) {
	kv := func(indent, key, val string) { fmt.Fprintf(b, "%s%s: %s\n", indent, key, val) }
	b.WriteString("prepare:\n")
	kv("  ", "workdir", q(workdir(pr.Workdir)))
	kv("  ", "cmd", list(pr.Cmd))
	if t := timeout(pr.Timeout); t != DefaultTimeout {
		kv("  ", "timeout", q(formatDuration(t)))
	}
	marshalEnv(b, pr.Env)
}

// canonPrepare is prepare in the signed bytes: workdir, timeout and env
// always present, so spelling out a default signs the same bytes.
type canonPrepare struct {
	Workdir string            `json:"workdir"`
	Cmd     []string          `json:"cmd"`
	Timeout string            `json:"timeout"`
	Env     map[string]string `json:"env"`
}

func canonPrep(pr *Prepare) *canonPrepare {
	if pr == nil {
		return nil
	}
	env := map[string]string{}
	for k, v := range pr.Env {
		env[k] = v
	}
	return &canonPrepare{Workdir: workdir(pr.Workdir), Cmd: slices.Clone(pr.Cmd), Timeout: formatDuration(timeout(pr.Timeout)), Env: env}
}
