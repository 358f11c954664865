package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// TestCandidateCacheOverlay: a candidate's runs read the card's build
// cache, write only their own layer (which the candidate's next run sees),
// and leave the card's cache exactly as it was; Close removes the layer.
func TestCandidateCacheOverlay(t *testing.T) {
	need(t, Filesystem)
	repo, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	common := filepath.Join(repo, ".git")
	lower := BuildCacheDir(common, "sha256:00112233445566778899aabbccddeeff")
	// A base run fills the card's cache, under its lock.
	unlock, err := LockCache(lower)
	if err != nil {
		t.Fatal(err)
	}
	base := contained(t, wt, &Policy{CacheDir: lower}, nil, time.Minute, "sh", "-c", `mkdir -p "$XDG_CACHE_HOME" && echo base > "$XDG_CACHE_HOME/entry"`)
	unlock()
	if base.Exit != 0 {
		t.Fatalf("base run: %+v\n%s", base.Outcome, base.Log)
	}

	cc, err := OpenCandidateCache(common, lower)
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{CacheDir: lower, Candidate: cc}
	poison := contained(t, wt, p, nil, time.Minute, "sh", "-c",
		`grep -q base "$XDG_CACHE_HOME/entry" || exit 3; echo poison > "$XDG_CACHE_HOME/entry" && echo new > "$XDG_CACHE_HOME/new" && rm -f "$XDG_CACHE_HOME/entry.gone"`)
	if poison.Exit != 0 || poison.Cache != CacheOverlay {
		t.Fatalf("candidate run: %+v (cache %q)\n%s", poison.Outcome, poison.Cache, poison.Log)
	}
	// The candidate's own next run sees its writes.
	again := contained(t, wt, p, nil, time.Minute, "sh", "-c", `grep -q poison "$XDG_CACHE_HOME/entry" && test -f "$XDG_CACHE_HOME/new"`)
	if again.Exit != 0 {
		t.Errorf("the candidate's second run did not see its first run's writes: %+v\n%s", again.Outcome, again.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(lower, "xdg", "entry")); string(b) != "base\n" {
		t.Errorf("card cache entry = %q after a candidate wrote it, want %q", b, "base\n")
	}
	if _, err := os.Stat(filepath.Join(lower, "xdg", "new")); err == nil {
		t.Errorf("a candidate's new file landed in the card's cache")
	}
	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cc.Dir); !os.IsNotExist(err) {
		t.Errorf("candidate folder %s left after Close: %v", cc.Dir, err)
	}
	// The next candidate starts from the card's cache alone.
	cc2, err := OpenCandidateCache(common, lower)
	if err != nil {
		t.Fatal(err)
	}
	defer cc2.Close()
	next := contained(t, wt, &Policy{CacheDir: lower, Candidate: cc2}, nil, time.Minute, "sh", "-c", `grep -q base "$XDG_CACHE_HOME/entry" && test ! -e "$XDG_CACHE_HOME/new"`)
	if next.Exit != 0 {
		t.Errorf("the next candidate saw the first one's writes: %+v\n%s", next.Outcome, next.Log)
	}
}

// TestCandidateCacheColdFallback: where the overlay cannot be mounted
// (here: an upper folder that is not a folder), the candidate gets its
// private cold cache at the same path, never the card's cache writable.
func TestCandidateCacheColdFallback(t *testing.T) {
	need(t, Filesystem)
	repo, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	common := filepath.Join(repo, ".git")
	lower := BuildCacheDir(common, "sha256:ffeeddccbbaa99887766554433221100")
	os.MkdirAll(filepath.Join(lower, "xdg"), 0o700)
	os.WriteFile(filepath.Join(lower, "xdg", "entry"), []byte("base\n"), 0o600)
	cc, err := OpenCandidateCache(common, lower)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	os.Remove(cc.upper())
	os.WriteFile(cc.upper(), nil, 0o600) // overlayfs refuses a file as its upper layer
	r := contained(t, wt, &Policy{CacheDir: lower, Candidate: cc}, nil, time.Minute, "sh", "-c",
		`test ! -e "$XDG_CACHE_HOME/entry" || exit 3; mkdir -p "$XDG_CACHE_HOME" && echo cold > "$XDG_CACHE_HOME/entry"`)
	if r.Exit != 0 || r.Cache != CachePrivateCold {
		t.Fatalf("run: %+v (cache %q)\n%s", r.Outcome, r.Cache, r.Log)
	}
	if b, _ := os.ReadFile(filepath.Join(lower, "xdg", "entry")); string(b) != "base\n" {
		t.Errorf("card cache entry = %q, want it untouched", b)
	}
	if b, _ := os.ReadFile(filepath.Join(cc.Cold(), "xdg", "entry")); !strings.Contains(string(b), "cold") {
		t.Errorf("the cold cache did not get the write: %q", b)
	}
}

// TestRemoveOldCaches: older formats and dead candidates' folders go; the
// current cache and a live candidate's folder stay.
func TestRemoveOldCaches(t *testing.T) {
	common := t.TempDir()
	old := filepath.Join(cacheRoot(common), "sandbox")
	cur := BuildCacheDir(common, "sha256:aa")
	for _, d := range []string{filepath.Join(old, "0123456789abcdef0123456789abcdef"), cur, filepath.Join(cacheRoot(common), "gate", "v2")} {
		os.MkdirAll(filepath.Join(d, "go-build"), 0o700)
	}
	live, err := OpenCandidateCache(common, cur)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	dead := filepath.Join(scratchRoot(common), "deadbeefdeadbeef")
	os.MkdirAll(filepath.Join(dead, "work", "work"), 0o000)
	removed, err := RemoveOldCaches(common)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(removed, "\n") != old+"\n"+dead {
		t.Errorf("RemoveOldCaches removed %q, want %q and %q", removed, old, dead)
	}
	for _, d := range []string{cur, live.Dir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}

// TestCacheLockExcludesCandidates: while a base run holds the cache's
// lock, no candidate can open it (its overlay would have a lower layer
// changing under it); once it is released, candidates can, several at a
// time, and a writer then waits for them.
func TestCacheLockExcludesCandidates(t *testing.T) {
	common := t.TempDir()
	lower := BuildCacheDir(common, "sha256:0f")
	unlock, err := LockCache(lower)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *CandidateCache)
	go func() {
		cc, err := OpenCandidateCache(common, lower)
		if err != nil {
			t.Error(err)
		}
		opened <- cc
	}()
	select {
	case cc := <-opened:
		cc.Close()
		t.Fatal("a candidate opened the cache while a writer held it")
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	c1 := <-opened
	defer c1.Close()
	c2, err := OpenCandidateCache(common, lower)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	locked := make(chan func())
	go func() {
		u, err := LockCache(lower)
		if err != nil {
			t.Error(err)
		}
		locked <- u
	}()
	select {
	case u := <-locked:
		u()
		t.Fatal("a writer took the cache while candidates read it")
	case <-time.After(300 * time.Millisecond):
	}
	c1.Close()
	c2.Close()
	(<-locked)()
}

// TestRemoveBuildCache: a cache a run holds stays; a free one goes.
func TestRemoveBuildCache(t *testing.T) {
	common := t.TempDir()
	dir := BuildCacheDir(common, "sha256:bb")
	cc, err := OpenCandidateCache(common, dir)
	if err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveBuildCache(dir); removed || err != nil {
		t.Errorf("RemoveBuildCache of a cache a candidate reads = %v, %v; want it kept", removed, err)
	}
	cc.Close()
	if removed, err := RemoveBuildCache(dir); !removed || err != nil {
		t.Errorf("RemoveBuildCache of a free cache = %v, %v; want it removed", removed, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", dir, err)
	}
}

// TestCandidateCacheGoLayeredDenied runs TestCandidateCacheGoLayered
// where namespace creation is denied (a container's seccomp profile, say),
// so no overlay can be mounted.
func TestCandidateCacheGoLayeredDenied(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		t.Skip("already denied")
	}
	if !probe().landlock {
		t.Skip("no Landlock: nothing would keep the card's cache read-only")
	}
	sandboxtest.RunDenied(t, "^TestCandidateCacheGoLayered$")
}

// TestCandidateCacheGoLayered (run by TestCandidateCacheGoLayeredDenied):
// with no overlay, a candidate's go command gets failpass as its cache
// program. The program runs inside the command's sandbox: it answers a
// get from the card's GOCACHE, which the command can read and not write,
// and a put lands in the candidate's own layer.
func TestCandidateCacheGoLayered(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) != "1" {
		t.Skip("run by TestCandidateCacheGoLayeredDenied")
	}
	repo, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	common := filepath.Join(repo, ".git")
	lower := BuildCacheDir(common, "sha256:00112233445566778899aabbccddeeff")
	gocache := filepath.Join(lower, "go-build")
	action, body := bytes.Repeat([]byte{7}, 32), []byte("card's output")
	out := sha256.Sum256(body)
	ah, oh := hex.EncodeToString(action), hex.EncodeToString(out[:])
	for p, b := range map[string]string{
		filepath.Join(gocache, oh[:2], oh+"-d"): string(body),
		filepath.Join(gocache, ah[:2], ah+"-a"): fmt.Sprintf("v1 %s %s %20d %20d\n", ah, oh, len(body), 1),
	} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cc, err := OpenCandidateCache(common, lower)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	b64 := base64.StdEncoding.EncodeToString
	put := bytes.Repeat([]byte{8}, 32)
	putOut := sha256.Sum256([]byte("mine"))
	script := `eval "set -- $GOCACHEPROG"
test "$3" = "$LOWER" || { echo "lower: $3"; exit 3; }
res=$(printf '%s\n' '{"ID":1,"Command":"get","ActionID":"'"$GET"'"}' '{"ID":2,"Command":"put","ActionID":"'"$PUT"'","OutputID":"'"$PUTOUT"'","BodySize":4}' '' '"bWluZQ=="' '{"ID":3,"Command":"close"}' | "$@") || { echo "program: $res"; exit 4; }
case "$res" in *'"DiskPath":"'"$LOWER"*) ;; *) echo "get: $res"; exit 5;; esac
case "$res" in *'"DiskPath":"'"$4"*) ;; *) echo "put: $res"; exit 6;; esac
if echo x 2>/dev/null > "$LOWER/written"; then echo "the card's cache is writable"; exit 7; fi
echo ok`
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LOWER=" + gocache,
		"GET=" + b64(action), "PUT=" + b64(put), "PUTOUT=" + b64(putOut[:])}
	r := contained(t, wt, &Policy{CacheDir: lower, Candidate: cc}, env, time.Minute, "sh", "-c", script)
	if r.Exit != 0 || strings.TrimSpace(r.Log) != "ok" || r.Cache != CacheGoLayered {
		t.Fatalf("run: %+v (cache %q)\n%s", r.Outcome, r.Cache, r.Log)
	}
	ph := hex.EncodeToString(putOut[:])
	if b, err := os.ReadFile(filepath.Join(cc.Cold(), "go-upper", ph[:2], ph+"-d")); err != nil || string(b) != "mine" {
		t.Errorf("the put's output in the candidate's layer: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(gocache, "written")); err == nil {
		t.Error("the card's cache was written")
	}
}
