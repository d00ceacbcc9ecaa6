package crew

import (
	"context"
	"errors"
	"strconv"
)

// Map calls f on each of inputs on a pool of workers goroutines and returns
// the results in the order of inputs. The first error (or panic, as an error
// that errors.As unwraps to *panics.ErrRecovered) cancels the context f
// receives, which derives from ctx; inputs not yet started are skipped, and
// Map returns nil and that error once the calls in progress have returned.
// If ctx ends first, Map returns nil and context.Cause(ctx), also when a
// call returned ctx's own error (context.Canceled or DeadlineExceeded)
// because ctx ended.
//
// Map takes the options of NewPool but WithMailbox, WithKey,
// WithConsistentHash, WithParent and WithFairShare, which do not apply: its
// jobs are indexes into inputs, ctx is their parent, and it has no
// batches. It panics if ctx or f is
// nil or workers is less than 1. Each result is written by one worker and
// read after all of them have stopped: R needs no locking.
func Map[T, R any](ctx context.Context, workers int, inputs []T, f func(context.Context, T) (R, error), opts ...Option) ([]R, error) {
	if ctx == nil {
		panic("crew: Map: nil context")
	}
	if workers < 1 {
		panic("crew: Map: workers must be at least 1, got " + strconv.Itoa(workers))
	}
	if f == nil {
		panic("crew: Map: nil function")
	}
	o := collect(opts)
	o.only("Map", poolOpts&^(optMailbox|optKey|optParent|optFairShare))
	o.parent, o.cancelOnError = ctx, true
	out := make([]R, len(inputs))
	p := newPool(min(workers, max(len(inputs), 1)), func(ctx context.Context, i int) error {
		r, err := f(ctx, inputs[i])
		out[i] = r
		return err
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

// results is what Map and MapBatch return, given what Wait returned (err)
// and why a Submit was refused, if one was: nil and the error, if any, and
// for a call that returned ctx's own error when ctx ended, why it ended.
func results[R any](ctx context.Context, out []R, err, refused error) ([]R, error) {
	if err == nil {
		err = refused // ctx ended, or the pool closed, before every input was submitted
	}
	if err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		err = context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MapBatch calls f on each of inputs as one batch on the shared pool p, and
// returns the results in the order of inputs: Map's counterpart for a
// long-lived pool. The batch's context derives from ctx; its first error
// cancels it, skipping the inputs not yet started, and MapBatch returns nil
// and that error once the calls in progress have returned. If ctx ends
// first, it returns nil and context.Cause(ctx). opts are the batch's
// (WithLimit, WithAllErrors, WithDeadLetters, and on a pool WithFairShare,
// WithTenant and WithWeight). It panics if ctx, p or f is
// nil.
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
	b, bctx := p.NewBatch(ctx, opts...)
	out := make([]R, len(inputs))
	var refused error
	for i := range inputs {
		err := b.Submit(bctx, func(ctx context.Context) error {
			r, err := f(ctx, inputs[i])
			out[i] = r
			return err
		})
		if err != nil {
			switch {
			case bctx.Err() != nil:
				refused = context.Cause(bctx) // the first error, or ctx's end
			case p.Context().Err() != nil:
				refused = context.Cause(p.Context()) // the pool's end (Shutdown)
			default:
				refused = err // the pool closed, or its workers died
			}
			break
		}
	}
	return results(ctx, out, b.Wait(), refused)
}
