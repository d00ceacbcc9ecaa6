package crew

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sourcegraph/conc/panics"
)

// ErrStopped is returned by Tell when the actor has stopped, and is the
// reason of the dead letters it leaves queued when it stops.
var ErrStopped = errors.New("crew: actor stopped")

// A Ref is a handle on an actor: one goroutine that drains one mailbox,
// calling the actor's handler for one message at a time. Create one with
// Spawn. A Ref is safe for concurrent use; its methods never block, but for
// Tell on a Backpressure mailbox.
//
// The actor's goroutine waits in a select on a signal channel of capacity 1,
// which Tell pokes without blocking, and on its context: a message costs no
// goroutine and no allocation beyond what the mailbox does.
type Ref[T any] struct {
	routeState // what a router reads: load, busy, stopped, full

	dead atomic.Int64

	name    string
	mb      Mailbox[T]
	input   <-chan T
	handle  func(context.Context, T) error
	sink    func(DeadLetter)
	onError func(error)

	signal chan struct{} // cap 1: "the mailbox gained a message, or Stop"
	done   chan struct{} // closed when the goroutine has exited
}

// routeState is the part of a Ref that strategies read, free of T.
type routeState struct {
	// load is queued + in flight: Tell counts a message in before it enqueues
	// it and the actor counts it out after its handler returns, so the actor
	// never looks idle while a message is between Dequeue and the handler.
	// It is the score SmallestMailbox reads, one word per routee, so it sits
	// on a cache line of its own.
	load atomic.Int64
	_    [56]byte

	busy    atomic.Bool // handling a message, or about to take one
	stopped atomic.Bool // stopping or stopped: takes no more messages
	full    func() bool // the mailbox's Full, if it is bounded; set by spawn
}

// Spawn starts an actor that calls handle for each message told to it, one
// at a time, in its own goroutine, and returns its Ref. handle receives ctx,
// the actor's context: when ctx is done the actor stops, as after Stop.
//
// An error returned by handle, and a panic raised by it, are reported to the
// error handler (WithErrorHandler; by default a sparse log) and the actor
// goes on with the next message: a panic never kills the actor or the
// process. A panic is recovered with its stack by conc's panics package and
// reported as an error that errors.As unwraps to *panics.ErrRecovered.
//
// Options: WithMailbox (default NewUnbounded), WithInput, WithDeadLetters,
// WithErrorHandler, WithName. Spawn panics if ctx or handle is nil, or if an
// option's type does not match T.
func Spawn[T any](ctx context.Context, handle func(context.Context, T) error, opts ...Option) *Ref[T] {
	o := collect(opts)
	return spawn(ctx, handle, &o, o.name)
}

// spawn starts an actor named name with the collected options.
func spawn[T any](ctx context.Context, handle func(context.Context, T) error, o *options, name string) *Ref[T] {
	if ctx == nil {
		panic("crew: Spawn: nil context")
	}
	if handle == nil {
		panic("crew: Spawn: nil handler")
	}
	r := &Ref[T]{
		name:    name,
		handle:  handle,
		sink:    o.deadLetters,
		onError: o.onError,
		signal:  make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if r.sink == nil {
		r.sink = logDeadLetter
	}
	switch f := o.newMailbox.(type) {
	case nil:
		r.mb = NewUnbounded[T]()
	case func() Mailbox[T]:
		r.mb = f()
	default:
		panic(fmt.Sprintf("crew: WithMailbox: a %T does not make mailboxes for %T messages", f, *new(T)))
	}
	switch in := o.input.(type) {
	case nil:
	case <-chan T:
		r.input = in
	default:
		panic(fmt.Sprintf("crew: WithInput: a %T does not carry %T messages", in, *new(T)))
	}
	if f, ok := r.mb.(interface{ Full() bool }); ok {
		r.full = f.Full
	}
	if d, ok := r.mb.(Dropper[T]); ok {
		d.OnDrop(func(msg T, reason error) {
			r.load.Add(-1) // the evicted message left the mailbox
			r.deadLetter(msg, reason)
		})
	}
	go r.run(ctx) // ends when ctx is done, Stop is called or input closes
	return r
}

// Tell queues msg for the actor. It returns nil once the mailbox accepted
// msg. Otherwise the message becomes a dead letter and Tell returns why:
// ErrStopped after the actor stopped, ErrMailboxFull (or an error wrapping
// it) from a full bounded mailbox, or ctx.Err() if a Backpressure mailbox
// stayed full until ctx ended. ctx only bounds that wait; the handler gets
// the actor's context.
func (r *Ref[T]) Tell(ctx context.Context, msg T) error {
	err := r.tell(ctx, msg)
	if err != nil {
		r.deadLetter(msg, err)
	}
	return err
}

// tell is Tell without the dead letter, so a router can try another routee.
func (r *Ref[T]) tell(ctx context.Context, msg T) error {
	if r.stopped.Load() {
		return ErrStopped
	}
	r.load.Add(1)
	if err := r.mb.Enqueue(ctx, msg); err != nil {
		r.load.Add(-1)
		if errors.Is(err, ErrMailboxClosed) {
			err = ErrStopped
		}
		return err
	}
	r.wake()
	return nil
}

func (r *Ref[T]) deadLetter(msg T, reason error) {
	r.dead.Add(1)
	r.sink(DeadLetter{Message: msg, Target: r.name, Reason: reason})
}

// run is the actor's goroutine.
func (r *Ref[T]) run(ctx context.Context) {
	defer close(r.done)
	reason := r.loop(ctx)
	r.stopped.Store(true)
	rest := r.mb.Close()
	r.load.Add(-int64(len(rest)))
	for _, msg := range rest {
		r.deadLetter(msg, reason)
	}
}

// loop handles messages until the actor must stop, and returns why.
func (r *Ref[T]) loop(ctx context.Context) error {
	input := r.input
	done := ctx.Done() // nil for a context that never ends
	for {
		// Drain the mailbox, checking between messages for Stop (an atomic
		// load) and the context (a non-blocking receive, skipped when done
		// is nil): a select over both would cost more than a message. busy
		// is set before Dequeue and stays set while messages keep coming,
		// so a message is never out of the mailbox while busy reads false.
		for {
			if r.stopped.Load() {
				return ErrStopped
			}
			if done != nil {
				select {
				case <-done:
					return context.Cause(ctx)
				default:
				}
			}
			if !r.busy.Load() {
				r.busy.Store(true)
			}
			msg, ok := r.mb.Dequeue()
			if !ok {
				r.busy.Store(false)
				break
			}
			r.invoke(ctx, msg)
			r.load.Add(-1)
		}
		if input == nil && r.input != nil {
			return ErrStopped // the input channel closed and the mailbox is drained
		}
		select {
		case <-r.signal: // a message, or Stop: the loop above tells which
		case msg, ok := <-input:
			if !ok {
				input = nil // drain the mailbox, then stop
				continue
			}
			r.busy.Store(true)
			r.invoke(ctx, msg)
			r.busy.Store(false)
		case <-done:
			return context.Cause(ctx)
		}
	}
}

// invoke calls the handler and reports what went wrong.
func (r *Ref[T]) invoke(ctx context.Context, msg T) {
	if err := r.call(ctx, msg); err != nil {
		err = fmt.Errorf("crew: actor %q: %w", r.name, err)
		if r.onError != nil {
			r.onError(err)
		} else {
			logError(err)
		}
	}
}

// call calls the handler, turning a panic into an error that carries the
// panic value and its stack (conc's panics.Recovered). panics.Try would
// build a closure around msg that escapes to the heap: one allocation per
// message; a deferred recover here costs none.
func (r *Ref[T]) call(ctx context.Context, msg T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p := panics.NewRecovered(1, v)
			err = p.AsError()
		}
	}()
	return r.handle(ctx, msg)
}

// Len reports the number of messages waiting for the actor: queued in its
// mailbox (and buffered in its input channel), not counting the one being
// handled. It is O(1).
func (r *Ref[T]) Len() int {
	return r.mb.Len() + len(r.input)
}

// Busy reports whether the actor is handling a message right now (or is
// taking one from its mailbox).
func (r *Ref[T]) Busy() bool { return r.busy.Load() }

// Name reports the actor's name (see WithName).
func (r *Ref[T]) Name() string { return r.name }

// Stop asks the actor to stop: it finishes the message it is handling, if
// any, then exits; the messages still queued become dead letters with reason
// ErrStopped, and later Tells return ErrStopped. Stop does not wait: receive
// from Done for that. It is safe to call more than once, and from the
// actor's own handler.
func (r *Ref[T]) Stop() {
	r.stopped.Store(true)
	r.wake()
}

// wake pokes the actor's signal without blocking; a pending poke suffices.
func (r *Ref[T]) wake() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// Done returns a channel that is closed once the actor's goroutine has
// exited and its leftover messages have gone to the dead letters.
func (r *Ref[T]) Done() <-chan struct{} { return r.done }

// Stopped reports whether the actor has stopped or is stopping, so that it
// takes no more messages.
func (r *Ref[T]) Stopped() bool { return r.stopped.Load() }

// Full reports whether the actor's mailbox is bounded and at capacity.
func (r *Ref[T]) Full() bool { return r.full != nil && r.full() }

// state gives a Router the routee's atomics, so that strategies read them
// directly rather than through Len and Busy.
func (r *Ref[T]) state() *routeState { return &r.routeState }

// DeadLetters reports how many of this actor's messages became dead letters.
func (r *Ref[T]) DeadLetters() int64 { return r.dead.Load() }
