package crew

import (
	"context"
	"strconv"
)

// A Job is the unit of work of a group (NewGroup, WithContext): a function
// that receives the pool's context and reports failure as an error.
type Job = func(context.Context) error

// NewGroup starts a pool of workers goroutines whose jobs are functions, as
// errgroup's are. See NewPool for the options. Submit panics on a nil job.
func NewGroup(workers int, opts ...Option) *Pool[Job] {
	if workers < 1 {
		panic("crew: NewGroup: workers must be at least 1, got " + strconv.Itoa(workers))
	}
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
// group and that context, which jobs also receive. It is errgroup's
// WithContext with a limit of workers goroutines. It panics if ctx is nil,
// workers is less than 1, or WithParent is given.
func WithContext(ctx context.Context, workers int, opts ...Option) (*Pool[Job], context.Context) {
	if ctx == nil {
		panic("crew: WithContext: nil context")
	}
	if workers < 1 {
		panic("crew: WithContext: workers must be at least 1, got " + strconv.Itoa(workers))
	}
	o := collect(opts)
	o.only("WithContext", poolOpts&^optParent)
	o.parent, o.cancelOnError = ctx, true
	p := newGroup(workers, &o)
	return p, p.ctx
}
