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
	if p.apply(n) && a != nil {
		a.set(n, p.clock())
	}
}

// resizeBy resizes p to n workers for its controller (WithAdaptiveSize),
// on a worker's goroutine, if the controller's decision still stands
// (current: no Resize came since it was taken), and reports whether the
// workers changed. It does nothing if a Resize, or Wait, holds the
// workers, rather than wait for Wait, which waits for the worker.
func (p *Pool[T]) resizeBy(n int, current func() bool) bool {
	if !p.resizing.TryLock() {
		return false
	}
	defer p.resizing.Unlock()
	return current() && p.apply(n)
}

// apply makes p's workers n, with p.resizing held, and reports whether p
// has n workers now: not once Wait or Shutdown began.
func (p *Pool[T]) apply(n int) bool {
	var now int64
	if p.rec != nil {
		now = p.clock()
	}
	made, resized := p.s.Resize(n, now)
	for _, r := range made {
		newWorker(p, r).start()
	}
	return resized
}

// waiting reports whether jobs wait for a worker, in the backlog or in
// blocked Submits, for p's controller (WithAdaptiveSize): a pool with none
// would not run more jobs with more workers.
func (p *Pool[T]) waiting() bool {
	c := p.s.Counts()
	return c.Queued > 0 || c.Blocked > 0
}
