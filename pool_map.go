package crew

import (
	"context"
	"errors"
)

// Map calls f on each of inputs on a pool of workers goroutines and returns
// the results in the order of inputs. The first error (or panic, as an error
// that errors.As unwraps to *panics.ErrRecovered) cancels the context f
// receives, which derives from ctx; inputs not yet started are skipped, and
// Map returns that error once the calls in progress have returned. If ctx
// ends first, Map returns context.Cause(ctx), also when a call returned
// ctx's own error (context.Canceled or DeadlineExceeded) because ctx ended.
// Beside an error, the results are still len(inputs) long: each call that
// returned nil left its result, and the others (those that failed, and
// the inputs skipped) left R's zero value, as conc's iter.MapErr does.
//
// Map takes the options of NewPool but WithMailbox, WithKey,
// WithConsistentHash, WithParent and WithFairShare, which do not apply: its
// jobs are indexes into inputs, ctx is their parent, and it has no
// batches. It panics if ctx or f is nil or workers is not between 1 and
// 1<<24. Each result is written by one worker and read after all of them
// have stopped: R needs no locking.
func Map[T, R any](ctx context.Context, workers int, inputs []T, f func(context.Context, T) (R, error), opts ...Option) ([]R, error) {
	if ctx == nil {
		panic("crew: Map: nil context")
	}
	checkWorkers("Map", workers)
	if f == nil {
		panic("crew: Map: nil function")
	}
	o := collect(opts)
	o.only("Map", poolOpts&^(optMailbox|optKey|optParent|optFairShare|optFairWindow|optAdaptive))
	o.parent, o.cancelOnError = ctx, true
	out := make([]R, len(inputs))
	p := newPool(min(workers, max(len(inputs), 1)), func(ctx context.Context, i int) error {
		return call(ctx, f, inputs, out, i)
	}, &o)
	var refused error
	for i := range inputs {
		if p.Submit(p.ctx, i) != nil {
			refused = context.Cause(p.ctx) // the first error, or ctx's end
			break
		}
	}
	return results(ctx, out, p.Wait(), refused)
}

// call is Map's and MapBatch's job: it calls f on inputs[i], and keeps its
// result in out[i] if f returned nil.
func call[T, R any](ctx context.Context, f func(context.Context, T) (R, error), inputs []T, out []R, i int) error {
	r, err := f(ctx, inputs[i])
	if err == nil {
		out[i] = r
	}
	return err
}

// results is what Map and MapBatch return, given what Wait returned (err)
// and why a Submit was refused, if one was: out and the error, if any, and
// for a call that returned ctx's own error when ctx ended, why it ended.
func results[R any](ctx context.Context, out []R, err, refused error) ([]R, error) {
	if err == nil {
		err = refused // ctx ended, or the pool closed, before every input was submitted
	}
	if err != nil && echoes(err, ctx) {
		err = context.Cause(ctx)
	}
	return out, err
}

// MapBatch calls f on each of inputs as one batch on the shared pool p, and
// returns the results in the order of inputs: Map's counterpart for a
// long-lived pool. The batch's context derives from ctx; its first error
// cancels it, skipping the inputs not yet started, and MapBatch returns
// that error once the calls in progress have returned. If ctx ends first,
// it returns context.Cause(ctx); if p is closed (its Wait or Shutdown has
// begun), an error that errors.Is matches with ErrPoolClosed. Beside an
// error, the results are len(inputs) long, as Map's are: the results of
// the calls that returned nil, and R's zero value elsewhere. opts are the
// batch's (WithLimit, WithAllErrors, WithDeadLetters, WithTenant and
// WithWeight: see NewBatch). It panics if ctx, p or f is nil, or if p
// takes no batches (see NewBatch).
func MapBatch[T, R any](ctx context.Context, p *Pool[Job], inputs []T, f func(context.Context, T) (R, error), opts ...Option) ([]R, error) {
	if ctx == nil {
		panic("crew: MapBatch: nil context")
	}
	if p == nil {
		panic("crew: MapBatch: nil pool")
	}
	if f == nil {
		panic("crew: MapBatch: nil function")
	}
	b, bctx := p.newBatch("MapBatch", ctx, opts)
	out := make([]R, len(inputs))
	var refused error
	for i := range inputs {
		err := b.Submit(bctx, func(ctx context.Context) error {
			return call(ctx, f, inputs, out, i)
		})
		if err != nil {
			refused = whyRefused(err, bctx, p.ctx)
			break
		}
	}
	return results(ctx, out, b.Wait(), refused)
}

// whyRefused is why a batch's Submit refused a job (err), given the batch's
// context and its pool's.
func whyRefused(err error, bctx, pctx context.Context) error {
	switch {
	case errors.Is(err, ErrPoolClosed): // its Wait or Shutdown began, whatever the contexts' state
		return err
	case bctx.Err() != nil:
		return context.Cause(bctx) // the first error, or ctx's end
	case pctx.Err() != nil:
		return context.Cause(pctx) // the pool's context ended (its parent's end, its first error)
	}
	return err
}
