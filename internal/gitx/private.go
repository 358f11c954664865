package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Private is a git directory of failpass's own over a repository's
// object store: a HEAD, an index and a configuration that failpass
// writes (the object format alone), and the repository's objects. Git
// run through it reads no system or global configuration, no home
// folder, no hook, no worktree's git folder or `.git` file, and no
// configuration of the repository itself: nothing a program failpass
// ran (a loop's fixer, a card command) could have written can make it
// run a filter, a hook or any other program. Its plumbing writes new
// objects into the repository's object store, and nothing else there.
//
// The repository's own info/exclude and info/attributes are copied in
// when it is made: they are the user's, read once by failpass.
type Private struct {
	Dir     string // the git directory, failpass's alone
	objects string // the repository's object folder
	work    string // the work tree git reads, "" for none
}

// NewPrivate makes a private git directory for repo in dir (an empty
// folder failpass owns), with head as its detached HEAD and index as
// head's tree. workTree (may be "") is the folder git reads files and
// ignore rules from; failpass reads it as data, never its `.git`.
func NewPrivate(ctx context.Context, repo *Repo, dir, head, workTree string) (*Private, error) {
	format, err := repo.Git(ctx, "rev-parse", "--show-object-format")
	if err != nil {
		return nil, err
	}
	conf := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	switch f := strings.TrimSpace(string(format)); f {
	case "sha1":
	case "sha256":
		conf = "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n"
	default:
		return nil, fmt.Errorf("gitx: unknown object format %q", f)
	}
	for _, d := range []string{"refs", "objects", "info"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	files := map[string]string{"config": conf, "HEAD": head + "\n"}
	for _, name := range []string{"exclude", "attributes"} {
		b, err := os.ReadFile(filepath.Join(repo.CommonDir, "info", name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		files[filepath.Join("info", name)] = string(b)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	p := &Private{Dir: dir, objects: filepath.Join(repo.CommonDir, "objects"), work: workTree}
	if _, err := p.Git(ctx, nil, "read-tree", head+"^{tree}"); err != nil {
		return nil, err
	}
	return p, nil
}

// Index is the private index's file.
func (p *Private) Index() string { return filepath.Join(p.Dir, "index") }

// Git runs git with the private directory, its index and its work tree.
// The environment is fixed: failpass's own settings only (gitx's
// hardening, no system or global configuration, a HOME and
// XDG_CONFIG_HOME inside the private directory, so no ignore or
// attribute file of the user's home is read either, and no replace
// objects).
func (p *Private) Git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return p.GitEnv(ctx, stdin, nil, args...)
}

// GitEnv is Git with extra environment entries (an identity for
// commit-tree).
func (p *Private) GitEnv(ctx context.Context, stdin []byte, extra []string, args ...string) ([]byte, error) {
	global := []string{"--git-dir=" + p.Dir}
	dir := p.Dir
	if p.work != "" {
		global = append(global, "--work-tree="+p.work)
		dir = p.work
	}
	env := append([]string{
		"GIT_OBJECT_DIRECTORY=" + p.objects,
		"GIT_INDEX_FILE=" + p.Index(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"HOME=" + p.Dir,
		"XDG_CONFIG_HOME=" + p.Dir,
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_ATTR_NOSYSTEM=1",
	}, extra...)
	return CommandEnv(ctx, dir, stdin, env, append(global, args...)...)
}
