package crew

import "context"

// A Job is the unit of work of a group (NewGroup, WithContext): a function
// that receives the pool's context and reports failure as an error.
type Job = func(context.Context) error

// NewGroup starts a pool of workers goroutines whose jobs are functions, as
// errgroup's are. See NewPool for the options, and the workers it takes.
// Submit panics on a nil job.
func NewGroup(workers int, opts ...Option) *Pool[Job] {
	checkWorkers("NewGroup", workers)
	o := collect(opts)
	o.only("NewGroup", poolOpts)
	return newGroup(workers, &o)
}

func newGroup(workers int, o *options) *Pool[Job] {
	p := newPool(workers, runJob, o)
	p.isNil = func(j Job) bool { return j == nil }
	return p
}

func runJob(ctx context.Context, j Job) error { return j(ctx) }

// WithContext starts a group, as NewGroup does, whose context derives from
// ctx and is canceled, with the first error as its cause, by the first job
// that fails, or when Wait returns, whichever comes first. It returns the
// group and that context. It is errgroup's WithContext with a limit of
// workers goroutines.
//
// Jobs receive a context derived from the returned one, with the same
// Done, Err, Cause and values, and a value added that marks their own
// Submits: only a Submit with the context a job received (or one derived
// from it) is the job's own (see Submit). A job's Submit with the returned
// context, captured from outside, is not: it blocks on a full pool, and is
// refused with ErrPoolClosed once Wait has begun, as any other Submit is.
// Counting it as the job's own would let a producer's loop that submits
// with that context pass the pool's bound.
//
// It panics if ctx is nil, workers is not between 1 and 1<<24, or
// WithParent is given.
func WithContext(ctx context.Context, workers int, opts ...Option) (*Pool[Job], context.Context) {
	if ctx == nil {
		panic("crew: WithContext: nil context")
	}
	checkWorkers("WithContext", workers)
	o := collect(opts)
	o.only("WithContext", poolOpts&^optParent)
	o.parent, o.cancelOnError = ctx, true
	p := newGroup(workers, &o)
	return p, p.ctx
}
