package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/gocache"
	"github.com/failpass/failpass/internal/scratch"

	"github.com/rogpeppe/go-internal/lockedfile"
)

// Build caches.
//
// A card's build cache (GOCACHE, pip's and npm's caches, XDG_CACHE_HOME)
// makes the second gate of a card warm. Only runs of the signed base
// write it: the gate's base side and `card sign`, each holding the
// cache's lock exclusively (LockCache), so no reader ever sees it change
// under it. Everything that runs candidate code (the gate's patched
// side, a batch's candidates, the loop's validation) reads it through a
// CandidateCache: an overlay whose lower layer is the card's cache and
// whose upper layer is a private folder of that candidate, shared by the
// candidate's runs and removed with it. The candidate holds the cache's
// lock shared meanwhile. Where overlayfs cannot be mounted, the
// candidate gets an empty private cache instead (CachePrivateCold), and
// the verdict says so.
//
// Python bytecode is never cached between runs: every contained run gets
// PYTHONDONTWRITEBYTECODE=1 and no PYTHONPYCACHEPREFIX (see buildEnv).

// cacheFormat names the layout of the build caches: their folder is
// cache/<cacheFormat>/<key>. A new format leaves every older cache behind,
// unread; RemoveOldCaches deletes them. Format 1 (cache/sandbox/<card
// digest>) let candidates write the cache.
const cacheFormat = "build-v2"

// How a candidate's runs saw the card's build cache (Report.Cache).
const (
	// CacheOverlay: the card's cache read-only, beneath a private upper
	// layer that dies with the candidate.
	CacheOverlay = "overlay"
	// CachePrivateCold: an empty private cache; the card's cache unseen.
	CachePrivateCold = "private-cold"
	// CacheGoLayered: no overlay, but the go command read a build cache
	// (the card's; with the sandbox off, the user's own) through failpass
	// as its cache program and wrote a private layer (GoEnv); the other
	// tools' caches were private and cold.
	CacheGoLayered = "go-layered"
)

// cacheRoot is the folder of every cache of the repository whose git
// common directory is commonDir (the gate's results live there too).
func cacheRoot(commonDir string) string {
	return filepath.Join(commonDir, "failpass", "cache")
}

// BuildCacheDir is where the build cache whose key is key (a hex digest:
// see gate.BuildCacheKey, the one place it is computed) lives.
func BuildCacheDir(commonDir, key string) string {
	d := strings.TrimPrefix(key, "sha256:")
	if len(d) > 32 {
		d = d[:32]
	}
	if d == "" || strings.ContainsAny(d, `/\.`) {
		d = "unknown"
	}
	return filepath.Join(cacheRoot(commonDir), cacheFormat, d)
}

// cacheLock is the lock of the build cache dir (a BuildCacheDir): under
// the state's locks/, apart from the caches, so that removing a cache
// never removes a lock someone holds. A dependency folder (a DepsDir)
// shares the lock of the build cache of its key: the prepare command,
// its only writer, runs under the build cache's writer lock.
func cacheLock(dir string) string {
	state := filepath.Dir(filepath.Dir(filepath.Dir(dir)))
	format := filepath.Base(filepath.Dir(dir))
	if format == depsFormat {
		format = cacheFormat
	}
	return filepath.Join(state, "locks", format+"-"+filepath.Base(dir)+".lock")
}

// depsFormat names the layout of the dependency folders:
// cache/<depsFormat>/<key>, beside the build cache of the same key.
const depsFormat = "deps-v1"

// DepsDir is the dependency folder of the build cache dir (a
// BuildCacheDir): what the card's prepare command fetched (GOMODCACHE,
// pip's and npm's download caches; see Policy.Deps). It lies beside the
// build cache, not in it: base runs write the build cache, and must not
// write this.
func DepsDir(cacheDir string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(cacheDir)), depsFormat, filepath.Base(cacheDir))
}

// preparedMarker, in a dependency folder, says its prepare command
// succeeded; its content is the build cache key.
const preparedMarker = ".failpass-prepared"

// DepsReady says whether the dependency folder deps was filled by a
// prepare command that succeeded (MarkPrepared). Hold its lock
// (LockCache of the build cache) to trust the answer.
func DepsReady(deps string) bool {
	fi, err := os.Lstat(filepath.Join(deps, preparedMarker))
	return err == nil && fi.Mode().IsRegular()
}

// depsTouch is how often a dependency folder in use has its marker's
// time renewed (DepsUsed).
const depsTouch = time.Hour

// DepsUsed records that a run reads the dependency folder deps: runs only
// read it, so without this `gc` would see it unused since it was filled.
// It renews the marker's modification time, at most once per depsTouch.
func DepsUsed(deps string) {
	p := filepath.Join(deps, preparedMarker)
	if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > depsTouch {
		now := time.Now()
		os.Chtimes(p, now, now)
	}
}

// MarkPrepared records that the prepare command filling deps succeeded,
// so no later run of the same key runs it again.
func MarkPrepared(deps, key string) error {
	if err := os.MkdirAll(deps, 0o700); err != nil {
		return fmt.Errorf("sandbox: dependency folder: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(deps, preparedMarker), []byte(key+"\n"), 0o444); err != nil {
		return fmt.Errorf("sandbox: dependency folder: %w", err)
	}
	return nil
}

// UnmarkPrepared forgets a previous prepare run of deps, before the
// prepare command runs again: a run that fails leaves no marker.
func UnmarkPrepared(deps string) error {
	if err := os.Remove(filepath.Join(deps, preparedMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sandbox: dependency folder: %w", err)
	}
	return nil
}

// scratchRoot holds the candidates' private folders.
func scratchRoot(commonDir string) string {
	return filepath.Join(commonDir, "failpass", "scratch")
}

// LockCache takes the writer's lock of the build cache dir: held
// exclusively while a run of the signed base may write it, so that no
// candidate's overlay has it as a lower layer meanwhile (overlayfs does
// not allow a lower layer to change under a mount). Call unlock after the
// runs.
func LockCache(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: build cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(cacheLock(dir)), 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: build cache lock: %w", err)
	}
	unlock, err = lockedfile.MutexAt(cacheLock(dir)).Lock()
	if err != nil {
		return nil, fmt.Errorf("sandbox: build cache lock: %w", err)
	}
	if filepath.Base(filepath.Dir(dir)) == cacheFormat {
		seedGoCache(dir) // a new cache starts from what trusted runs compiled (seed.go)
	}
	return unlock, nil
}

// CandidateCache is one candidate's private view of a card's build
// cache, shared by all of that candidate's runs: put it in
// Policy.Candidate. Close removes it.
type CandidateCache struct {
	// Lower is the card's build cache, read-only to the candidate; ""
	// when there is none (the candidate's cache starts cold).
	Lower string
	// Dir is the candidate's private folder: the overlay's upper and
	// work folders, or the private cold cache.
	Dir string

	// below is a prebuild's cache of the same candidate (Over): its
	// layer lies beneath this one's, above Lower.
	below *CandidateCache

	shared *lockedfile.File // Lower's lock, held shared (a kept layer's own: OpenKept)
	owner  *lockedfile.File // Dir's lock, held while the candidate lives (see RemoveOldCaches)
	kept   bool             // Dir is a kept layer (OpenKept): Close leaves it
	closed bool
}

// Over puts what the runs of prebuilt, a cache of the same card's build
// cache, wrote beneath c's own layer: c's runs read it and never write
// it. The gate's prebuild compiles a candidate's packages once, with
// nothing but the go command running, so that the candidate's patched
// runs, each on a fresh layer of its own, all find them built (see
// gate's prebuild). prebuilt must outlive c.
func (c *CandidateCache) Over(prebuilt *CandidateCache) { c.below = prebuilt }

// middle is the overlay layer c's runs see beneath their own: below's
// upper folder; "" for none.
func (c *CandidateCache) middle() string {
	if c.below == nil {
		return ""
	}
	return c.below.upper()
}

// goLowers are the go command's caches beneath c's own layer where no
// overlay serves it (GoEnv), first found first: below's layer, then
// lower.
func (c *CandidateCache) goLowers(lower string) []string {
	if c.below == nil {
		return []string{lower}
	}
	return []string{c.below.goUpper(), lower}
}

// Areas are the folders c's runs fill: its own, and below's, which
// their disk cap counts too.
func (c *CandidateCache) Areas() []string {
	if c.below == nil {
		return []string{c.Dir}
	}
	return []string{c.Dir, c.below.Dir}
}

// OpenCandidateCache makes a candidate's private folder under the
// repository's state (commonDir) and takes lower's lock shared, waiting
// for a writer to finish. lower may be "".
func OpenCandidateCache(commonDir, lower string) (*CandidateCache, error) {
	root := scratchRoot(commonDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: candidate cache: %w", err)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	id := hex.EncodeToString(rnd[:])
	c := &CandidateCache{Dir: filepath.Join(root, id)}
	var err error
	// The owner lock comes first: RemoveOldCaches takes a folder whose
	// lock it can take for what a dead process left.
	if c.owner, err = lockedfile.Create(c.Dir + ".lock"); err != nil {
		return nil, fmt.Errorf("sandbox: candidate cache: %w", err)
	}
	for _, d := range []string{c.Dir, c.upper(), c.work(), c.cold(), c.goWork()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			c.Close()
			return nil, fmt.Errorf("sandbox: candidate cache: %w", err)
		}
	}
	if lower != "" {
		if err := os.MkdirAll(lower, 0o700); err != nil {
			c.Close()
			return nil, fmt.Errorf("sandbox: build cache: %w", err)
		}
		if c.Lower, err = filepath.EvalSymlinks(lower); err != nil {
			c.Close()
			return nil, fmt.Errorf("sandbox: build cache: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(cacheLock(lower)), 0o700); err != nil {
			c.Close()
			return nil, fmt.Errorf("sandbox: build cache lock: %w", err)
		}
		if c.shared, err = lockedfile.OpenFile(cacheLock(lower), os.O_RDONLY|os.O_CREATE, 0o600); err != nil {
			c.Close()
			return nil, fmt.Errorf("sandbox: build cache lock: %w", err)
		}
	}
	return c, nil
}

func (c *CandidateCache) upper() string { return filepath.Join(c.Dir, "upper") }
func (c *CandidateCache) work() string  { return filepath.Join(c.Dir, "work") }
func (c *CandidateCache) cold() string  { return filepath.Join(c.Dir, "cold") }

// goUpper is the layer the go command writes through failpass where no
// overlay serves it (GoEnv).
func (c *CandidateCache) goUpper() string { return filepath.Join(c.cold(), "go-upper") }

// goWork is where go keeps its work folder (GOTMPDIR) in the
// candidate's runs: outside every folder a test binary may write (see
// testExec), as the test binaries go links there are.
func (c *CandidateCache) goWork() string { return filepath.Join(c.Dir, "gowork") }

// Cold is the private cold cache folder: what a command without a mount
// namespace (and the uncontained patched runs of --sandbox=off) use as
// their cache, in place of the card's.
func (c *CandidateCache) Cold() string { return c.cold() }

// GoEnv is the environment that gives the candidate's go command the
// build cache lower (a GOCACHE folder; "" for none) read-only, beneath
// the prebuild's layer if any (Over), with a private upper layer in the
// candidate's cold folder (which its runs may write, and share): the
// overlay without a mount, through failpass as
// the go command's cache program (package gocache). layered is false
// when failpass cannot name itself there; the go command's cache is then
// the cold one alone, as it is for a go before 1.24, which ignores
// GOCACHEPROG.
func (c *CandidateCache) GoEnv(lower string) (env []string, layered bool) {
	private := filepath.Join(c.cold(), "go-build")
	self := selfExe()
	if self == "" {
		return []string{"GOCACHE=" + private}, false
	}
	return gocache.Env(self, c.goLowers(lower), c.goUpper(), private)
}

// cardGoEnv is GoEnv over the card's own GOCACHE, for a contained run
// that no overlay serves (no mount namespace, off Linux): env replaces
// the go command's cache settings, and lowers are the folders the
// command must be let read. layered false: as GoEnv, and env is nil.
func (c *CandidateCache) cardGoEnv() (env, lowers []string, layered bool) {
	if c.Lower == "" {
		return nil, nil, false
	}
	lower := filepath.Join(c.Lower, "go-build")
	env, layered = c.GoEnv(lower)
	if !layered {
		return nil, nil, false
	}
	return env, c.goLowers(lower), true
}

// selfExe is the running failpass binary's path, "" when unknown.
var selfExe = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	return exe
})

// Close removes the candidate's private folder and releases the card
// cache's lock. Call it once every run of the candidate has ended.
func (c *CandidateCache) Close() error {
	if c == nil || c.closed {
		return nil
	}
	c.closed = true
	var err error
	if !c.kept {
		err = scratch.RemoveAll(c.Dir)
	}
	if c.shared != nil {
		c.shared.Close()
	}
	if c.owner != nil {
		os.Remove(c.Dir + ".lock")
		c.owner.Close()
	}
	if err != nil {
		return fmt.Errorf("sandbox: remove candidate cache: %w", err)
	}
	return nil
}

// RemoveBuildCache removes the build cache dir (a BuildCacheDir, or a
// KeptDir) unless a run holds it (a base run writing it, a candidate
// reading it through its overlay): removed says which. The cache's lock is held meanwhile.
func RemoveBuildCache(dir string) (removed bool, err error) {
	unlock, ok := tryLock(cacheLock(dir))
	if !ok {
		return false, nil
	}
	defer unlock()
	if err := scratch.RemoveAll(dir); err != nil {
		return false, err
	}
	return true, nil
}

// IsBuildCache says whether path is a build cache of the current format
// (a BuildCacheDir), a dependency folder (a DepsDir) or a kept layer (a
// KeptDir), which only RemoveBuildCache may remove.
func IsBuildCache(path string) bool {
	f := filepath.Base(filepath.Dir(path))
	return (f == cacheFormat || f == depsFormat || f == keptFormat) && filepath.Base(filepath.Dir(filepath.Dir(path))) == "cache"
}

// RemoveOldCaches removes what no live run uses of the build caches of
// the repository whose git common directory is commonDir: the caches of
// older formats (format 1's cache/sandbox/ whole) and every candidate
// folder whose process is gone. It returns the paths it removed.
func RemoveOldCaches(commonDir string) ([]string, error) {
	var removed []string
	var errs []error
	// Another user's folders (root's, seen by a user's gc) are theirs to
	// remove; gc says so through prune's scan.
	theirs := func(p string) bool { _, ok := scratch.OwnedByAnother(p); return ok }
	root := cacheRoot(commonDir)
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !theirs(root) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == cacheFormat || (e.Name() != "sandbox" && !strings.HasPrefix(e.Name(), "build-")) {
			continue
		}
		p := filepath.Join(root, e.Name())
		if theirs(p) {
			continue
		}
		if err := scratch.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	sr := scratchRoot(commonDir)
	entries, err = os.ReadDir(sr)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !theirs(sr) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if theirs(filepath.Join(sr, e.Name())) {
			continue
		}
		if !e.IsDir() {
			// A lock whose folder is gone: what a crash mid-Close left.
			p := filepath.Join(sr, e.Name())
			if d, ok := strings.CutSuffix(p, ".lock"); ok && !exists(d) {
				if unlock, ok := tryLock(p); ok {
					os.Remove(p)
					unlock()
				}
			}
			continue
		}
		p := filepath.Join(sr, e.Name())
		unlock, ok := tryLock(p + ".lock")
		if !ok {
			continue // its candidate still runs
		}
		err := scratch.RemoveAll(p)
		os.Remove(p + ".lock")
		unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
