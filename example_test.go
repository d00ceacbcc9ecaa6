package crew_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/crewlib/crew"
)

// A consumer drains its mailbox and waits on a signal channel when it finds
// it empty; producers poke the signal after each Enqueue without blocking.
// This is how an actor is woken.
func ExampleNewUnbounded() {
	ctx := context.Background()
	mb := crew.NewUnbounded[string]()
	signal := make(chan struct{}, 1)
	done := make(chan struct{})

	go func() { // the consumer; it ends after "stop"
		defer close(done)
		for {
			msg, ok := mb.Dequeue()
			if !ok {
				<-signal
				continue
			}
			fmt.Println(msg)
			if msg == "stop" {
				return
			}
		}
	}()
	for _, msg := range []string{"hello", "world", "stop"} {
		_ = mb.Enqueue(ctx, msg)
		select {
		case signal <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	<-done
	// Output:
	// hello
	// world
	// stop
}

// A DropOldest mailbox keeps the latest messages and hands each one it
// evicts to the drop hook, where an actor would record a dead letter.
func ExampleBounded_OnDrop() {
	ctx := context.Background()
	readings := crew.NewBounded[int](3, crew.DropOldest)
	readings.OnDrop(func(v int, reason error) {
		fmt.Println("evicted", v, "-", reason)
	})
	for v := range 5 {
		_ = readings.Enqueue(ctx, v)
	}
	fmt.Println("kept", readings.Close(), "dropped", readings.Dropped())
	// Output:
	// evicted 0 - crew: mailbox full: oldest message evicted
	// evicted 1 - crew: mailbox full: oldest message evicted
	// kept [2 3 4] dropped 2
}

// Each overflow policy answers a full mailbox differently; the caller keeps
// any message that was not accepted.
func ExampleNewBounded() {
	canceled, cancel := context.WithCancel(context.Background())
	cancel() // so that Backpressure returns at once instead of waiting
	for _, policy := range []crew.Overflow{crew.Fail, crew.DropNewest, crew.Backpressure} {
		mb := crew.NewBounded[string](1, policy)
		_ = mb.Enqueue(canceled, "first")
		err := mb.Enqueue(canceled, "second")
		fmt.Printf("%-12v %v (full: %t)\n", policy, err, errors.Is(err, crew.ErrMailboxFull))
	}
	// Output:
	// Fail         crew: mailbox full (full: true)
	// DropNewest   crew: mailbox full: newest message dropped (full: true)
	// Backpressure context canceled (full: false)
}

// A Fair mailbox serves one message per tenant per turn, so the chatty
// tenant cannot starve the others.
func ExampleNewFair() {
	type request struct{ tenant, id string }
	ctx := context.Background()
	mb := crew.NewFair(func(r request) string { return r.tenant })
	for _, r := range []request{{"acme", "a1"}, {"acme", "a2"}, {"acme", "a3"}, {"bolt", "b1"}, {"cite", "c1"}} {
		_ = mb.Enqueue(ctx, r)
	}
	for r, ok := mb.Dequeue(); ok; r, ok = mb.Dequeue() {
		fmt.Print(r.id, " ")
	}
	fmt.Println()
	// Output: a1 b1 c1 a2 a3
}

// A stable priority mailbox hands out urgent work first and keeps arrival
// order among equals.
func ExampleNewStablePriority() {
	type task struct {
		name   string
		urgent bool
	}
	ctx := context.Background()
	mb := crew.NewStablePriority(func(a, b task) bool { return a.urgent && !b.urgent })
	for _, t := range []task{{"report", false}, {"page", true}, {"backup", false}, {"alert", true}} {
		_ = mb.Enqueue(ctx, t)
	}
	for t, ok := mb.Dequeue(); ok; t, ok = mb.Dequeue() {
		fmt.Print(t.name, " ")
	}
	fmt.Println()
	// Output: page alert report backup
}
