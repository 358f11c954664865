package cli

import (
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"io"
	"os"
	"sync"
	"time"
)

// slowStep is how long a step runs before a log without a terminal hears
// of it: quick steps would only be noise there, and their results are on
// stdout anyway.
const slowStep = 2 * time.Second

// stepProgress tells a person what a long command (gate, card sign, card
// from-commit) is doing, on stderr only, so stdout stays the result
// whatever --json says:
//
//   - on a terminal, one live line, redrawn in place every second and
//     cleared at the end, so each rule is printed once, in the result:
//     `[  4.7s] card sign: base.fail run 2/3`
//   - elsewhere (a CI log, a pipe), one line for each step that is still
//     running two seconds after it began:
//     `failpass: card sign: base.fail run 2/3 ...`
//
// --quiet silences it (newStepProgress returns nil).
type stepProgress struct {
	mu      sync.Mutex
	w       io.Writer
	what    string // the command: "gate", "card sign"
	tty     bool
	start   time.Time
	running []string // steps begun and not ended, oldest first
	timers  map[string]*time.Timer
	drawn   bool
	stop    chan struct{}
	closed  bool
}

// newStepProgress returns the progress of the command named what, or nil
// under --quiet.
func newStepProgress(env *Env, what string, quiet bool) *stepProgress {
	if quiet {
		return nil
	}
	p := &stepProgress{w: env.Stderr, what: what, start: time.Now(), timers: map[string]*time.Timer{}}
	if fh, ok := env.Stderr.(*os.File); ok && isTerminal(fh) {
		p.tty = true
		p.stop = make(chan struct{})
		go p.tick()
	}
	return p
}

// tick redraws the live line every second, so its clock moves while one
// step runs for minutes.
func (p *stepProgress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// draw shows the newest running step on the live line; p.mu is held.
func (p *stepProgress) draw() {
	if !p.tty || p.closed {
		return
	}
	if len(p.running) == 0 {
		p.clear()
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%6.1fs] %s: %s", time.Since(p.start).Seconds(), p.what, Sanitize(p.running[len(p.running)-1]))
	p.drawn = true
}

func (p *stepProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// starting says a step began.
func (p *stepProgress) starting(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.running = append(p.running, name)
	if p.tty {
		p.draw()
		return
	}
	p.timers[name] = time.AfterFunc(slowStep, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if _, ok := p.timers[name]; ok && !p.closed {
			fmt.Fprintf(p.w, "failpass: %s: %s ...\n", p.what, Sanitize(name))
		}
	})
}

// ended says a step ended. Its result is the command's to print.
func (p *stepProgress) ended(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.timers[name]; ok {
		t.Stop()
		delete(p.timers, name)
	}
	for i, r := range p.running {
		if r == name {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	p.draw()
}

// close stops the clock and clears the live line before the result is
// printed. A nil progress closes too.
func (p *stepProgress) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	for _, t := range p.timers {
		t.Stop()
	}
	p.clear()
	p.closed = true
	if p.stop != nil {
		close(p.stop)
	}
}

// step is instance.Options.Step: it says a step began and returns what
// says it ended.
func (p *stepProgress) step(name string) func() {
	p.starting(name)
	return func() { p.ended(name) }
}

// finished is gate.Options.Progress.
func (p *stepProgress) finished(s verdict.Step) { p.ended(s.Rule) }

// Starting and Ended make a stepProgress a signoff.Progress.
func (p *stepProgress) Starting(step string)    { p.starting(step) }
func (p *stepProgress) Ended(step, line string) { p.ended(step) }
