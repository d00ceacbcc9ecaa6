package crew

// Resize changes the number of p's workers to n, while the pool runs.
// Growing starts workers that take backlog jobs at once. Shrinking lets the
// extra workers (the last ones) finish the jobs they hold and exit; it does
// not wait for them, Wait does. The pool's bound follows the new size
// (n×(1+the queue size)). Stats.PerWorker lists the workers that remain;
// the jobs the retired ones ran stay counted in the totals. Resize after
// Wait or Shutdown began does nothing. It panics if n is less than 1 or
// more than 1<<24, or if p uses WithConsistentHash, whose keys are pinned
// to its workers.
func (p *Pool[T]) Resize(n int) {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Resize")
	}
	checkWorkers("Resize", n)
	if p.s.Pinned() {
		panic("crew: Resize: a pool with WithConsistentHash keeps its workers: its keys are pinned to them")
	}
	p.resizing.Lock() // only Resize changes the workers
	defer p.resizing.Unlock()
	var now int64
	if p.rec != nil {
		now = p.clock()
	}
	for _, r := range p.s.Resize(n, now) {
		newWorker(p, r).start()
	}
}
