package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestReportFor(t *testing.T) {
	all := map[Feature]bool{}
	for _, f := range allFeatures {
		all[f] = true
	}
	without := func(fs ...Feature) map[Feature]bool {
		m := map[Feature]bool{}
		for k, v := range all {
			m[k] = v
		}
		for _, f := range fs {
			delete(m, f)
		}
		return m
	}
	for _, tc := range []struct {
		name        string
		have        map[Feature]bool
		wantApplied []string
		wantMissing []string
	}{
		{"everything", all, []string{"network", "filesystem", "processes", "resources"}, []string{}},
		{"no cgroups", without(FeatCgroupMem), []string{"network", "filesystem", "processes"}, []string{"resources"}},
		{"no landlock", without(FeatLandlock), []string{"network", "processes", "resources"}, []string{"filesystem"}},
		{"no loopback", without(FeatLoopback), []string{"filesystem", "processes", "resources"}, []string{"network"}},
		{"no namespaces", without(FeatPIDNS, FeatProc, FeatMountNS, FeatNetNS, FeatGitRO, FeatPrivateTmp),
			[]string{"resources"}, []string{"network", "filesystem", "processes"}},
		{"nothing", map[Feature]bool{}, []string{}, []string{"network", "filesystem", "processes", "resources"}},
	} {
		r := reportFor(tc.have, map[Feature]string{FeatLandlock: "x"}, 7)
		if !reflect.DeepEqual(r.Applied, tc.wantApplied) || !reflect.DeepEqual(r.Missing, tc.wantMissing) {
			t.Errorf("reportFor(%s) = applied %v missing %v; want %v, %v", tc.name, r.Applied, r.Missing, tc.wantApplied, tc.wantMissing)
		}
	}
}

func TestMissingOf(t *testing.T) {
	r := Report{Applied: []string{"network", "processes"}}
	if got := r.MissingOf([]string{"filesystem", "network", "resources"}); !reflect.DeepEqual(got, []string{"filesystem", "resources"}) {
		t.Errorf("MissingOf = %v, want [filesystem resources]", got)
	}
	if got := OffReport().MissingOf([]string{"network"}); !reflect.DeepEqual(got, []string{"network"}) {
		t.Errorf("OffReport().MissingOf([network]) = %v, want [network]", got)
	}
}

func TestScrubPath(t *testing.T) {
	for _, tc := range []struct{ path, root, want string }{
		{"/usr/bin:/bin", "/wt", "/usr/bin:/bin"},
		{".:/usr/bin", "/wt", "/usr/bin"},
		{"bin:/usr/bin::/bin", "/wt", "/usr/bin:/bin"},
		{"/wt/bin:/usr/bin", "/wt", "/usr/bin"},
		{"/wt:/usr/bin", "/wt", "/usr/bin"},
		{"/wt2/bin:/usr/bin", "/wt", "/wt2/bin:/usr/bin"},
		{"/wt/../wt/bin:/usr/bin", "/wt", "/usr/bin"},
		{"/usr/bin:/usr/bin/", "/wt", "/usr/bin"},
		{"", "/wt", ""},
	} {
		if got := scrubPath(tc.path, tc.root); got != tc.want {
			t.Errorf("scrubPath(%q, %q) = %q, want %q", tc.path, tc.root, got, tc.want)
		}
	}
}

func FuzzScrubPath(f *testing.F) {
	for _, s := range []string{"/usr/bin:/bin", ".:/usr/bin", "/wt/bin:/x", "::", "/wt/../a:/b/./c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got := scrubPath(path, "/wt")
		if again := scrubPath(got, "/wt"); again != got {
			t.Fatalf("scrubPath not idempotent: %q -> %q -> %q", path, got, again)
		}
		for _, d := range filepath.SplitList(got) {
			if !filepath.IsAbs(d) || within("/wt", d) {
				t.Fatalf("scrubPath(%q) kept %q", path, d)
			}
		}
	})
}

func TestBuildEnv(t *testing.T) {
	exists := func(d string) bool {
		return slices.Contains([]string{"/home/u/go/pkg/mod", "/home/u/.cargo", "/m/cache/download"}, d)
	}
	l := envLayout{Root: "/wt", Tmp: "/tmp", Home: "/tmp/home", CacheDir: "/c/card", HostHome: "/home/u"}
	for _, tc := range []struct {
		name string
		base []string
		want map[string]string // "" value means: absent
	}{
		{"defaults", []string{"PATH=./bin:/wt/bin:/usr/bin", "HOME=/home/u", "GOCACHE=/home/u/.cache/go-build"}, map[string]string{
			"PATH": "/usr/bin", "HOME": "/tmp/home", "TMPDIR": "/tmp", "GOCACHE": "/c/card/go-build",
			"GOMODCACHE": "/home/u/go/pkg/mod", "CARGO_HOME": "/home/u/.cargo", "RUSTUP_HOME": "",
			"GOTOOLCHAIN": "local", "GOPROXY": "off", "XDG_CACHE_HOME": "/c/card/xdg", "GOPATH": "/tmp/home/go",
		}},
		{"card settings win where they may", []string{"PATH=/usr/bin", "GOTOOLCHAIN=go1.22.0", "GOPROXY=https://proxy", "GOMODCACHE=/m", "GOPATH=/gp"}, map[string]string{
			"GOTOOLCHAIN": "go1.22.0", "GOPROXY": "https://proxy", "GOMODCACHE": "/m", "GOPATH": "/gp",
		}},
		{"no PATH", nil, map[string]string{"PATH": defaultPath}},
		{"last duplicate wins", []string{"PATH=/a", "PATH=/b"}, map[string]string{"PATH": "/b"}},
		{"malformed entries dropped", []string{"NOEQUALS", "=x", "A=1"}, map[string]string{"A": "1", "NOEQUALS": ""}},
		// A card's env cannot point Python at a shared bytecode folder.
		{"no bytecode shared", []string{"PYTHONPYCACHEPREFIX=/shared/pyc", "PYTHONDONTWRITEBYTECODE="}, map[string]string{
			"PYTHONPYCACHEPREFIX": "", "PYTHONDONTWRITEBYTECODE": "1",
		}},
		// Nor the go command at a cache program that stands in for GOCACHE.
		{"no cache program", []string{"GOCACHEPROG=/usr/bin/shared-cache"}, map[string]string{
			"GOCACHEPROG": "", "GOCACHE": "/c/card/go-build",
		}},
	} {
		env := buildEnv(tc.base, l, exists)
		m := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := m[k]; dup {
				t.Errorf("buildEnv(%s): %s twice", tc.name, k)
			}
			m[k] = v
		}
		for k, want := range tc.want {
			if got := m[k]; got != want {
				t.Errorf("buildEnv(%s)[%s] = %q, want %q", tc.name, k, got, want)
			}
		}
	}
	// A card with a prepare command: its dependency folder replaces the
	// module cache (the user's and the card's own), pip's and npm's
	// caches, and leads PYTHONPATH; only the prepare command may fetch.
	for _, tc := range []struct {
		name    string
		prepare bool
		base    []string
		want    map[string]string
	}{
		{"deps, a run", false, []string{"PATH=/usr/bin", "HOME=/home/u", "GOMODCACHE=/m", "PYTHONPATH=/p"}, map[string]string{
			"GOMODCACHE": "/d/gomod", "PIP_CACHE_DIR": "/d/pip", "npm_config_cache": "/d/npm", "FAILPASS_DEPS": "/d",
			"PYTHONPATH": "/d/python:/p", "GOPROXY": "off", "PIP_TARGET": "", "GOCACHE": "/c/card/go-build",
		}},
		{"deps, the prepare command", true, []string{"PATH=/usr/bin", "HOME=/home/u"}, map[string]string{
			"GOMODCACHE": "/d/gomod", "PYTHONPATH": "/d/python", "PIP_TARGET": "/d/python", "GOPROXY": "",
		}},
		{"deps, the prepare command, the user's module cache first", true, []string{"PATH=/usr/bin", "GOMODCACHE=/m"}, map[string]string{
			"GOMODCACHE": "/d/gomod", "GOPROXY": "file:///m/cache/download|https://proxy.golang.org,direct",
		}},
		{"deps, the prepare command's proxy", true, []string{"GOPROXY=file:///proxy", "PIP_TARGET=/t"}, map[string]string{
			"GOPROXY": "file:///proxy", "PIP_TARGET": "/t",
		}},
	} {
		ld := l
		ld.Deps, ld.Prepare = "/d", tc.prepare
		m := map[string]string{}
		for _, kv := range buildEnv(tc.base, ld, exists) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		for k, want := range tc.want {
			if got := m[k]; got != want {
				t.Errorf("buildEnv(%s)[%s] = %q, want %q", tc.name, k, got, want)
			}
		}
	}
	if got := fileProxies([]string{"GOPROXY=https://p,file:///a/proxy|file://rel,off", "X=file:///x", "PIP_FIND_LINKS=file:///w1 file:///w2/"}); !slices.Equal(got, []string{"/a/proxy", "/w1", "/w2"}) {
		t.Errorf("fileProxies = %q, want [/a/proxy /w1 /w2]", got)
	}

	// Without a card cache, caches die with the private /tmp.
	env := buildEnv(nil, envLayout{Root: "/wt", Tmp: "/tmp", Home: "/tmp/home"}, exists)
	if !slices.Contains(env, "GOCACHE=/tmp/.cache/go-build") {
		t.Errorf("buildEnv without CacheDir = %v, want GOCACHE under /tmp", env)
	}
}

func TestToolchainDirs(t *testing.T) {
	venv := t.TempDir()
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /opt/py/bin\nversion = 3.12\n"), 0o644)
	got := toolchainDirs([]string{"PATH=/usr/local/go/bin:" + filepath.Join(venv, "bin") + ":/home/u/bin:/home/u:relative", "GOMODCACHE=/home/u/go/pkg/mod"}, "/home/u")
	for _, want := range []string{"/usr/local/go", venv, "/opt/py", "/home/u/bin", "/home/u/go/pkg/mod"} {
		if !slices.Contains(got, want) {
			t.Errorf("toolchainDirs = %v, want it to hold %s", got, want)
		}
	}
	for _, never := range []string{"/home/u", "/home", "/", "relative"} {
		if slices.Contains(got, never) {
			t.Errorf("toolchainDirs = %v, must not hold %s", got, never)
		}
	}
}

func TestKeepUnder(t *testing.T) {
	got := keepUnder("/tmp", []string{"/tmp/a/repo/.git", "/tmp/a/repo/.git/failpass/wt", "/usr", "/tmp", "/tmpx/y", "/tmp/b"})
	if want := []string{"/tmp/b", "/tmp/a/repo/.git"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keepUnder = %v, want %v", got, want)
	}
}

func TestGitBinds(t *testing.T) {
	g := gitPaths{dotGit: "/r/.git/failpass/worktrees/w/.git", gitDir: "/r/.git/worktrees/w", commonDir: "/r/.git"}
	got := gitBinds(g, []string{"/r/.git/failpass/worktrees/w", "/r/.git/failpass/cache/c", "/elsewhere"})
	want := []bind{
		{Path: "/r/.git", RO: true},
		{Path: "/r/.git/failpass/worktrees/w"},
		{Path: "/r/.git/failpass/cache/c"},
		{Path: "/r/.git/failpass/worktrees/w/.git", RO: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("gitBinds = %+v, want %+v", got, want)
	}
}

func TestBuildCacheDir(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "/r/.git/failpass/cache/build-v2/0123456789abcdef0123456789abcdef"},
		{"", "/r/.git/failpass/cache/build-v2/unknown"},
		{"sha256:../../x", "/r/.git/failpass/cache/build-v2/unknown"},
	} {
		if got := BuildCacheDir("/r/.git", tc.key); got != tc.want {
			t.Errorf("BuildCacheDir(%q) = %q, want %q", tc.key, got, tc.want)
		}
		if got, want := cacheLock(tc.want), "/r/.git/failpass/locks/build-v2-"+filepath.Base(tc.want)+".lock"; got != want {
			t.Errorf("cacheLock(%q) = %q, want %q", tc.want, got, want)
		}
		if !IsBuildCache(tc.want) || IsBuildCache(filepath.Dir(tc.want)) {
			t.Errorf("IsBuildCache(%q) false, or true of its parent", tc.want)
		}
	}
}

func TestSanitizeGitConfig(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"},
		{"secrets dropped", "[core]\n\trepositoryformatversion = 1\n\tfsmonitor = evil\n[remote \"origin\"]\n\turl = https://x:TOKEN@example.org/r\n[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic TOKEN\n[include]\n\tpath = /etc/evil\n[extensions]\n\tobjectformat = sha256\n",
			"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n"},
		{"dotted section", "[http.https://x/]\n\textraheader = TOKEN\n", ""},
		{"comments and continuations", "[core]\n# c\n\tbare = false ; trailing\n\tlogallrefupdates = \\\n", ""},
		{"case", "[Core]\n\tRepositoryFormatVersion = 0\n", "[core]\n\trepositoryformatversion = 0\n"},
	} {
		if got := string(sanitizeGitConfig([]byte(tc.in))); got != tc.want {
			t.Errorf("sanitizeGitConfig(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func FuzzSanitizeGitConfig(f *testing.F) {
	f.Add("[core]\n\tbare = false\n[remote \"o\"]\n\turl = x\n")
	f.Add("[extensions]\n\tobjectformat = sha256\n")
	f.Add("[Core]BAre=url") // a value that looks like a secret's key is still just a value
	f.Fuzz(func(t *testing.T, s string) {
		once := sanitizeGitConfig([]byte(s))
		if twice := sanitizeGitConfig(once); string(twice) != string(once) {
			t.Fatalf("sanitizeGitConfig not idempotent on %q: %q then %q", s, once, twice)
		}
		// Every line kept is an allowed section header or an allowed key
		// of the section above it. Values of allowed keys are kept as
		// they are: "[core] bare = url" keeps "url", which is no secret.
		section := ""
		for _, line := range strings.Split(strings.TrimSuffix(string(once), "\n"), "\n") {
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, "[") {
				section = strings.TrimSuffix(strings.TrimPrefix(line, "["), "]")
				if gitConfigKept[section] == nil {
					t.Fatalf("sanitizeGitConfig(%q) kept section %q", s, section)
				}
				continue
			}
			k, _, _ := strings.Cut(strings.TrimPrefix(line, "\t"), " = ")
			if !gitConfigKept[section][k] {
				t.Fatalf("sanitizeGitConfig(%q) kept %q in [%s]", s, k, section)
			}
		}
	})
}

func TestFromView(t *testing.T) {
	for _, tc := range []struct{ p, want string }{
		{"/tmp/failpass/worktree/src/x.py", "/r/wt/src/x.py"},
		{"/tmp/failpass/worktree", "/r/wt"},
		{"/tmp/.failpass/worktree/a/b.go", "/r/wt/a/b.go"},
		{"/tmp/failpass/worktreex/x.py", "/tmp/failpass/worktreex/x.py"},
		{"/usr/lib/python3/x.py", "/usr/lib/python3/x.py"},
		{"tests/x.py", "tests/x.py"},
	} {
		if got := FromView(tc.p, "/r/wt"); got != tc.want {
			t.Errorf("FromView(%q) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestClashes(t *testing.T) {
	for _, tc := range []struct {
		seen []string
		want bool
	}{
		{[]string{"/var/tmp/r/.git", "/tmp/x/repo", "/usr/bin"}, false},
		{[]string{"/tmp/failpass/bin/python3"}, true},
		{[]string{"/tmp/failpass"}, true},
		{[]string{"/tmp/failpassx"}, false},
		{[]string{"/tmp", "/"}, false},
	} {
		if got := clashes(TreeView, tc.seen); got != tc.want {
			t.Errorf("clashes(%q) = %v, want %v", tc.seen, got, tc.want)
		}
	}
	// A failpass binary built to /tmp/failpass: the next view serves.
	if got := viewFor([]string{"/tmp/failpass", "/var/tmp/r"}); got != "/tmp/.failpass/worktree" {
		t.Errorf("viewFor(/tmp/failpass) = %q", got)
	}
	if got := viewFor([]string{"/tmp/failpass", "/tmp/.failpass/x"}); got != "" {
		t.Errorf("viewFor(both taken) = %q, want none", got)
	}
}
