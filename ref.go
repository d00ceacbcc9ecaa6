package crew

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
)

// A Ref is a handle on an actor: one goroutine that drains one mailbox,
// calling the actor's handler for one message at a time. Create one with
// Spawn; every method of a zero Ref, or of a nil *Ref, panics. A Ref is
// safe for concurrent use. Its methods never block, but for
// Tell on a mailbox that blocks when full (Backpressure, Chan), and Tell and
// Stop, which call the dead-letter sink.
//
// The actor's goroutine waits on a signal channel of capacity 1, which Tell
// pokes without blocking, as do Stop and the end of its context: a message
// costs no goroutine and no allocation beyond what the mailbox does. Tell
// pokes it only while the actor is idle, if its mailbox is one of this
// package's (but Chan, Fair and the priority mailboxes): a busy actor
// looks at its mailbox again before it parks, so that producers telling a
// busy actor leave the channel alone. Every message Tell
// accepted is handled, or becomes a dead letter once the actor stops, and
// what a goroutine did before its Tell happens before the handler's call
// for that message.
type Ref[T any] struct {
	routeState // what a router reads: busy, stopped, the depth, full

	dead atomic.Int64

	name    string
	mb      Mailbox[T]
	handle  func(context.Context, T) error
	sink    func(DeadLetter) // WithDeadLetters, or nil: logged (see sendDeadLetter)
	onError func(error)      // WithErrorHandler, or nil: logError
	deadLog sparse           // the dead letters logged without a sink
	errLog  sparse           // the errors logged without an error handler
	crash   bool             // WithoutPanicRecovery: a handler's panic is not recovered
	rec     Recorder         // WithMetrics: the actor's, or its router's; or nil
	ownRec  bool             // rec is the actor's own: it closes it as it ends

	reporting bool // the actor's goroutine's: onError runs, reporting a failure (see exited)
	lazy      bool // the mailbox's Len is an atomic count: Tell wakes the actor only when idle (see queued)

	signal   chan struct{} // cap 1: "the mailbox gained a message, or it stopped"
	done     chan struct{} // closed by the second of shutdown and the goroutine's exit
	ended    atomic.Int32  // how many of those two have finished
	shut     atomic.Bool   // shutdown ran: the mailbox is closed, the loop ends
	draining atomic.Bool   // Drain: the loop ends, with shutdown, once the mailbox is empty

	watchMu  sync.Mutex // guards watchers and finished
	watchers []func()   // called once done is closed (whenDone)
	finished bool       // done is closed
}

// routeState is the part of a Ref that strategies read, free of T.
//
// A routee's score is its mailbox's depth plus 1 while busy, read in that
// order: the actor sets busy before it dequeues and clears it only once
// Dequeue finds nothing, so a reader that saw the message gone from the
// mailbox then sees busy, and the actor never looks idle while a message is
// between Dequeue and the handler. Neither Tell nor the actor writes a word
// of its own per message for it: the mailbox's counters already move.
type routeState struct {
	busy    atomic.Bool // handling a message, or about to take one
	stopped atomic.Bool // stopping, draining or stopped: takes no more messages

	// The mailbox's depth: the two counters of an Unbounded or a Bounded,
	// else its Len (a Segmented's count carries its closed bit). Set by
	// spawn.
	in, out *atomic.Uint64
	length  func() int

	full func() bool // the mailbox's Full, if it is bounded; set by spawn
}

// score is the actor's queued messages, plus 1 while it is busy, or
// unknownScore if its mailbox's Len is negative. Read from the counters
// without a lock, the depth may overstate by the messages that went in and
// out while it was read, and reads capacity-1 for a moment while a
// DropOldest Enqueue replaces a message; it never reads a queued message
// as gone.
func (rs *routeState) score() int {
	var n int
	if rs.out != nil {
		out := rs.out.Load() // out before in: in - out is then never too low
		n = int(rs.in.Load() - out)
	} else if n = rs.length(); n < 0 {
		return unknownScore
	}
	if rs.busy.Load() {
		n++
	}
	return n
}

// counted is what Unbounded and Bounded have beside Mailbox: the
// two counters their Len subtracts, which a router reads without a call.
type counted interface {
	counters() (in, out *atomic.Uint64)
}

// Spawn starts an actor that calls handle for each message told to it, one
// at a time, in its own goroutine, and returns its Ref. handle receives ctx,
// the actor's context: when ctx is done the actor stops, as after Stop, with
// context.Cause(ctx) as the reason of its dead letters.
//
// An error returned by handle, and a panic raised by it, are reported to the
// error handler (WithErrorHandler; by default a sparse log) and the actor
// goes on with the next message: a panic never kills the actor or the
// process. A panic is recovered with its stack by conc's panics package and
// reported as an error that errors.As unwraps to *panics.ErrRecovered. A
// runtime.Goexit in handle (t.FailNow, in a test's handler) never stops
// the actor either: it is reported as an error that errors.Is matches
// with ErrGoexit, and a new goroutine goes on with the next message
// (EventReplaced, with WithMetrics).
//
// Options: WithMailbox (default NewUnbounded), WithDeadLetters,
// WithErrorHandler, WithoutPanicRecovery, WithMetrics, WithName (default
// "actor-1", "actor-2", ...). Spawn
// panics if ctx or handle is nil, or if WithMailbox's type does not match T.
// To feed an actor from a channel you already have, see Forward.
func Spawn[T any](ctx context.Context, handle func(context.Context, T) error, opts ...Option) *Ref[T] {
	o := collect(opts)
	o.only("Spawn", actorOpts)
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
	if name == "" {
		name = "actor-" + strconv.FormatInt(actorSeq.Add(1), 10)
	}
	r := &Ref[T]{
		name:    name,
		handle:  handle,
		sink:    o.deadLetters,
		onError: o.onError,
		crash:   o.noRecovery,
		signal:  make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	switch f := o.newMailbox.(type) {
	case nil:
		r.mb = NewUnbounded[T]()
	case func() Mailbox[T]:
		r.mb = made(f())
	default:
		panic(fmt.Sprintf("crew: WithMailbox: a %T does not make mailboxes for %T messages", f, *new(T)))
	}
	switch r.mb.(type) {
	case *Unbounded[T], *Bounded[T], *routeeBox[T]: // not a mailbox of the user's that embeds one: its Len is its own
		r.in, r.out = r.mb.(counted).counters()
		r.lazy = true
	case *Segmented[T]:
		r.length = r.mb.Len
		r.lazy = true
	default:
		r.length = r.mb.Len
	}
	if f, ok := r.mb.(interface{ Full() bool }); ok {
		r.full = f.Full
	}
	if d, ok := r.mb.(Dropper[T]); ok {
		d.OnDrop(func(msg T, reason error) { r.deadLetter(msg, reason) })
	}
	switch {
	case o.recorder != nil:
		r.rec = o.recorder
	case o.metrics != nil:
		r.rec = o.metrics.Track(Source{Kind: SourceActor, Name: name, Gauges: r.gauges})
		r.ownRec = r.rec != nil
	}
	go r.run(ctx) // ends once the actor stops: Stop, or ctx done; a runtime.Goexit starts another in its place
	return r
}

// made returns the mailbox a WithMailbox factory made, and panics if it is
// nil, or a nil pointer (or map, ...) of a mailbox type, whose methods
// would panic on the actor's goroutine, where no caller can recover.
func made[T any](mb Mailbox[T]) Mailbox[T] {
	if mb == nil {
		panic("crew: WithMailbox: the factory returned a nil mailbox")
	}
	switch v := reflect.ValueOf(mb); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
		if v.IsNil() {
			panic(fmt.Sprintf("crew: WithMailbox: the factory returned a nil %T", mb))
		}
	}
	return mb
}

// actorSeq numbers the actors spawned without a name.
var actorSeq atomic.Int64

// Tell queues msg for the actor. It returns nil once the mailbox accepted
// msg. Otherwise it returns why: ErrStopped once the actor stopped,
// ErrMailboxFull (or an error wrapping it) from a full bounded mailbox, or
// ctx.Err() if a Backpressure mailbox stayed full until ctx ended; and it
// also records the message as a dead letter, so that the sink sees every
// refusal (a caller that retries will find its first try there). ctx only
// bounds the wait for room; the handler gets the actor's context. Tell
// panics if ctx is nil.
func (r *Ref[T]) Tell(ctx context.Context, msg T) error {
	if r == nil || r.done == nil {
		r.unmade("Tell")
	}
	if ctx == nil {
		panic("crew: Tell: nil context")
	}
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
	err := r.queued(r.mb.Enqueue(ctx, msg))
	if err == nil && r.rec != nil {
		r.rec.Add(EventSubmitted, 1)
	}
	return err
}

// queued ends a tell whose Enqueue returned err: it wakes the actor for
// the message the mailbox accepted, or returns why it did not, ErrStopped
// for a closed mailbox.
//
// An actor that is busy needs no wake-up: it dequeues again before it
// parks. Tell then reads busy rather than the channel, whose lock the
// first Tell after each wake-up would take (a signal already pending
// costs only the channel's lock-free full check, as it did on nearly
// every Tell of a busy actor before). No wake-up is lost: the actor clears busy and then reads its mailbox's Len
// before it parks (see loop), and Tell stores the message (an atomic
// count the Len reads) and then reads busy; the atomics being
// sequentially consistent, either the actor sees the message or Tell sees
// busy cleared and wakes it. Only mailboxes whose Len reads that count
// (lazy) are trusted with this; any other is signalled every time.
func (r *Ref[T]) queued(err error) error {
	if err != nil {
		if errors.Is(err, ErrMailboxClosed) {
			err = ErrStopped
		}
		return err
	}
	if !r.lazy || !r.busy.Load() {
		r.wake()
	}
	return nil
}

// deadLetter counts msg as one of the actor's dead letters and delivers it
// to the sink.
func (r *Ref[T]) deadLetter(msg T, reason error) {
	r.dead.Add(1)
	if r.rec != nil {
		r.rec.Add(EventDropped, 1)
	}
	sendDeadLetter(r.sink, &r.deadLog, DeadLetter{Message: msg, Target: r.name, Reason: reason})
}

// Len reports the number of messages queued in the actor's mailbox, not
// counting the one being handled. It is O(1).
func (r *Ref[T]) Len() int {
	if r == nil || r.done == nil {
		r.unmade("Len")
	}
	return r.mb.Len()
}

// Busy reports whether the actor is handling a message right now, or is
// checking its mailbox for the next one.
func (r *Ref[T]) Busy() bool {
	if r == nil || r.done == nil {
		r.unmade("Busy")
	}
	return r.busy.Load()
}

// Name reports the actor's name (see WithName).
func (r *Ref[T]) Name() string {
	if r == nil || r.done == nil {
		r.unmade("Name")
	}
	return r.name
}

// Full reports whether the actor's mailbox is bounded and at capacity.
func (r *Ref[T]) Full() bool {
	if r == nil || r.done == nil {
		r.unmade("Full")
	}
	return r.full != nil && r.full()
}

// unmade panics, naming the method: every method of a zero Ref does, for
// no goroutine drains it, and so does every method of a nil *Ref. The
// methods test r and r.done, which spawn sets, and call unmade only then,
// so that the test stays inline.
func (r *Ref[T]) unmade(method string) {
	if r == nil {
		panic("crew: Ref." + method + ": nil Ref: make one with Spawn (or a router's SpawnRouter)")
	}
	panic("crew: Ref." + method + ": the Ref was not made by Spawn (or a router's SpawnRouter): use it")
}

// state gives a Router the routee's atomics, so that strategies read them
// directly rather than through Len and Busy.
func (r *Ref[T]) state() *routeState { return &r.routeState }

// DeadLetters reports how many of this actor's messages became dead letters.
func (r *Ref[T]) DeadLetters() int64 {
	if r == nil || r.done == nil {
		r.unmade("DeadLetters")
	}
	return r.dead.Load()
}
