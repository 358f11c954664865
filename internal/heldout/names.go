package heldout

import (
	"path"
	"strconv"
	"strings"
)

// Names gives each file (a slash path of the held-out folder) the name it
// takes in the flat dest folder: `[A-Za-z][A-Za-z0-9_]*` plus the
// extension (letters and digits), so no name starts with "_" or "." or
// reads as an option or a glob. A name keeps the form its test runner
// collects: `test_*.py` stays `test_*`, `*_test.py` and `*_test.go` stay
// `*_test`. No stem ends in a GOOS or GOARCH element (`x_linux_test.go`
// becomes `x_linux_heldout_test.go`): a Go build constraint in the name
// would silently drop the file on other systems. A name taken says true,
// or already given to an earlier file (compared without case, for
// case-insensitive file systems), gets a numbered variant instead. Names
// is pure given taken.
func Names(files []string, taken func(name string) bool) []string {
	given := map[string]bool{}
	out := make([]string, len(files))
	for i, f := range files {
		n := newName(path.Base(f))
		name := n.render(0)
		for k := 2; given[strings.ToLower(name)] || (taken != nil && taken(name)); k++ {
			name = n.render(k)
		}
		given[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}

// A name is a stem in three parts: a kept prefix ("test_"), the core, a
// kept suffix ("_test"); and the extension.
type name struct {
	prefix, core, suffix, ext string
}

func newName(base string) name {
	var n name
	stem := base
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		stem, n.ext = base[:i], keepAlnum(base[i+1:])
	}
	switch {
	case strings.HasSuffix(stem, "_test"):
		// *_test.go, *_test.py
		n.suffix = "_test"
		if n.core = sanitize(strings.TrimSuffix(stem, "_test"), true); n.core == "" {
			n.core = "heldout"
		}
	case strings.HasPrefix(stem, "test_"):
		// test_*.py
		n.prefix = "test_"
		n.core = sanitize(strings.TrimPrefix(stem, "test_"), false)
	default:
		n.core = sanitize(stem, true)
	}
	if n.prefix == "" && n.core == "" {
		n.core = "heldout"
	}
	return n
}

// render writes the name, with a number k > 0 for a variant.
func (n name) render(k int) string {
	core := n.core
	if k > 0 {
		if core == "" {
			core = strconv.Itoa(k)
		} else {
			core += "_" + strconv.Itoa(k)
		}
	}
	stem := n.prefix + core
	// A core that itself ends in "_test" (a name with no .go or .py
	// form) is read by go/build with that suffix dropped too.
	if constrained(stem) || constrained(strings.TrimSuffix(stem, "_test")) {
		stem += "_heldout"
	}
	stem += n.suffix
	if n.ext != "" {
		return stem + "." + n.ext
	}
	return stem
}

// sanitize maps every character outside [A-Za-z0-9_] to "_" and, when
// lead is set, drops what comes before the first letter.
func sanitize(s string, lead bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if lead {
		out = strings.TrimLeftFunc(out, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	}
	return out
}

func keepAlnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// constrained reports whether Go would read stem (a file name without its
// extension and "_test" suffix) as carrying a GOOS or GOARCH constraint:
// after the first "_"-separated element, the last one is a known GOOS or
// GOARCH (go/build's goodOSArchFile). Compared without case, so the
// answer holds on a case-insensitive file system and errs on the safe
// side.
func constrained(stem string) bool {
	parts := strings.Split(strings.ToLower(stem), "_")
	if len(parts) < 2 {
		return false
	}
	last := parts[len(parts)-1]
	return knownOS[last] || knownArch[last]
}

// knownOS and knownArch are go/build's lists (internal/syslist), kept
// whole: a name that is a future port's GOOS is as dangerous as a
// current one's.
var knownOS = setOf("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
	"linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos")

var knownArch = setOf("386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips", "mipsle",
	"mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv", "riscv64", "s390", "s390x",
	"sparc", "sparc64", "wasm")

func setOf(items ...string) map[string]bool {
	m := map[string]bool{}
	for _, s := range items {
		m[s] = true
	}
	return m
}
