package main

import (
	"context"
	"runtime"
	"sync"

	"github.com/crewlib/crew"
)

// The floor: the least a pool with crew's guarantees can cost around one
// lock. A ring of workers×crew.DefaultQueueSize waiting jobs (as many as
// crew's default pool holds beside the running ones), a LIFO stack of idle
// workers each parked on a channel of its own, and a FIFO list of blocked
// Submits that honour their context, all under one mutex taken as crew
// takes its lock (TryLock, one runtime.Gosched, TryLock, then Lock). It
// keeps global FIFO order, a job's context, exact counts and 0 allocations
// per job; it has no batches, keys, fairness, metrics or panic recovery.
// Jobs are called as crew's are: handle(ctx, job), with the pool's
// context, handle being crew.Job's call for a group (floorPool[crew.Job])
// or a typed handler, as here for func() jobs (the crew contender's
// shape). What crew costs above it is the work around the lock.
type floorPool[T any] struct {
	handle func(context.Context, T) error
	ctx    context.Context
	wg     sync.WaitGroup
	free   sync.Pool // of *floorWaiter[T], for blocked Submits

	mu          sync.Mutex        // guards the fields below; taken with lock
	ring        []T               // the waiting jobs, oldest at head
	head, n     int               // the ring's oldest slot and its length
	idle        []*floorWorker[T] // parked workers, the last to park on top
	first, last *floorWaiter[T]   // blocked Submits, oldest first
	closed      bool              // Wait began: workers that find no job exit
}

// A floorWorker is one of the floor's goroutines.
type floorWorker[T any] struct {
	jobs chan T // cap 1: the job handed to it while it was parked; closed to stop it
}

// A floorWaiter is a Submit blocked on a full floor.
type floorWaiter[T any] struct {
	job        T
	prev, next *floorWaiter[T]
	queued     bool
	ready      chan struct{} // cap 1: signalled once job is in the ring
}

// lock takes p.mu as crew takes its dispatcher's lock.
func (p *floorPool[T]) lock() {
	if p.mu.TryLock() {
		return
	}
	runtime.Gosched()
	if p.mu.TryLock() {
		return
	}
	p.mu.Lock()
}

func newFloor[T any](workers int, handle func(context.Context, T) error) *floorPool[T] {
	p := &floorPool[T]{handle: handle, ctx: context.Background(), ring: make([]T, workers*crew.DefaultQueueSize)}
	p.free.New = func() any { return &floorWaiter[T]{ready: make(chan struct{}, 1)} }
	for range workers {
		w := &floorWorker[T]{jobs: make(chan T, 1)}
		p.idle = append(p.idle, w)
		p.wg.Go(func() { p.work(w) })
	}
	return p
}

// Submit hands job to a parked worker, or queues it in the ring, or blocks
// until a worker moves it there, or ctx ends first.
func (p *floorPool[T]) Submit(ctx context.Context, job T) error {
	p.lock()
	if k := len(p.idle); k > 0 {
		w := p.idle[k-1]
		p.idle = p.idle[:k-1]
		p.mu.Unlock()
		w.jobs <- job
		return nil
	}
	if p.n < len(p.ring) {
		p.push(job)
		p.mu.Unlock()
		return nil
	}
	wt := p.free.Get().(*floorWaiter[T])
	wt.job = job
	p.enlist(wt)
	p.mu.Unlock()
	select {
	case <-wt.ready:
		p.free.Put(wt)
		return nil
	case <-ctx.Done():
		p.lock()
		queued := wt.queued
		if queued {
			p.unlist(wt)
		}
		p.mu.Unlock()
		if !queued { // a worker took its job first
			<-wt.ready
			p.free.Put(wt)
			return nil
		}
		var zero T
		wt.job = zero
		p.free.Put(wt)
		return ctx.Err()
	}
}

// work runs the jobs handed to w, and after each takes the oldest job of
// the ring, letting the oldest blocked Submit's job in, in one turn of the
// lock; with none it parks.
func (p *floorPool[T]) work(w *floorWorker[T]) {
	var zero T
	for job := range w.jobs {
		for {
			_ = p.handle(p.ctx, job)
			p.lock()
			if p.n == 0 {
				if p.closed {
					p.mu.Unlock()
					return
				}
				p.idle = append(p.idle, w)
				p.mu.Unlock()
				break
			}
			job = p.ring[p.head]
			p.ring[p.head] = zero
			if p.head++; p.head == len(p.ring) {
				p.head = 0
			}
			p.n--
			wt := p.first
			if wt != nil {
				p.unlist(wt)
				p.push(wt.job)
				wt.job = zero
			}
			p.mu.Unlock()
			if wt != nil {
				wt.ready <- struct{}{}
			}
		}
	}
}

// Wait waits until every job submitted has run, then stops the workers.
func (p *floorPool[T]) Wait() {
	p.lock()
	p.closed = true
	for _, w := range p.idle {
		close(w.jobs)
	}
	p.idle = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// push queues job last in the ring, which has room. p.mu is held.
func (p *floorPool[T]) push(job T) {
	i := p.head + p.n
	if i >= len(p.ring) {
		i -= len(p.ring)
	}
	p.ring[i] = job
	p.n++
}

// enlist queues wt last among the blocked Submits. p.mu is held.
func (p *floorPool[T]) enlist(wt *floorWaiter[T]) {
	wt.prev, wt.next, wt.queued = p.last, nil, true
	if p.last == nil {
		p.first = wt
	} else {
		p.last.next = wt
	}
	p.last = wt
}

// unlist takes wt, which is queued, off the blocked Submits. p.mu is held.
func (p *floorPool[T]) unlist(wt *floorWaiter[T]) {
	if wt.prev == nil {
		p.first = wt.next
	} else {
		wt.prev.next = wt.next
	}
	if wt.next == nil {
		p.last = wt.prev
	} else {
		wt.next.prev = wt.prev
	}
	wt.prev, wt.next, wt.queued = nil, nil, false
}

// floorRunner drives a floor of func() jobs as the crew contender drives
// crew's typed pool.
type floorRunner struct{ p *floorPool[func()] }

func startFloor(workers int) runner {
	return floorRunner{newFloor(workers, func(_ context.Context, job func()) error {
		job()
		return nil
	})}
}

func (r floorRunner) submit(job func()) {
	if err := r.p.Submit(context.Background(), job); err != nil {
		panic(err) // cannot happen: the context never ends
	}
}

func (r floorRunner) wait() { r.p.Wait() }
