package gate

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/harness"
	"github.com/failpass/failpass/internal/heldout"
	"github.com/failpass/failpass/internal/testrunner"
)

// HarnessInputs says which of paths are implicit inputs of the card's test
// runners (budget.harness), and why, reading the base tree as far as
// deciding them needs (often not at all). A candidate's own files are
// never read: its go.work, conftest.py or package.json could say anything.
func (b *Bound) HarnessInputs(ctx context.Context, paths []string) (map[string]string, error) {
	c := b.Card
	t := &baseTree{ctx: ctx, repo: b.Repo, base: b.Base, blobs: map[string]blob{}}
	cmds := []card.Command{c.Fail, c.Pass, c.Invariant}
	if c.HeldOut != nil {
		cmds = append(cmds, heldOutStandIn(c.HeldOut))
	}
	found, err := harness.Find(cmds, paths, t)
	if err != nil {
		return nil, err
	}
	if h := c.HeldOut; h != nil && h.ExpectStdout != "" {
		// A probe judged on its output runs alone in a folder the base
		// lacks: a file beside it (a go file of its package, a module a
		// Python probe imports first) is code it may run unseen.
		for _, p := range paths {
			if p == h.Dest || strings.HasPrefix(p, h.Dest+"/") {
				if found == nil {
					found = map[string]string{}
				}
				found[p] = fmt.Sprintf("it is under held_out.dest %q, where the held-out probe runs alone (held_out.expect_stdout)", h.Dest)
			}
		}
	}
	return found, nil
}

// heldOutStandIn is the held-out command as the harness rule sees it. The
// files it will run are private (that is the point), so one stand-in test
// file in held_out.dest takes their place: a conftest.py, __init__.py or
// pytest configuration on the way to dest is as much an input of the
// held-out run as of the oracle's, and a candidate must not plant one to
// neuter tests it cannot see.
func heldOutStandIn(h *card.HeldOut) card.Command {
	name := "test_heldout.py"
	switch testrunner.Recognize(h.Cmd, h.Workdir).Kind {
	case testrunner.GoTest:
		name = "heldout_test.go"
	case testrunner.NPM, testrunner.Jest, testrunner.Vitest, testrunner.NodeTest:
		name = "heldout.test.js"
	}
	rel, err := heldout.RelPaths(h.Workdir, []string{path.Join(h.Dest, name)})
	if err != nil {
		rel = []string{path.Join(h.Dest, name)}
	}
	return h.Command(rel)
}

// maxHarnessFile is the largest base file the harness rule reads (a Go
// file's imports); a larger one (generated tables) reads as absent.
const maxHarnessFile = 4 << 20

type blob struct {
	oid  string
	size int64
}

// baseTree is harness.Tree over a commit: `git ls-tree` of the folders
// asked about, `git cat-file --batch` of the files.
type baseTree struct {
	ctx   context.Context
	repo  *gitx.Repo
	base  string
	blobs map[string]blob // what listings found
}

func (t *baseTree) List(dirs []string) (map[string][]string, error) {
	want := map[string]bool{}
	args := []string{"ls-tree", "-l", "-z", "--full-tree", t.base, "--"}
	for _, d := range dirs {
		want[d] = true
		if d == "." {
			args = append(args, ".")
		} else {
			args = append(args, d+"/")
		}
	}
	raw, err := gitx.CommandEnv(t.ctx, t.repo.Dir, nil, []string{"GIT_LITERAL_PATHSPECS=1"}, args...)
	if err != nil {
		return nil, err
	}
	entries, err := gitx.ParseTree(raw, true)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range entries {
		if e.Type != "blob" {
			continue
		}
		t.blobs[e.Name] = blob{oid: e.OID, size: max(e.Size, 0)}
		if d := path.Dir(e.Name); want[d] {
			out[d] = append(out[d], path.Base(e.Name))
		}
	}
	return out, nil
}

func (t *baseTree) Read(paths []string) (map[string][]byte, error) {
	var in bytes.Buffer
	var asked []string
	for _, p := range paths {
		b, listed := t.blobs[p]
		switch {
		case listed && b.size > maxHarnessFile:
		case listed:
			in.WriteString(b.oid + "\n")
			asked = append(asked, p)
		case !strings.ContainsAny(p, "\n\r"):
			in.WriteString(t.base + ":" + p + "\n")
			asked = append(asked, p)
		}
	}
	out := map[string][]byte{}
	if len(asked) == 0 {
		return out, nil
	}
	raw, err := gitx.Command(t.ctx, t.repo.Dir, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	for _, p := range asked {
		line, rest, ok := bytes.Cut(raw, []byte{'\n'})
		if !ok {
			return nil, fmt.Errorf("git cat-file --batch: output ends early")
		}
		raw = rest
		if bytes.HasSuffix(line, []byte(" missing")) || bytes.HasSuffix(line, []byte(" ambiguous")) {
			continue // not in the base
		}
		f := strings.Fields(string(line))
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file --batch: unexpected header %q", line)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size+1 > len(raw) {
			return nil, fmt.Errorf("git cat-file --batch: unexpected header %q", line)
		}
		if f[1] == "blob" && size <= maxHarnessFile {
			out[p] = raw[:size:size]
		}
		raw = raw[size+1:]
	}
	return out, nil
}
