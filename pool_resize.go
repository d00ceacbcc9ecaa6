package crew

import "fmt"

// Resize changes the number of p's workers to n, while the pool runs.
// Growing starts workers that take backlog jobs at once. Shrinking lets the
// extra workers (the last ones) finish the jobs they hold and exit; it does
// not wait for them, Wait does. The pool's bound follows the new size
// (n×(1+the queue size)). Stats.PerWorker lists the workers that remain;
// the jobs the retired ones ran stay counted in the totals. Resize after
// Wait or Shutdown began does nothing. It panics if n is less than 1 or
// more than 1<<24, or if p uses WithConsistentHash, whose keys are pinned
// to its workers. On a pool WithAdaptiveSize, n is a new starting point
// for its controller, and must lie between its min and max (see
// WithAdaptiveSize).
func (p *Pool[T]) Resize(n int) {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Resize")
	}
	checkWorkers("Resize", n)
	if p.s.Pinned() {
		panic("crew: Resize: a pool with WithConsistentHash keeps its workers: its keys are pinned to them")
	}
	a := p.adapt
	if a != nil && (n < a.min || n > a.max) {
		panic(fmt.Sprintf("crew: Resize: the pool's WithAdaptiveSize(%d, %d) keeps its workers between them, got %d", a.min, a.max, n))
	}
	p.resizing.Lock() // only Resize changes the workers
	defer p.resizing.Unlock()
	p.apply(n)
	if a != nil {
		a.set(n, p.clock())
	}
}

// resizeBy resizes p to n workers for its controller (WithAdaptiveSize),
// on a worker's goroutine, and reports true; unless a Resize, or Wait,
// holds the workers: then it does nothing and reports false, rather than
// wait for Wait, which waits for the worker.
func (p *Pool[T]) resizeBy(n int) bool {
	if !p.resizing.TryLock() {
		return false
	}
	defer p.resizing.Unlock()
	p.apply(n)
	return true
}

// apply makes p's workers n, with p.resizing held.
func (p *Pool[T]) apply(n int) {
	var now int64
	if p.rec != nil {
		now = p.clock()
	}
	for _, r := range p.s.Resize(n, now) {
		newWorker(p, r).start()
	}
}

// waiting reports whether jobs wait for a worker, in the backlog or in
// blocked Submits, for p's controller (WithAdaptiveSize): a pool with none
// would not run more jobs with more workers.
func (p *Pool[T]) waiting() bool {
	c := p.s.Counts()
	return c.Queued > 0 || c.Blocked > 0
}
