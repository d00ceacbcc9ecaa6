package crew

import "context"

// Ending: Wait, the pool's errors and its first error's cancellation,
// and the dead letters of jobs that will never run.

// Wait closes the pool to new jobs, waits until every accepted job has run
// (or been skipped, once the pool's context is done), stops the workers and
// waits for their goroutines to exit, cancels the pool's context, and
// returns the first error a job returned or raised (a panic, as an error
// that errors.As unwraps to *panics.ErrRecovered, with its stack; a
// runtime.Goexit, as an error that says so). With WithAllErrors it returns
// every error, joined. If jobs were skipped because the pool's context
// ended and none failed, it returns the context's cause, so that a pool
// never reports success for jobs its context kept from running. The jobs a
// DropOldest backlog evicts are dead letters, counted in Stats.Dropped, not
// errors.
//
// Wait may be called more than once, from any goroutine but the pool's own
// jobs (which would wait for themselves); every call returns the same.
func (p *Pool[T]) Wait() error {
	if p.refused == nil {
		p.unmade("Pool.Wait")
	}
	p.waitOnce.Do(func() {
		<-p.close()
		if !p.unwatch() {
			<-p.refused // the context ended: refuseAll ran, or runs
		}
		p.resizing.Lock() // Resize does nothing once the pool is closed: the workers stay as they are
		defer p.resizing.Unlock()
		for _, w := range p.d.stopping() {
			close(w.jobs) // it exits once it finds its channel closed; a dead one has
		}
		p.goroutines.Wait()
		p.result = p.outcome()
		p.closeMetrics()
		p.cancel(nil)
	})
	return p.result
}

// close closes the pool to new jobs, refusing the blocked Submits, and
// returns a channel closed once no job is held.
func (p *Pool[T]) close() <-chan struct{} {
	list, drained := p.d.close(make(chan struct{}))
	refuse(list, ErrPoolClosed) // their jobs are new: refuse them
	return drained
}

// refuseAll answers every blocked Submit with the pool context's error,
// once that context is done; context.AfterFunc runs it.
func (p *Pool[T]) refuseAll() {
	defer close(p.refused)
	refuse(p.d.stopAll(context.Cause(p.ctx)), p.ctx.Err())
}

// outcome is what Wait returns.
func (p *Pool[T]) outcome() error {
	if err := p.errs.result(); err != nil {
		return err
	}
	if p.d.skippedOwn() {
		return context.Cause(p.ctx)
	}
	return nil
}

// record keeps err, a job's of the pool, for Wait and, if it is the first
// and the pool cancels on error, cancels the pool's context with it, once
// dispatching stopped.
func (p *Pool[T]) record(err error) {
	if p.errs.add(err, p.ctx) && p.cancelOnError {
		p.stop(err)
	}
}

// stop stops dispatching, then cancels the pool's context with cause: no
// dispatch runs a job after a job could see the context end. The blocked
// Submits are refused with the context's error.
func (p *Pool[T]) stop(cause error) {
	list := p.d.stopAll(cause)
	p.cancel(cause)
	refuse(list, p.ctx.Err())
}

// fail records the error of a job of batch b, or of the pool if b is nil.
func (p *Pool[T]) fail(err error, b *Batch[T]) {
	if p.onError != nil {
		p.onError(err)
	}
	p.failed.Add(1)
	panicked := isPanic(err)
	if panicked {
		p.panicked.Add(1)
	}
	p.meterFailure(panicked)
	if b != nil {
		b.record(err)
		return
	}
	p.record(err)
}

// deadLetters delivers the dead letters of jobs that will never run, left
// with target, then counts them out.
func (p *Pool[T]) deadLetters(tasks []task[T], target string, reason error) {
	if len(tasks) == 0 {
		return
	}
	defer func() { // also if a sink calls runtime.Goexit: its jobs are gone either way
		var now int64
		if p.rec != nil {
			p.rec.Add(EventDropped, len(tasks))
			now = p.clock()
		}
		var a after[T]
		p.d.lost(tasks, now, &a)
		a.run(p)
	}()
	for _, t := range tasks {
		sink := p.sink
		if b := t.f.batch; b != nil {
			sink = b.sink
		}
		d := DeadLetter{Message: t.job, Target: target, Reason: reason}
		if sink != nil {
			sink(d)
		} else {
			logDeadLetter(d)
		}
	}
}

// evictions delivers the dead letters of the jobs the backlog mailbox
// evicted.
func (p *Pool[T]) evictions() {
	jobs := p.d.takeEvicted()
	tasks := make([]task[T], len(jobs))
	for i, job := range jobs {
		tasks[i] = task[T]{job: job, f: &p.d.own}
	}
	p.deadLetters(tasks, p.name, ErrEvicted)
}
