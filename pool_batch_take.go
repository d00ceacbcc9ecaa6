package crew

import (
	"context"

	"github.com/sourcegraph/conc/panics"
)

// A batch's side of the dispatcher: its state as the dispatcher reads it,
// counting its jobs out, and recording its errors. The methods that say
// so run under the pool's dispatcher lock.

// closed reports whether the batch's Wait began. d.mu is held.
func (b *Batch[T]) closed() bool { return b.drained != nil }

// held reports the batch's jobs accepted and not ended. d.mu is held.
func (b *Batch[T]) held() int { return b.flow.queued() + b.flow.running }

// seesDone reports whether the batch's context is done, as a dispatch of
// one of its jobs sees it: once one has seen it (stop), every later one
// skips. d.mu is held.
func (b *Batch[T]) seesDone() bool {
	if b.stop == nil && b.jobCtx.Err() != nil {
		b.stop = context.Cause(b.jobCtx.Context)
	}
	return b.stop != nil
}

// ctxErr is what a Submit of the batch gets once its context is done.
func (b *Batch[T]) ctxErr() error { return ctxErr(b.jobCtx.Context) }

// ended counts out a job of the batch that a worker ran, or skipped. d.mu
// is held.
func (b *Batch[T]) ended(skipped bool) {
	b.done.ended(skipped)
	b.release()
}

// lost counts out a job of the batch that became a dead letter when every
// worker died. d.mu is held.
func (b *Batch[T]) lost() {
	b.done.dropped++
	b.release()
}

// closedChan is a closed channel: a batch's drained when its Wait finds no
// job to wait for.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// release closes drained once Wait began and no job of the batch is held.
// d.mu is held.
func (b *Batch[T]) release() {
	if b.drained != nil && b.held() == 0 {
		select {
		case <-b.drained:
		default:
			close(b.drained)
		}
	}
}

// record keeps err for Wait and, if it is the first, cancels the batch's
// context with it, once no dispatch runs a job of the batch any more: its
// blocked Submits are refused.
func (b *Batch[T]) record(err error) {
	if !b.errs.add(err, b.jobCtx.Context) {
		return
	}
	d := &b.pool.d
	d.mu.Lock()
	if b.stop == nil {
		b.stop = err
	}
	blocked := d.extract(b)
	d.mu.Unlock()
	b.cancel(err)
	refuse(blocked, b.ctxErr())
}

// runInline runs a job that one of the batch's jobs submitted while the
// pool was full, on the submitting goroutine; it was never counted in.
func (b *Batch[T]) runInline(job T) {
	returned := false
	defer b.finishInline(&returned)
	if err := b.pool.handle(&b.jobCtx, job); err != nil {
		b.fail(err)
	}
	returned = true
}

// finishInline records the panic, or the runtime.Goexit (returned is
// false), of a job of the batch run inline, and counts it.
func (b *Batch[T]) finishInline(returned *bool) {
	var v any
	if !b.pool.noRecovery { // else a panic goes on, and crashes the process
		v = recover()
	}
	switch {
	case v != nil:
		b.fail(panicked("job", panics.NewRecovered(1, v)))
	case !*returned: // a Goexit (or, WithoutPanicRecovery, a panic on its way to crash the process)
		b.fail(&actorError{name: b.pool.name, err: errGoexit})
	}
	b.inline.Add(1)
}

// fail reports err, the failure of a job of the batch run inline, to the
// pool's error handler, if it has one, and records it.
func (b *Batch[T]) fail(err error) {
	p := b.pool
	if h := p.onError; h != nil {
		h(err)
	}
	if p.rec != nil {
		p.meterFailure(isPanic(err))
	}
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
type batchList[T any] struct {
	first *Batch[T]
	n     int
}

func (l *batchList[T]) push(b *Batch[T]) {
	b.next = l.first
	if l.first != nil {
		l.first.prev = b
	}
	l.first = b
	l.n++
}

// remove takes b off the list, if it is there, and reports whether it
// was.
func (l *batchList[T]) remove(b *Batch[T]) bool {
	if b.prev == nil && l.first != b {
		return false
	}
	if b.prev == nil {
		l.first = b.next
	} else {
		b.prev.next = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
	l.n--
	return true
}
