package loop

import (
	"slices"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/loopdoc"
)

// TestStepEnv: the loop validates a card's commands in the environment
// the gate gives them (the allow-list and the card's signed env, what the
// build cache is keyed by), and any other validation command in the
// loop's minimal one.
func TestStepEnv(t *testing.T) {
	c := &card.Card{
		Pass:      card.Command{Cmd: []string{"go", "test"}, Env: map[string]string{"CGO_ENABLED": "0"}},
		Invariant: card.Command{Cmd: []string{"go", "vet"}},
	}
	host := map[string]string{"PATH": "/bin", "HOME": "/home/u", "GOFLAGS": "-mod=vendor", "SECRET_TOKEN": "x"}
	getenv := func(k string) string { return host[k] }
	e := &engine{cfg: Config{Card: &CardPolicy{Bound: &gate.Bound{Card: c}}, Env: []string{"PATH=/bin", "LANG=C.UTF-8"}, CardEnv: gate.DefaultEnv(getenv)}}
	e.inv = &loopdoc.Invocation{Validation: append(e.cfg.Card.ValidationCommands(), loopdoc.ValidationCommand{Name: "lint", Command: "make lint", Scope: "full"})}
	steps := e.steps()
	for _, tt := range []struct {
		i         int
		want, not []string
	}{
		{0, []string{"PATH=/bin", "HOME=/home/u", "GOFLAGS=-mod=vendor", "CGO_ENABLED=0"}, []string{"LANG=C.UTF-8", "SECRET_TOKEN=x"}},
		{1, []string{"GOFLAGS=-mod=vendor"}, []string{"CGO_ENABLED=0", "SECRET_TOKEN=x"}},
		{2, []string{"PATH=/bin", "LANG=C.UTF-8"}, []string{"GOFLAGS=-mod=vendor", "SECRET_TOKEN=x"}},
	} {
		got := e.stepEnv(steps[tt.i])
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("stepEnv(%s) = %q, want %s in it", steps[tt.i].cmd.Name, got, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("stepEnv(%s) = %q, want no %s", steps[tt.i].cmd.Name, got, n)
			}
		}
	}
}
