package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/failpass/failpass/internal/gitx"
)

// KeepLogRuns is how many runs' logs stay in the repository's log folder;
// older ones are removed when a new run starts, so logs stay bounded.
const KeepLogRuns = 50

// NewLogDir makes a fresh folder for one run's command logs under
// <git common dir>/failpass/logs and prunes the oldest beyond KeepLogRuns.
func NewLogDir(repo *gitx.Repo) (string, error) {
	root := repo.StateDir("logs")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%d", time.Now().UTC().Format("20060102T150405.000000000"), os.Getpid())
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return dir, nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for len(names) > KeepLogRuns {
		os.RemoveAll(filepath.Join(root, names[0]))
		names = names[1:]
	}
	return dir, nil
}
