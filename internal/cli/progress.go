package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/report"
)

// stepProgress shows, on a terminal only, each rule or step of one gate or
// card sign-off as it starts and ends, with the time since the command
// began, on stderr:
//
//	[  2.1s] base.fail: running
//	[  4.7s] base.fail: exit 1 (ok) in 2.6s
//
// Without a terminal (CI, pipes) and under --json there is none: stdout's
// result is the whole output.
type stepProgress struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	started map[string]time.Time
}

// newStepProgress returns nil unless stderr is a terminal.
func newStepProgress(env *Env) *stepProgress {
	fh, ok := env.Stderr.(*os.File)
	if !ok || !isTerminal(fh) {
		return nil
	}
	return &stepProgress{w: env.Stderr, start: time.Now(), started: map[string]time.Time{}}
}

func (p *stepProgress) stamp() string {
	return fmt.Sprintf("[%6.1fs]", time.Since(p.start).Seconds())
}

// starting says a step began.
func (p *stepProgress) starting(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started[name] = time.Now()
	fmt.Fprintf(p.w, "%s %s: running\n", p.stamp(), Sanitize(name))
}

// ended says a step ended with line (its result).
func (p *stepProgress) ended(name, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	took := ""
	if t, ok := p.started[name]; ok {
		took = " in " + time.Since(t).Round(100*time.Millisecond).String()
		delete(p.started, name)
	}
	fmt.Fprintf(p.w, "%s %s%s\n", p.stamp(), Sanitize(line), took)
}

// finished is gate.Options.Progress.
func (p *stepProgress) finished(s gate.Step) {
	p.ended(s.Rule, report.StepLine(s))
}

// Starting and Ended make a stepProgress a signoff.Progress.
func (p *stepProgress) Starting(step string)    { p.starting(step) }
func (p *stepProgress) Ended(step, line string) { p.ended(step, line) }
