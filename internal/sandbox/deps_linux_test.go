package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDepsFolder: the card's prepare command writes the dependency
// folder, with the network; a base run and a candidate's run read it,
// as their Go module cache, and can neither write it nor reach the
// network.
func TestDepsFolder(t *testing.T) {
	need(t, Filesystem, Network)
	repo, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	common := filepath.Join(repo, ".git")
	cacheDir := BuildCacheDir(common, "sha256:0123456789abcdef0123456789abcdef")
	deps := DepsDir(cacheDir)
	if !IsBuildCache(deps) || cacheLock(deps) != cacheLock(cacheDir) {
		t.Fatalf("DepsDir(%s) = %s: want a build cache sharing its lock", cacheDir, deps)
	}
	unlock, err := LockCache(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	// More than lo: the host's network namespace (this machine's has an
	// interface besides lo, or the check proves nothing).
	prep := contained(t, wt, &Policy{CacheDir: cacheDir, Deps: deps, PrepareCmd: true}, nil, time.Minute, sh(
		`test "$GOMODCACHE" = "$FAILPASS_DEPS/gomod" || exit 3
		 case "${GOPROXY-unset}" in unset|file://*"|https://proxy.golang.org,direct") ;; *) exit 4 ;; esac
		 mkdir -p "$GOMODCACHE/m" && echo fetched > "$GOMODCACHE/m/mod" || exit 5
		 test "$(grep -c : /proc/net/dev)" -gt 1 || exit 6`)...)
	unlock()
	if prep.Exit != 0 {
		t.Fatalf("prepare run: %+v\n%s", prep.Outcome, prep.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(deps, "gomod", "m", "mod")); string(b) != "fetched\n" {
		t.Fatalf("the prepare run's write = %q, want it in %s", b, deps)
	}

	readOnly := sh(`test "$GOMODCACHE" = "$FAILPASS_DEPS/gomod" || exit 3
		test "$GOPROXY" = off || exit 4
		grep -q fetched "$GOMODCACHE/m/mod" || exit 5
		echo poison > "$GOMODCACHE/m/mod" && exit 6
		touch "$FAILPASS_DEPS/new" && exit 7
		test "$(grep -c : /proc/net/dev)" -eq 1 || exit 8
		exit 0`)
	if r := contained(t, wt, &Policy{CacheDir: cacheDir, Deps: deps}, nil, time.Minute, readOnly...); r.Exit != 0 {
		t.Errorf("base run: %+v, want it to read the folder and write nothing\n%s", r.Outcome, r.Log)
	}
	cc, err := OpenCandidateCache(common, cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if r := contained(t, wt, &Policy{CacheDir: cacheDir, Deps: deps, Candidate: cc}, nil, time.Minute, readOnly...); r.Exit != 0 {
		t.Errorf("candidate run: %+v, want it to read the folder and write nothing\n%s", r.Outcome, r.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(deps, "gomod", "m", "mod")); string(b) != "fetched\n" {
		t.Errorf("dependency folder changed by a later run: %q", b)
	}
	if _, err := (&Policy{Deps: deps, PrepareCmd: true, Candidate: cc}).Prepare(wt, nil); err == nil {
		t.Errorf("Prepare accepted candidate code as the prepare command")
	}

	// The marker: set after success, gone after UnmarkPrepared.
	if DepsReady(deps) {
		t.Fatalf("DepsReady before MarkPrepared")
	}
	if err := MarkPrepared(deps, "sha256:k"); err != nil || !DepsReady(deps) {
		t.Fatalf("MarkPrepared = %v; DepsReady = %v", err, DepsReady(deps))
	}
	if err := UnmarkPrepared(deps); err != nil || DepsReady(deps) {
		t.Fatalf("UnmarkPrepared = %v; DepsReady = %v", err, DepsReady(deps))
	}
}
