package crew

import (
	"context"
	"fmt"
)

// Long-lived pools change size while they run (Resize), and close with a
// deadline (Shutdown).

// Resize changes the number of p's live workers to n, while the pool runs.
// Growing starts workers that take backlog jobs at once (a worker that a
// job's runtime.Goexit ended is replaced this way). Shrinking lets the
// extra workers (the last ones) finish the jobs they hold and exit; it does
// not wait for them, Wait does. The pool's bound follows the new size
// (n×(1+the queue size)). Stats.PerWorker lists the workers that remain;
// the jobs the retired ones ran stay counted in the totals. Resize after
// Wait or Shutdown began does nothing. It panics if n is less than 1 or
// more than 1<<24, or if p uses WithConsistentHash, whose keys are pinned
// to its workers.
func (p *Pool[T]) Resize(n int) {
	if p.refused == nil {
		p.unmade("Pool.Resize")
	}
	checkWorkers("Resize", n)
	if p.d.pin != nil {
		panic("crew: Resize: a pool with WithConsistentHash keeps its workers: its keys are pinned to them")
	}
	p.resizing.Lock() // only Resize changes the workers: they stay as read here
	defer p.resizing.Unlock()
	for !p.resize(n) {
		// a worker died while resize made the new ones: again
	}
}

// resize is Resize, once its lock is held. It reports false, having
// changed nothing, if a worker died while it made the new ones: then
// Resize tries again.
func (p *Pool[T]) resize(n int) bool {
	d := &p.d
	d.mu.Lock()
	closed, live, workers := d.drained != nil, d.live, d.workers
	d.mu.Unlock()
	if closed || n == live {
		return true
	}
	// What grows is made before the lock is taken: the new workers, the
	// slices that hold them. The new workers' goroutines start once they
	// are in the pool, and take jobs as any worker does.
	grown, bits := workers, d.idle.bits
	if n > live {
		grown = make([]*worker[T], len(workers), len(workers)+n-live)
		copy(grown, workers)
		for range n - live {
			grown = append(grown, newWorker(p, len(grown)))
		}
		bits = make([]uint64, (len(grown)+63)/64)
	}
	retired := make([]*worker[T], 0, max(live-n, 0)) // the idle ones, whose channels close
	d.mu.Lock()
	switch {
	case d.drained != nil: // Wait began meanwhile: the workers stay as they are
		d.mu.Unlock()
		return true
	case d.live != live: // a worker died meanwhile
		d.mu.Unlock()
		return false
	}
	copy(bits, d.idle.bits)
	d.idle.bits, d.workers = bits, grown
	d.live += len(grown) - len(workers)
	// Retire live workers from the end until n are live, taking out the
	// dead ones met on the way.
	for i := len(d.workers) - 1; i >= 0 && d.live > n; i-- {
		w := d.workers[i]
		if !w.dead {
			w.retired = true
			d.live--
			if d.idle.has(i) { // it exits once its channel is closed; a busy one, at its next job
				d.idle.remove(i)
				retired = append(retired, w)
			}
		}
		d.workers = d.workers[:i]
	}
	if d.idle.cursor >= len(d.workers) {
		d.idle.cursor = 0
	}
	d.limit = n * p.perWorker
	if p.rec != nil {
		d.tick(p.clock()) // a read under the lock, but Resize is rare
	}
	var a after[T]
	d.admit(&a)
	d.mu.Unlock()
	a.run(p)
	for _, w := range grown[len(workers):] {
		w.start()
	}
	for _, w := range retired {
		close(w.jobs)
	}
	return true
}

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
	if p.refused == nil {
		p.unmade("Pool.Shutdown")
	}
	if ctx == nil {
		panic("crew: Shutdown: nil context")
	}
	drained := p.close()
	select {
	case <-drained: // drained before ctx ended, or both were already so
	default:
		select {
		case <-drained:
		case <-ctx.Done():
			cause := fmt.Errorf("crew: pool %q shut down: %w", p.name, context.Cause(ctx))
			batches := p.d.batchesOpen()
			p.stop(cause)
			for _, b := range batches {
				b.cancel(cause)
			}
			return ctx.Err()
		}
	}
	_ = p.Wait() // no job is held: the workers exit at once
	return nil
}

// batchesOpen returns the batches not waited for yet.
func (d *dispatcher[T]) batchesOpen() []*Batch[T] {
	for {
		d.mu.Lock()
		n := d.batches.n
		d.mu.Unlock()
		list := make([]*Batch[T], 0, n) // made before the lock is taken
		d.mu.Lock()
		if d.batches.n <= n {
			for b := d.batches.first; b != nil; b = b.next {
				list = append(list, b)
			}
			d.mu.Unlock()
			return list
		}
		d.mu.Unlock() // more batches came: make room for them
	}
}
