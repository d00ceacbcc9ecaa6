package crew

import (
	"context"
	"fmt"
)

// Closing with a deadline (Shutdown), and the end of the pool's context:
// dispatching stops before the context is canceled, and the blocked
// Submits are refused.

// Shutdown closes p, as Wait does, and waits for every job accepted to end,
// until ctx ends, as http.Server's Shutdown does. If every job ended first,
// it waits for the workers to exit and returns nil: the jobs' errors stay
// Wait's to return. If ctx ends first, Shutdown stops dispatching, cancels
// the pool's context and every batch's, with a cause that wraps ctx's (the
// jobs still queued are then skipped, and counted in Stats.Canceled), and
// returns ctx.Err() at once, without waiting for the jobs that run: those
// may still run when it returns, until they see their context's end (a job
// that ignores it runs on), and so may the workers. Wait waits for them
// all, and returns what it would have; every pool must still reach Wait.
// A job that calls Shutdown with a context that never ends waits for
// itself, as it would in Wait. Shutdown panics if ctx is nil.
func (p *Pool[T]) Shutdown(ctx context.Context) error {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Shutdown")
	}
	if ctx == nil {
		panic("crew: Shutdown: nil context")
	}
	drained := p.s.Shut(ErrPoolClosed)
	select {
	case <-drained: // drained before ctx ended, or both were already so
	default:
		select {
		case <-drained:
		case <-ctx.Done():
			cause := fmt.Errorf("crew: pool %q shut down: %w", p.name, context.Cause(ctx))
			batches := p.s.OpenBatches()
			p.own.stop(cause)
			for _, b := range batches {
				b.cancel(cause)
			}
			return ctx.Err()
		}
	}
	_ = p.Wait() // no job is held: the workers exit at once
	return nil
}

// refuseAll answers every blocked Submit with the pool context's error,
// once that context is done; context.AfterFunc runs it.
func (p *Pool[T]) refuseAll() {
	defer close(p.refused)
	p.own.stop(context.Cause(p.ctx)) // its cancel does nothing: the context is done
}
