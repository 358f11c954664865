package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// bind is a folder (or file) bind-mounted onto itself, read-only or not.
type bind struct {
	Path string `json:"path"`
	RO   bool   `json:"ro"`
}

// gitPaths are the git files and folders of a worktree.
type gitPaths struct {
	dotGit    string // <root>/.git: a folder, or a file pointing at gitDir
	gitDir    string
	commonDir string
}

// findGitPaths reads root/.git (a folder, or a linked worktree's
// `gitdir:` file) and the gitdir's `commondir` file. It never runs git:
// its answers must not depend on a config the command may have touched.
func findGitPaths(root string) (gitPaths, error) {
	g := gitPaths{dotGit: filepath.Join(root, ".git")}
	fi, err := os.Lstat(g.dotGit)
	if err != nil {
		return g, fmt.Errorf("sandbox: %s is not a git worktree: %w", root, err)
	}
	switch {
	case fi.IsDir():
		g.gitDir = g.dotGit
	case fi.Mode().IsRegular():
		b, err := os.ReadFile(g.dotGit)
		if err != nil {
			return g, fmt.Errorf("sandbox: %w", err)
		}
		d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return g, fmt.Errorf("sandbox: %s: not a gitdir file", g.dotGit)
		}
		d = strings.TrimSpace(d)
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		g.gitDir = d
	default:
		return g, fmt.Errorf("sandbox: %s is neither a folder nor a gitdir file", g.dotGit)
	}
	if g.gitDir, err = filepath.EvalSymlinks(g.gitDir); err != nil {
		return g, fmt.Errorf("sandbox: git folder: %w", err)
	}
	g.commonDir = g.gitDir
	if b, err := os.ReadFile(filepath.Join(g.gitDir, "commondir")); err == nil {
		d := strings.TrimSpace(string(b))
		if !filepath.IsAbs(d) {
			d = filepath.Join(g.gitDir, d)
		}
		if g.commonDir, err = filepath.EvalSymlinks(d); err != nil {
			return g, fmt.Errorf("sandbox: git common folder: %w", err)
		}
	}
	return g, nil
}

// gitBinds orders the bind mounts: the git folders read-only, then the
// writable folders that live below them (a failpass worktree lives in
// the common dir) read-write again, then root/.git read-only (inside
// the writable worktree), parents before children.
func gitBinds(g gitPaths, writable []string) []bind {
	// A git folder the command may write (a loop fixer's private
	// repository) is bound read-write.
	bs := []bind{{Path: g.commonDir, RO: !slices.Contains(writable, g.commonDir)}}
	if !within(g.commonDir, g.gitDir) {
		bs = append(bs, bind{Path: g.gitDir, RO: !slices.Contains(writable, g.gitDir)})
	}
	for _, w := range writable {
		for _, ro := range []string{g.commonDir, g.gitDir} {
			if within(ro, w) && w != ro {
				bs = append(bs, bind{Path: w})
				break
			}
		}
	}
	if g.dotGit != g.gitDir {
		bs = append(bs, bind{Path: g.dotGit, RO: true})
	}
	sort.SliceStable(bs, func(i, j int) bool { return depth(bs[i].Path) < depth(bs[j].Path) })
	return bs
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

func bindPaths(bs []bind) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Path)
	}
	return out
}

// keepUnder returns the outermost of paths that lie below top: what must
// be re-bound after a tmpfs covers top.
func keepUnder(top string, paths []string) []string {
	var under []string
	for _, p := range paths {
		if p != top && within(top, p) {
			under = append(under, filepath.Clean(p))
		}
	}
	sort.Slice(under, func(i, j int) bool { return len(under[i]) < len(under[j]) })
	var out []string
	for _, p := range under {
		if !slices.ContainsFunc(out, func(o string) bool { return within(o, p) }) {
			out = append(out, p)
		}
	}
	return out
}

// mask is a file the command sees with other content, read-only.
type mask struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// gitConfigKept are the settings of a repository's config a command inside
// the sandbox sees: what git needs to read the repository. Everything else
// (remote URLs with tokens, http.extraheader credentials a CI checkout
// leaves behind, include paths, aliases) is masked.
var gitConfigKept = map[string]map[string]bool{
	"core": {"repositoryformatversion": true, "bare": true, "filemode": true, "ignorecase": true,
		"symlinks": true, "precomposeunicode": true, "logallrefupdates": true},
	"extensions": {"objectformat": true, "compatobjectformat": true, "worktreeconfig": true, "refstorage": true,
		"preciousobjects": true, "partialclone": true, "noop": true, "noop-v1": true},
}

// sanitizeGitConfig keeps only gitConfigKept of a git config file. It is
// a line reader, not a full parser: anything it does not recognize is
// dropped, so its output is never more than the input says.
func sanitizeGitConfig(b []byte) []byte {
	var out strings.Builder
	section, wrote := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			end := strings.IndexByte(t, ']')
			if end < 0 {
				section = ""
				continue
			}
			name := strings.ToLower(strings.TrimSpace(t[1:end]))
			if strings.ContainsAny(name, " \t\"") || strings.Contains(name, ".") {
				section = "" // subsections ([remote "origin"], [http.https://...]) are never kept
				continue
			}
			section = name
			t = strings.TrimSpace(t[end+1:])
			if t == "" {
				continue
			}
		}
		keys, ok := gitConfigKept[section]
		if !ok || t == "" || t[0] == '#' || t[0] == ';' || strings.HasSuffix(t, "\\") {
			continue
		}
		k, v, _ := strings.Cut(t, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if k == "" || strings.ContainsAny(k, " \t\"#;") || strings.ContainsAny(v, "\"\\#;") {
			continue
		}
		if !keys[k] {
			continue
		}
		if wrote != section {
			fmt.Fprintf(&out, "[%s]\n", section)
			wrote = section
		}
		if v == "" && !strings.Contains(t, "=") {
			fmt.Fprintf(&out, "\t%s\n", k)
		} else {
			fmt.Fprintf(&out, "\t%s = %s\n", k, v)
		}
	}
	return []byte(out.String())
}

// sharedBinds are the folders of readable that every run reads and none
// writes (the system's, the toolchain's, the module cache), each bound
// read-only onto itself: a read-only mount updates no access time, so no
// run leaves a mark on a shared file that a later run could read (which
// files an earlier run opened, and so whether it ran). A folder that
// holds anything of keep (what is written, the git folders, the tree), or
// lies in one, is left as it is, as are /proc, /sys, /dev and the private /tmp, and a
// folder below one already bound. Of a file, its folder is bound: /etc
// for /etc's entries (the loader cache, passwd, localtime). Symlinks are
// resolved: /lib on a merged-/usr system is /usr/lib.
func sharedBinds(readable, keep []string) []bind {
	var roots []string
	special := func(p string) bool {
		return p == "/" || within("/dev", p) || within("/tmp", p) || within("/sys", p) || within("/proc", p)
	}
	for _, r := range readable {
		if special(r) {
			continue
		}
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			// A file (one of /etc's entries, a file a card names):
			// its folder is bound, read-only only in the mount
			// namespace (Landlock still grants the file alone).
			real = filepath.Dir(real)
		}
		if special(real) || slices.ContainsFunc(keep, func(k string) bool { return within(real, k) || within(k, real) }) {
			continue // holds something of keep, or lies in it (the git folders are bound on their own)
		}
		roots = append(roots, real)
	}
	sort.SliceStable(roots, func(i, j int) bool { return depth(roots[i]) < depth(roots[j]) })
	var bs []bind
	for _, r := range roots {
		if !slices.ContainsFunc(bs, func(b bind) bool { return within(b.Path, r) }) {
			bs = append(bs, bind{Path: r, RO: true})
		}
	}
	return bs
}
