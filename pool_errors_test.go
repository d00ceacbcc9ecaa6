package crew_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A long-lived pool's failures reach WithErrorHandler as they happen, not
// only its Wait at exit.

func TestAPoolsErrorHandlerSeesEachFailureBeforeWaitIsCalled(t *testing.T) {
	errs := make(chan error, 4)
	p := crew.NewGroup(2, crew.WithErrorHandler(func(err error) { errs <- err }))
	ctx := context.Background()
	boom := errors.New("boom")
	require.NoError(t, p.Submit(ctx, func(context.Context) error { return boom }))
	assert.ErrorIs(t, <-errs, boom, "a returned error")

	b, bctx := p.NewBatch(ctx)
	require.NoError(t, b.Submit(bctx, func(context.Context) error { panic("kaboom") }))
	var rec *panics.ErrRecovered
	assert.ErrorAs(t, <-errs, &rec, "a batch job's panic")

	b2, b2ctx := p.NewBatch(ctx)
	require.NoError(t, b2.Submit(b2ctx, func(context.Context) error { runtime.Goexit(); return nil }))
	assert.ErrorContains(t, <-errs, "Goexit", "a batch job's runtime.Goexit")

	// Every one was reported before any Wait was called; Wait returns them
	// too, as before.
	assert.ErrorAs(t, b.Wait(), &rec)
	assert.Error(t, b2.Wait())
	assert.ErrorIs(t, p.Wait(), boom)
	assert.Empty(t, errs, "each failure is reported once")
}

func TestAPoolsErrorHandlerCallHappensBeforeWaitReturns(t *testing.T) {
	var seen []error                                                                           // written by the handler, on the worker; read after Wait, unlocked
	p := crew.NewGroup(1, crew.WithErrorHandler(func(err error) { seen = append(seen, err) })) // the first error cancels nothing
	for range 3 {
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { return errors.New("no") }))
	}
	require.Error(t, p.Wait())
	assert.Len(t, seen, 3, "the race detector checks that the handler's writes happen before Wait returns")
}

// crashChild is the environment variable that makes
// TestWithoutPanicRecoveryCrashesTheProcess's child run what crashes.
const crashChild = "CREW_TEST_CRASH_CHILD"

// WithoutPanicRecovery lets a panic crash the process, as a goroutine's
// own would: run in a child process, the test binary itself.
func TestWithoutPanicRecoveryCrashesTheProcess(t *testing.T) {
	switch os.Getenv(crashChild) {
	case "pool":
		p := crew.NewGroup(1, crew.WithoutPanicRecovery())
		_ = p.Submit(context.Background(), func(context.Context) error { panicInAJob(); return nil })
		_ = p.Wait()
		return
	case "actor":
		r := crew.Spawn(context.Background(), func(context.Context, int) error { panicInAHandler(); return nil }, crew.WithoutPanicRecovery())
		_ = r.Tell(context.Background(), 1)
		<-r.Done()
		return
	}
	for _, child := range []struct{ name, frame string }{{"pool", "panicInAJob"}, {"actor", "panicInAHandler"}} {
		t.Run(child.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestWithoutPanicRecoveryCrashesTheProcess$")
			cmd.Env = append(os.Environ(), crashChild+"="+child.name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child exits with an error: %s", out)
			assert.Contains(t, string(out), "panic: crew test: "+child.name+" panicked")
			assert.Contains(t, string(out), child.frame, "the panic's own stack")
		})
	}
}

func panicInAJob()     { panic("crew test: pool panicked") }
func panicInAHandler() { panic("crew test: actor panicked") }
