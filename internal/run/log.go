package run

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// logWriter writes a command's output to a file up to a cap, then one
// truncation marker, then discards. It never returns an error, so the
// reader keeps draining the pipe and the command never blocks on a full
// pipe: a flood costs CPU, not disk and not a hang.
type logWriter struct {
	mu        sync.Mutex
	f         *os.File // nil discards everything
	max, n    int64
	truncated bool
	err       error // first write error; later output is discarded
}

func openLog(path string, max int64) (*logWriter, error) {
	w := &logWriter{max: max}
	if path == "" {
		return w, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("run: log folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run: log: %w", err)
	}
	w.f = f
	return w, nil
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil || w.err != nil {
		return len(p), nil
	}
	room := w.max - w.n
	k := int64(len(p))
	if k > room {
		k = room
	}
	if k > 0 {
		m, err := w.f.Write(p[:k])
		w.n += int64(m)
		if err != nil {
			w.err = err
			return len(p), nil
		}
	}
	if int64(len(p)) > k && !w.truncated {
		w.truncated = true
		if _, err := fmt.Fprintf(w.f, "\n[failpass: log truncated at %d bytes; the rest of the output was read and discarded]\n", w.max); err != nil {
			w.err = err
		}
	}
	return len(p), nil
}

func (w *logWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if w.err == nil {
		w.err = err
	}
	return err
}
