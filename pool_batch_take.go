package crew

import (
	"context"

	"github.com/sourcegraph/conc/panics"
)

// A batch's side of the dispatcher: counting its jobs in and out, holding
// back those over its limit, and recording its errors.

// free reports whether a job of the batch may be accepted and dispatched
// at once: the batch is open, its context not seen done, and under its
// limit. d.mu is held.
func (b *Batch[T]) free() bool {
	return !b.closed && !b.stopped && (b.limit == 0 || b.admitted() < b.limit)
}

// admitted reports the batch's jobs dispatched or in the pool's backlog:
// those held and not over its limit, at most limit. d.mu is held.
func (b *Batch[T]) admitted() int {
	if b.queue == nil {
		return b.held()
	}
	return b.held() - b.queue.n
}

// held reports the jobs accepted and not ended. d.mu is held.
func (b *Batch[T]) held() int { return b.accepted - int(b.handled+b.canceled+b.dropped) }

// accept counts in a job of the batch, and reports whether it may be
// dispatched now (the batch is under its limit); if not, the caller queues
// it. d.mu is held.
func (b *Batch[T]) accept() bool {
	ok := b.limit == 0 || b.admitted() < b.limit
	b.accepted++
	return ok
}

// done reports whether the batch's context is done, as a worker taking one
// of its jobs from the backlog sees it: once it has seen that, it skips
// every later one (stopped). d.mu is held.
func (b *Batch[T]) done() bool {
	if !b.stopped && b.jobCtx.Context.Err() != nil { // b.ctx, read from the workers' line
		b.stopped = true
	}
	return b.stopped
}

// release hands Wait its answer once no job of the batch is left, after
// the caller counted one out (handled, canceled or dropped). d.mu is held.
func (b *Batch[T]) release(reply func(*waiter[task[T]])) {
	if b.waiter != nil && b.held() == 0 {
		reply(b.waiter)
		b.waiter = nil
	}
}

// endBatch counts out a job of batch b that a worker took and ended (ran,
// or skipped), and moves the oldest of b's jobs over its limit, if any, to
// the backlog, in its submission order. d.mu is held.
func (d *dispatcher[T]) endBatch(b *Batch[T], skipped bool, a *after[T]) {
	if skipped {
		b.canceled++
		d.skipped++
	} else {
		b.handled++
	}
	if b.queue != nil && b.queue.n > 0 {
		e, _ := b.queue.pop() // takes the place of the job that ended
		d.overLimit--
		d.ready.push(e)
	}
	b.release(a.reply)
}

// record keeps err for Wait and, if it is the first, cancels the batch's
// context with it, after which no dispatch runs a job of the batch.
func (b *Batch[T]) record(err error) {
	if b.errs.add(err, b.ctx) { // as the pool's dispatcher.cancel does
		d := &b.pool.d
		d.mu.Lock()
		b.stopped = true
		b.cancel(err)
		blocked := d.waiting.extract(b.owns)
		d.mu.Unlock()
		refuse(blocked, b.ctx.Err())
	}
}

// owns reports whether a blocked Submit is the batch's.
func (b *Batch[T]) owns(w *waiter[task[T]]) bool { return w.msg.b == b }

// runInline runs a job that one of the batch's jobs submitted while the
// pool was full, on the submitting goroutine; it was never counted in.
func (b *Batch[T]) runInline(job T) {
	defer b.finishInline()
	if err := b.pool.handle(&b.jobCtx, job); err != nil {
		b.fail(err)
	}
}

func (b *Batch[T]) finishInline() {
	if v := recover(); v != nil {
		b.panicked.Add(1)
		b.fail(panicked("job", panics.NewRecovered(1, v)))
	}
	b.inline.Add(1)
}

func (b *Batch[T]) fail(err error) {
	b.failed.Add(1)
	b.record(err)
}

// A jobContext is a batch's context as its jobs receive it, marked as the
// batch's, as context.WithValue(ctx, workerKey{}, batch) would make it,
// without an allocation of its own: it lives in the Batch.
type jobContext struct {
	context.Context
	batch any
}

func (c *jobContext) Value(key any) any {
	if key == (workerKey{}) {
		return c.batch
	}
	return c.Context.Value(key)
}

// A batchList is a pool's list of the batches not waited for yet, linked
// through them. The dispatcher's lock guards it.
type batchList[T any] struct{ first *Batch[T] }

func (l *batchList[T]) push(b *Batch[T]) {
	b.next = l.first
	if l.first != nil {
		l.first.prev = b
	}
	l.first = b
}

func (l *batchList[T]) remove(b *Batch[T]) {
	if b.prev == nil {
		l.first = b.next
	} else {
		b.prev.next = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
}

// queuedOf reports the jobs of batch b not taken by a worker yet: in the
// backlog, over its limit, or handed to a worker. d.mu is held.
func (d *dispatcher[T]) queuedOf(b *Batch[T]) int {
	n := 0
	if b.queue != nil {
		n = b.queue.n
	}
	for i := range d.batched.n {
		if d.batched.buf[(d.batched.head+i)%len(d.batched.buf)].msg.b == b {
			n++
		}
	}
	for _, e := range d.ready.h {
		if e.msg.b == b {
			n++
		}
	}
	for _, w := range d.workers {
		for i := range w.own.n {
			if w.own.buf[(w.own.head+i)%len(w.own.buf)].b == b {
				n++
			}
		}
	}
	return n
}
