package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// envLayout is where a command's private and cached folders are, as the
// command sees them.
type envLayout struct {
	Root     string   // worktree top; PATH entries inside it are dropped
	Views    []string // where the command may see the worktree (treeViews) besides Root: PATH entries inside them are dropped too
	Tmp      string   // private temp folder (/tmp inside a mount namespace)
	Home     string   // private HOME, inside Tmp
	CacheDir string   // per-card caches; "" puts them in Tmp
	Deps     string   // the card's dependency folder (Policy.Deps); "" when none
	Prepare  bool     // the card's prepare command: Go may fetch modules
	HostHome string   // the user's HOME, to find toolchains (~/.cargo, ~/go/pkg/mod)
	// TestExec is the failpass binary a candidate command's go runs each
	// test binary through, in a Landlock domain of its own (testExec);
	// "" for none. GoWork is go's work folder then (GOTMPDIR), outside
	// Tmp, which the test binaries may write.
	TestExec, GoWork string
}

// defaultPath is execvp's PATH when none is set.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// buildEnv makes the command's environment from base (the allow-list plus
// the card's signed env, composed by the caller): PATH loses relative
// entries and entries inside the worktree (so `go` never resolves to a
// planted ./go); HOME and TMPDIR become private; build caches move to the
// card's cache folder so the user's own caches are neither read nor
// polluted, and Python writes no bytecode; toolchain locations that followed the old HOME are pinned to
// the user's real folders, which the sandbox makes readable. Go runs
// offline with the local toolchain unless the card says otherwise.
//
// exists reports whether a folder exists; it is a parameter so the policy
// is tested without touching the disk.
func buildEnv(base []string, l envLayout, exists func(string) bool) []string {
	m := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = v
	}
	unset := func(k string) {
		if _, ok := m[k]; ok {
			delete(m, k)
			order = slices.DeleteFunc(order, func(o string) bool { return o == k })
		}
	}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		set(k, v) // the last one wins, as in exec's dedup
	}
	get := func(k string) string { return m[k] }

	path := defaultPath
	if v, ok := m["PATH"]; ok {
		path = v
	}
	path = scrubPath(path, l.Root)
	for _, v := range l.Views {
		path = scrubPath(path, v)
	}
	set("PATH", path)

	hostHome := l.HostHome
	if hostHome == "" {
		hostHome = get("HOME")
	}
	// Toolchains that default to $HOME/...: pin them before HOME moves.
	if get("GOMODCACHE") == "" {
		gopath := get("GOPATH")
		if gopath == "" && hostHome != "" {
			gopath = filepath.Join(hostHome, "go")
		}
		if first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator)); first != "" && filepath.IsAbs(first) {
			if mc := filepath.Join(first, "pkg", "mod"); exists(mc) {
				set("GOMODCACHE", mc)
			}
		}
	}
	for k, dir := range map[string]string{"CARGO_HOME": ".cargo", "RUSTUP_HOME": ".rustup", "PYENV_ROOT": ".pyenv"} {
		if get(k) == "" && hostHome != "" {
			if p := filepath.Join(hostHome, dir); exists(p) {
				set(k, p)
			}
		}
	}
	if get("GOTOOLCHAIN") == "" {
		set("GOTOOLCHAIN", "local")
	}
	switch {
	case get("GOPROXY") != "":
	case !l.Prepare:
		// Only the prepare command fetches; every other run works from
		// the module cache.
		set("GOPROXY", "off")
	default:
		// The prepare command fetches through Go's default proxy unless
		// the card names one, but first from the user's own module
		// cache, as an offline mirror: where the network is not there
		// (a laptop on a train, a CI runner without egress), what the
		// user already downloaded still fills the card's folder. go.sum
		// checks every module either way. "|" falls through on any
		// error, "," (Go's own default) only on "not found".
		if mc := get("GOMODCACHE"); mc != "" && filepath.IsAbs(mc) && exists(filepath.Join(mc, "cache", "download")) {
			set("GOPROXY", "file://"+filepath.Join(mc, "cache", "download")+"|https://proxy.golang.org,direct")
		}
	}

	set("HOME", l.Home)
	set("TMPDIR", l.Tmp)
	cache := l.CacheDir
	if cache == "" {
		cache = filepath.Join(l.Tmp, ".cache")
	}
	set("XDG_CACHE_HOME", filepath.Join(cache, "xdg"))
	set("GOCACHE", filepath.Join(cache, "go-build"))
	// A cache program of the card's would stand in for GOCACHE, and a
	// candidate's runs would write where later runs read.
	unset("GOCACHEPROG")
	set("PIP_CACHE_DIR", filepath.Join(cache, "pip"))
	set("npm_config_cache", filepath.Join(cache, "npm"))
	if l.Deps != "" {
		// What the card's prepare command fetched: its module cache and
		// download caches replace the user's and the card's build cache's
		// (the card's own GOMODCACHE included: the prepare command and the
		// runs after it must agree on one folder).
		set("GOMODCACHE", filepath.Join(l.Deps, "gomod"))
		set("PIP_CACHE_DIR", filepath.Join(l.Deps, "pip"))
		set("npm_config_cache", filepath.Join(l.Deps, "npm"))
		set("FAILPASS_DEPS", l.Deps)
		// Python packages: the prepare command's `pip install` lands in
		// the folder (the interpreter's own is read-only to it), and
		// every run imports from there first.
		py := filepath.Join(l.Deps, "python")
		if l.Prepare && get("PIP_TARGET") == "" {
			set("PIP_TARGET", py)
		}
		if pp := get("PYTHONPATH"); pp != "" {
			set("PYTHONPATH", py+string(filepath.ListSeparator)+pp)
		} else {
			set("PYTHONPATH", py)
		}
	}
	if l.TestExec != "" {
		testExecEnv(get, set, l.TestExec, l.Root, l.GoWork)
	}
	// Python bytecode is never shared between runs: nothing is written,
	// and no prefix folder a command could plant a .pyc in is read. A
	// private prefix would also work, at the price of recompiling the
	// standard library on every run (three times pytest's start-up);
	// without one Python reads the system's own read-only bytecode.
	unset("PYTHONPYCACHEPREFIX")
	set("PYTHONDONTWRITEBYTECODE", "1")
	if get("GOPATH") == "" {
		set("GOPATH", filepath.Join(l.Home, "go"))
	}

	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+m[k])
	}
	return env
}

// withEnv is env with the variables of set (KEY=value) put in place of
// its own.
func withEnv(env, set []string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, k+"=") })
	})
	return append(out, set...)
}

// scrubPath drops empty, relative and worktree entries from a PATH: each
// would let a file of the patched tree answer to a bare program name.
func scrubPath(path, root string) string {
	var keep []string
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if root != "" && within(root, d) {
			continue
		}
		if !slices.Contains(keep, d) {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// within says whether p is root or below it; both clean and absolute.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// systemReadable are the folders every command may read and execute from.
// /dev is not among them (a command running as uid 0 could read a raw
// disk): the helper allows the harmless device files one by one. /etc
// comes from etcReadable.
var systemReadable = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/opt", "/nix", "/proc", "/sys", "/run/current-system"}

// etcSecrets are the entries of /etc a command never reads: password
// hashes, host keys, sudo rules, private TLS keys. The rest of /etc (the
// loader cache, passwd and group, TLS roots, timezones) is readable.
var etcSecrets = map[string]bool{
	"shadow": true, "shadow-": true, "gshadow": true, "gshadow-": true, "security": true,
	"sudoers": true, "sudoers.d": true, "ssh": true, "ssl": true, "pki": true,
	"krb5.keytab": true, ".pwd.lock": true, "credstore": true, "credstore.encrypted": true,
}

// etcReadable lists /etc's entries minus etcSecrets; of /etc/ssl and
// /etc/pki it keeps the certificates, never a private folder.
func etcReadable(etc string) []string {
	var out []string
	entries, err := os.ReadDir(etc)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(etc, name)
		if name == "ssl" || name == "pki" {
			sub, _ := os.ReadDir(p)
			for _, se := range sub {
				if !strings.Contains(se.Name(), "private") {
					out = append(out, filepath.Join(p, se.Name()))
				}
			}
			continue
		}
		if !etcSecrets[name] {
			out = append(out, p)
		}
	}
	return out
}

// toolchainDirs finds the folders a command's toolchain lives in, from its
// environment: each PATH entry and, when it is a `bin` folder, its prefix
// (a virtualenv, GOROOT, ~/.cargo, a pyenv root), the prefix a
// virtualenv's pyvenv.cfg names, and the folders toolchain variables
// point at. The user's HOME itself (and anything above it, and /) is never
// added whole: a PATH entry of ~/bin makes ~/bin readable, not ~.
func toolchainDirs(env []string, hostHome string) []string {
	var out []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if p == "/" || (hostHome != "" && within(p, hostHome)) {
			return
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	addPrefix := func(dir string) {
		add(dir)
		if b := filepath.Base(dir); b == "bin" || b == "shims" {
			add(filepath.Dir(dir))
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
			add(real)
			if filepath.Base(real) == "bin" {
				add(filepath.Dir(real))
			}
		}
		if home := venvHome(filepath.Dir(dir)); home != "" {
			add(home)
			if filepath.Base(home) == "bin" {
				add(filepath.Dir(home))
			}
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			for _, d := range filepath.SplitList(v) {
				addPrefix(d)
			}
		case "GOROOT", "GOMODCACHE", "CARGO_HOME", "RUSTUP_HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "JAVA_HOME", "PYENV_ROOT", "NVM_DIR":
			add(v)
		}
	}
	return out
}

// venvHome reads `home = ...` from dir/pyvenv.cfg: the interpreter a
// virtualenv was made from, whose standard library the venv needs.
func venvHome(dir string) string {
	f, err := os.Open(filepath.Join(dir, "pyvenv.cfg"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == "home" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// mirrorVars are the variables whose file:// entries name an offline
// mirror of a package registry: Go's module proxy list, pip's indexes and
// find-links folders.
var mirrorVars = []string{"GOPROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"}

// fileProxies lists the folders of the file:// entries of env's
// mirrorVars, for the prepare command to read as it would the network.
func fileProxies(env []string) []string {
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !slices.Contains(mirrorVars, k) {
			continue
		}
		for _, e := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
			if p, ok := strings.CutPrefix(strings.TrimSpace(e), "file://"); ok && filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	return out
}

// withoutNetwork is r for the card's prepare command, which has the
// network on purpose.
func withoutNetwork(r Report) Report {
	// A command granted the network gets no TCP rules either.
	r.Features = slices.DeleteFunc(slices.Clone(r.Features), func(f string) bool { return f == string(FeatLandlockTCP) })
	if !r.Has(Network) {
		return r
	}
	r.Applied = slices.DeleteFunc(slices.Clone(r.Applied), func(l string) bool { return l == string(Network) })
	r.Missing = append(slices.Clone(r.Missing), string(Network))
	why := map[string]string{}
	for k, v := range r.Why {
		why[k] = v
	}
	why[string(FeatNetNS)] = "the prepare command has the network on purpose"
	r.Why = why
	return r
}
