package crew_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/conc/panics"

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

// An actor handles its messages one at a time on its own goroutine; Stop
// lets it finish the current one, and Done says when it has exited.
func ExampleSpawn() {
	ctx := context.Background()
	greeted := make(chan struct{})
	greeter := crew.Spawn(ctx, func(_ context.Context, name string) error {
		fmt.Println("hello,", name)
		if name == "grace" {
			close(greeted)
		}
		return nil
	}, crew.WithName("greeter"))
	_ = greeter.Tell(ctx, "ada")
	_ = greeter.Tell(ctx, "grace")
	<-greeted
	greeter.Stop()
	<-greeter.Done()
	fmt.Println(greeter.Tell(ctx, "late"))
	// Output:
	// hello, ada
	// hello, grace
	// crew: actor stopped
}

// A router spreads messages over actors you spawned; SmallestMailbox sends
// each one to the least loaded actor, and Broadcast sends one to all.
func ExampleNewRouter() {
	ctx := context.Background()
	var total atomic.Int64
	var handled sync.WaitGroup
	add := func(_ context.Context, n int) error {
		total.Add(int64(n))
		handled.Done()
		return nil
	}
	workers := []*crew.Ref[int]{crew.Spawn(ctx, add), crew.Spawn(ctx, add), crew.Spawn(ctx, add)}
	router := crew.NewRouter(crew.SmallestMailbox(), workers...)
	handled.Add(100 + len(workers))
	for n := 1; n <= 100; n++ {
		_ = router.Tell(ctx, n)
	}
	_ = router.Broadcast(ctx, 1000) // each of the three workers adds 1000
	handled.Wait()
	fmt.Println("total:", total.Load())

	router.Stop()
	for _, w := range workers {
		<-w.Done()
	}
	fmt.Println(router.Tell(ctx, 1))
	// Output:
	// total: 8050
	// crew: router has no live routee
}

// A panic in a handler is recovered with its stack and reported; the actor
// goes on with its next message.
func ExampleWithErrorHandler() {
	ctx := context.Background()
	done := make(chan struct{})
	ref := crew.Spawn(ctx, func(_ context.Context, n int) error {
		if n == 0 {
			panic("division by zero")
		}
		fmt.Println(100 / n)
		if n == 4 {
			close(done)
		}
		return nil
	}, crew.WithErrorHandler(func(err error) {
		var p *panics.ErrRecovered
		if errors.As(err, &p) {
			fmt.Println("recovered:", p.Value)
		}
	}))
	for _, n := range []int{5, 0, 4} {
		_ = ref.Tell(ctx, n)
	}
	<-done
	ref.Stop()
	<-ref.Done()
	// Output:
	// 20
	// recovered: division by zero
	// 25
}

// Forward feeds an actor, or a router, from a channel you already have.
func ExampleForward() {
	ctx := context.Background()
	lines := make(chan string)
	printed := make(chan struct{})
	printer := crew.Spawn(ctx, func(_ context.Context, line string) error {
		fmt.Println(line)
		if line == "bye" {
			close(printed)
		}
		return nil
	})
	go func() { // the producer you already had
		defer close(lines)
		for _, l := range []string{"hello", "bye"} {
			lines <- l
		}
	}()
	if err := crew.Forward(ctx, lines, printer); err != nil {
		fmt.Println(err)
	}
	<-printed
	printer.Stop()
	<-printer.Done()
	// Output:
	// hello
	// bye
}
