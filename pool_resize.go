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
	if n < 1 || n > maxWorkers {
		panic(fmt.Sprintf("crew: Resize: workers must be between 1 and %d, got %d", maxWorkers, n))
	}
	if p.d.pin != nil {
		panic("crew: Resize: a pool with WithConsistentHash keeps its workers: its keys are pinned to them")
	}
	p.resizing.Lock()
	defer p.resizing.Unlock()
	d := &p.d
	d.mu.Lock()
	closed, live, have := d.closed, int(d.live), len(d.workers)
	d.mu.Unlock()
	if closed || n == live {
		return
	}
	// New workers start apart from the pool (away): they join it under the
	// lock, once their Refs are set, and are woken to take backlog jobs.
	var fresh []*worker[T]
	for i := range n - live {
		fresh = append(fresh, p.startWorker(new(worker[T]), have+i, true))
	}
	var a after[T]
	var wake []*worker[T]
	d.mu.Lock()
	d.pruneGone()
	if d.closed {
		// Wait began meanwhile: the new workers go, as retired ones do.
		for _, w := range fresh {
			w.retired = true
			d.gone = append(d.gone, w)
		}
		wake = fresh
	} else {
		for _, w := range fresh {
			w.away = false
			d.workers = append(d.workers, w)
			d.live++
		}
		// Retire live workers from the end until n are live, taking out
		// the dead ones met on the way.
		for i := len(d.workers) - 1; i >= 0 && int(d.live) > n; i-- {
			w := d.workers[i]
			if !w.dead {
				w.away, w.retired = true, true
				d.live--
				if d.isIdle(i) {
					d.unidle(i)
				}
				wake = append(wake, w)
			}
			d.gone = append(d.gone, w)
			d.workers = d.workers[:i]
		}
		for len(d.idle) < (len(d.workers)+63)/64 {
			d.idle = append(d.idle, 0)
		}
		if d.cursor >= len(d.workers) {
			d.cursor = 0
		}
		d.limit = n * d.perWorker
		d.admit(&a)
		wake = append(wake, fresh...)
	}
	d.mu.Unlock()
	a.run(d)
	for _, w := range wake {
		w.ref.wake()
	}
}

// pruneGone forgets the retired workers that have exited, keeping what they
// did. d.mu is held.
func (d *dispatcher[T]) pruneGone() {
	kept := d.gone[:0]
	for _, w := range d.gone {
		select {
		case <-w.ref.Done():
			d.retired.handled += w.handled
			d.retired.inline += w.inline.Load()
			d.retired.canceled += w.canceled
			d.retired.failed += w.failed.Load()
			d.retired.panicked += w.panicked.Load()
		default:
			kept = append(kept, w)
		}
	}
	clear(d.gone[len(kept):])
	d.gone = kept
}

// Shutdown closes p, as Wait does, and waits for every job accepted until
// ctx ends. If ctx ends first, it cancels the pool's context and every
// batch's, with a cause that wraps ctx's (jobs still queued are then
// skipped, and counted in Stats.Canceled), waits until every job has ended,
// and returns ctx.Err(); otherwise it returns nil. Either way the workers
// have exited when it returns, and Wait then returns what it would have.
// Shutdown panics if ctx is nil.
func (p *Pool[T]) Shutdown(ctx context.Context) error {
	if ctx == nil {
		panic("crew: Shutdown: nil context")
	}
	if p.d.drained == nil {
		panic("crew: Shutdown: the Pool was not made by NewPool, NewGroup or WithContext")
	}
	p.d.close()
	var err error
	select {
	case <-p.d.drained: // drained before ctx ended, or both were already so
	default:
		select {
		case <-p.d.drained:
		case <-ctx.Done():
			err = ctx.Err()
			cause := fmt.Errorf("crew: pool %q shut down: %w", p.name, context.Cause(ctx))
			// Under the lock, so that no dispatch runs a job once a job can see
			// its context end, nor skips one before the cause is set.
			d := &p.d
			d.lock(true)
			p.cancel(cause)
			for b := d.batches.first; b != nil; b = b.next {
				b.stopped = true
				b.cancel(cause)
			}
			d.mu.Unlock()
		}
	}
	p.Wait()
	return err
}
