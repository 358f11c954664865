package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// View is the private view of the file system a process of the loop's
// roles (a reviewer, a fixer) runs in. Unlike a card command it keeps
// the machine's network, files and user: a reviewer program may well call
// a model over the network with the user's configuration. What it must
// not do is change the repository: ReadOnly folders cannot be written,
// Hidden ones cannot be read, and Overlay is seen as it is while every
// write to it lands in a throwaway layer and is reported.
//
// Where namespaces can be made (root, or any user a user namespace is
// allowed to), the view is a private mount namespace (inside a user
// namespace when not root) and a PID namespace, so nothing the process
// starts outlives it. Where they cannot (user namespaces denied by
// AppArmor or seccomp), the view is a Landlock domain: everything
// readable but the Hidden folders, everything writable but the ReadOnly
// and Hidden ones (Writable folders inside them excepted). There is no
// overlay then: the Overlay folder is writable and nothing is captured,
// so it must be a throwaway copy whose changes the caller looks for
// itself. Nor is there a PID namespace: what the command starts outlives
// it unless its process group is killed. Result's report names what the
// view lacked.
type View struct {
	// ReadOnly folders cannot be written (bind-mounted read-only over
	// themselves, or left out of Landlock's write rules).
	ReadOnly []string
	// Writable are folders inside ReadOnly ones that stay writable.
	Writable []string
	// Hidden folders show nothing (an empty read-only tmpfs over them, or
	// left out of Landlock's rules).
	Hidden []string
	// Overlay, when set, is a folder presented through an overlay whose
	// upper layer is private: the process sees the exact files, the folder
	// itself is never written, and what it wrote is reported (with
	// namespaces; see above).
	Overlay string

	mu  sync.Mutex
	res ViewResult
}

// ViewResult is what a command run in a View reported.
type ViewResult struct {
	// Ran says the helper built the view and reported back.
	Ran bool
	// Written are the paths below Overlay the command wrote (its overlay's
	// upper layer), relative and sorted.
	Written []string
	// Report says which layers and features the view used and which this
	// machine could not provide, with the reason for each.
	Report Report
}

// Result is what the last command run in v reported.
func (v *View) Result() ViewResult {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.res
}

func (v *View) setResult(r ViewResult) {
	v.mu.Lock()
	v.res = r
	v.mu.Unlock()
}

// realPaths resolves each path's symlinks (a path that does not resolve
// is kept as given), so the view names what the kernel will find.
func realPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// complement returns paths whose subtrees together hold every path of the
// file system outside the subtrees of excluded, for Landlock, whose rules
// can only grant: the entries of every folder on the way from / to an
// excluded path, except that way itself. The folders on the way get no
// rule (a rule on them would grant the excluded paths below), nor does a
// symlink that leads into an excluded path. A folder the user cannot list
// contributes nothing.
func complement(excluded []string) []string { return complementIn("/", excluded) }

// complementIn is complement within the subtree of top: paths whose
// subtrees together hold every path below top outside the subtrees of
// excluded.
func complementIn(top string, excluded []string) []string {
	ex := realPaths(excluded)
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") || root == "/" }
	isExcluded := func(p string) bool {
		for _, e := range ex {
			if under(p, e) {
				return true
			}
		}
		return false
	}
	leadsTo := func(p string) bool {
		for _, e := range ex {
			if strings.HasPrefix(e, p+"/") {
				return true
			}
		}
		return false
	}
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, ent := range ents {
			p := filepath.Join(dir, ent.Name())
			switch {
			case isExcluded(p):
			case leadsTo(p):
				walk(p)
			case ent.Type()&os.ModeSymlink != 0:
				if r, err := filepath.EvalSymlinks(p); err == nil && !isExcluded(r) && !leadsTo(r) {
					out = append(out, p)
				}
			default:
				out = append(out, p)
			}
		}
	}
	switch {
	case isExcluded(top):
		return nil
	case top != "/" && !leadsTo(top):
		return []string{top} // nothing below it is excluded
	}
	walk(top)
	return out
}

// MissingText names what r lacks, for a log line: the missing features,
// grouped by reason ("pidns, mountns (namespaces unavailable: ...)");
// "" when nothing is missing.
func MissingText(r Report) string {
	var reasons []string
	byReason := map[string][]string{}
	for _, f := range allFeatures {
		if w, ok := r.Why[string(f)]; ok {
			if byReason[w] == nil {
				reasons = append(reasons, w)
			}
			byReason[w] = append(byReason[w], string(f))
		}
	}
	var out []string
	for _, w := range reasons {
		out = append(out, fmt.Sprintf("%s (%s)", strings.Join(byReason[w], ", "), w))
	}
	return strings.Join(out, "; ")
}
