package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// OutputLimitError says a command wrote more than Capture's maxOut bytes
// to stdout. Capture kills the command's group at that point; the Result
// beside this error still says how it ended.
type OutputLimitError struct{ Max int64 }

func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("run: command wrote more than %d bytes to stdout", e.Max)
}

var errOutputLimit = errors.New("run: output limit")

// Capture is Run for a command that speaks a protocol (a model adapter):
// stdin comes from the given bytes, stdout is captured up to maxOut bytes,
// and stderr alone goes to the bounded log. Everything else (no shell,
// confinement, timeout, process-group kill, escapee reaping, Wait always
// returning) is Run's.
//
// A command that writes more than maxOut bytes is killed at once: the
// returned stdout holds the first maxOut bytes and the error is an
// *OutputLimitError. Any other error is, as for Run, a problem before the
// command exists.
func Capture(ctx context.Context, s Spec, stdin []byte, maxOut int64) ([]byte, Result, error) {
	if maxOut <= 0 {
		return nil, Result{}, errors.New("run: capture needs a positive output limit")
	}
	p, res, err := prepare(s, nil)
	if err != nil || res.StartErr != nil {
		return nil, res, err
	}
	log := p.log
	outR, outW, err := os.Pipe()
	if err != nil {
		log.Close()
		return nil, Result{}, fmt.Errorf("run: stdout pipe: %w", err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		log.Close()
		return nil, Result{}, fmt.Errorf("run: stderr pipe: %w", err)
	}
	defer errR.Close()

	tctx, cancelTimeout := context.WithTimeoutCause(ctx, p.timeout, errTimedOut)
	defer cancelTimeout()
	// overflow ends the command when stdout passes maxOut; it is told
	// apart from the timeout and the caller's cancel by its cause.
	octx, overflow := context.WithCancelCause(tctx)
	defer overflow(nil)
	dctx, disk, err := p.watchDisk(octx, s)
	if err != nil {
		outR.Close()
		errR.Close()
		outW.Close()
		errW.Close()
		return nil, p.notStarted(ctx, res, err), nil
	}
	cmd := p.command(dctx, s.Argv)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = outW
	cmd.Stderr = errW

	start := time.Now()
	err = p.start(cmd)
	outW.Close()
	errW.Close()
	if err != nil {
		disk.end()
		return nil, p.notStarted(ctx, res, err), nil
	}

	var out bytes.Buffer
	over := false
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := outR.Read(buf)
			if n > 0 && !over {
				room := maxOut - int64(out.Len())
				if int64(n) > room {
					out.Write(buf[:room])
					over = true
					overflow(errOutputLimit)
				} else {
					out.Write(buf[:n])
				}
			}
			if err != nil {
				return
			}
		}
	}()
	errDone := make(chan struct{})
	go func() {
		io.Copy(log, errR)
		close(errDone)
	}()

	cmd.Wait()
	res.Duration = time.Since(start)
	cleanUp(cmd)
	res.Disk = disk.end()
	deadline := time.Now().Add(drainGrace)
	outR.SetReadDeadline(deadline)
	errR.SetReadDeadline(deadline)
	<-outDone
	<-errDone
	res.ended(ctx, tctx, cmd)
	if err := p.sb.finish(&res); err != nil {
		return out.Bytes(), res.withLog(log), err
	}
	res = res.withLog(log)
	if over {
		return out.Bytes(), res, &OutputLimitError{Max: maxOut}
	}
	return out.Bytes(), res, nil
}
