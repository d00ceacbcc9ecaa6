package crew

import "context"

// A streamHost is where an ordered stream's jobs run, and all the stream
// needs of it: a pool of its own (MapSeq, NewStream) or one batch of a
// shared pool (MapSeqBatch, NewStreamBatch). The streams reach their pool
// through it alone.
type streamHost struct {
	jobs       context.Context                  // the context the jobs receive: the pool's, or the batch's
	pool       context.Context                  // the pool's context
	window     int                              // the most inputs or tasks the stream holds (see WithWindow)
	noRecovery bool                             // WithoutPanicRecovery on the pool: the jobs' panics are not recovered
	own        bool                             // the pool is the stream's own: it closes only as the stream ends
	submit     func(context.Context, Job) error // the pool's Submit, or the batch's
	wait       func() error                     // the pool's Wait, or the batch's
	base       context.Context                  // what the jobs' context derives from: the stream's own, which its Submits wait with
	stop       context.CancelCauseFunc          // cancels base
}

// ownHost starts the pool of an ordered stream of its own, of workers
// goroutines (at most its window), given the stream's options, with a
// context that derives from ctx.
func ownHost(ctx context.Context, workers int, o options) streamHost {
	sctx, stop := context.WithCancelCause(ctx)
	window := windowOf(&o, workers)
	p := ownPool(o, sctx, workers, window)
	return streamHost{jobs: p.ctx, pool: p.ctx, window: window, noRecovery: p.noRecovery, own: true, submit: p.Submit, wait: p.Wait, base: sctx, stop: stop}
}

// batchHost opens the batch of an ordered stream on the shared pool p,
// given the stream's options, with a context that derives from ctx.
func batchHost(ctx context.Context, p *Pool[Job], o options) streamHost {
	sctx, stop := context.WithCancelCause(ctx)
	o.deadLetters = stopOn(stop)
	b, bctx := p.openBatch(sctx, &o)
	return streamHost{jobs: bctx, pool: p.ctx, window: windowOf(&o, p.s.Counts().Live), noRecovery: p.noRecovery, submit: b.Submit, wait: b.Wait, base: sctx, stop: stop}
}
