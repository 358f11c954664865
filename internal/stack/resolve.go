package stack

import (
	"path"
	"sort"
	"strings"
)

// File is one repository file a trace names, with every frame naming it.
type File struct {
	Path   string // relative to the repository top, as git lists it
	Frames []Frame
}

// Ambiguous is a frame whose short path (a Java package path, a Go test
// file's base name) ends several repository files.
type Ambiguous struct {
	Frame      Frame
	Candidates []string
}

// Resolution says which frames name repository files.
type Resolution struct {
	// Files are the distinct repository files, in order of first
	// appearance in the trace.
	Files []File
	// Outside are frames naming no repository file: the standard library,
	// installed dependencies, files that are not tracked.
	Outside []Frame
	// Ambiguous frames are not counted: failpass does not guess.
	Ambiguous []Ambiguous
}

// installed marks folders of installed code. A path through one of them
// names a copy of a dependency, even when its tail looks like a repository
// file (site-packages/libparse/header.py of an installed libparse).
var installed = []string{"site-packages", "dist-packages", "node_modules", ".cargo", "rustc", "pkg/mod", ".rustup", ".m2", ".gradle"}

// Resolve maps frames onto the repository's tracked files. root is the
// absolute repository top (a trace from this checkout names files under
// it); tracked are the repository's paths as `git ls-files` prints them.
//
// An absolute path under root names root/rel exactly. Any other path names
// the longest tracked file it ends with (a trace from another machine:
// /home/runner/work/p/p/src/x.py names src/x.py), unless it runs through
// an installed-code folder. A relative path no tracked file equals or ends
// in may be the tail of one (com/example/Foo.java names
// src/main/java/com/example/Foo.java) when exactly one tracked file ends
// with it.
func Resolve(frames []Frame, root string, tracked []string) Resolution {
	set := make(map[string]bool, len(tracked))
	for _, t := range tracked {
		set[t] = true
	}
	root = strings.TrimSuffix(path.Clean(strings.ReplaceAll(root, `\`, "/")), "/")
	var r Resolution
	index := map[string]int{}
	for _, f := range frames {
		file, cands := resolveOne(f.Path, root, set, tracked)
		switch {
		case file != "":
			i, ok := index[file]
			if !ok {
				i = len(r.Files)
				index[file] = i
				r.Files = append(r.Files, File{Path: file})
			}
			r.Files[i].Frames = append(r.Files[i].Frames, f)
		case len(cands) > 1:
			r.Ambiguous = append(r.Ambiguous, Ambiguous{Frame: f, Candidates: cands})
		default:
			r.Outside = append(r.Outside, f)
		}
	}
	return r
}

func resolveOne(p, root string, set map[string]bool, tracked []string) (string, []string) {
	if root != "" && root != "." && strings.HasPrefix(p, root+"/") {
		rel := strings.TrimPrefix(p, root+"/")
		if set[rel] {
			return rel, nil
		}
		return "", nil // under this checkout but not tracked (generated, ignored)
	}
	rel := p
	for strings.HasPrefix(rel, "../") {
		rel = rel[3:]
	}
	if !strings.HasPrefix(rel, "/") && set[rel] {
		return rel, nil
	}
	if throughInstalled(p) {
		return "", nil
	}
	// The longest tracked file p ends with.
	best := ""
	for dir := rel; ; {
		i := strings.IndexByte(dir, '/')
		if i < 0 {
			break
		}
		dir = dir[i+1:]
		if set[dir] {
			best = dir
			break
		}
	}
	if best != "" {
		return best, nil
	}
	if strings.HasPrefix(rel, "/") {
		return "", nil
	}
	// A relative tail of tracked files.
	var cands []string
	for _, t := range tracked {
		if strings.HasSuffix(t, "/"+rel) {
			cands = append(cands, t)
		}
	}
	sort.Strings(cands)
	if len(cands) == 1 {
		return cands[0], nil
	}
	return "", cands
}

func throughInstalled(p string) bool {
	s := "/" + strings.TrimPrefix(p, "/") + "/"
	for _, d := range installed {
		if strings.Contains(s, "/"+d+"/") {
			return true
		}
	}
	return false
}
