package crew_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
)

// Replacing an errgroup fan-out takes three changed lines. Before:
//
//	g, ctx := errgroup.WithContext(ctx)
//	g.SetLimit(8)
//	for _, page := range pages {
//		g.Go(func() error { return index(ctx, page) })
//	}
//	err := g.Wait()
//
// After: the same shape, with jobs that receive the group's context, a
// Submit that reports a canceled group, and a pool that sends each job to
// the least loaded of its 8 workers.
func Example_replaceErrgroup() {
	ctx := context.Background()
	pages := []string{"home", "about", "blog", "contact"}
	var words atomic.Int64
	index := func(ctx context.Context, page string) error {
		words.Add(int64(len(page)))
		return ctx.Err()
	}

	p, ctx := crew.WithContext(ctx, 8)
	for _, page := range pages {
		if err := p.Submit(ctx, func(ctx context.Context) error { return index(ctx, page) }); err != nil {
			break // the group failed (ctx is done), or ctx ended
		}
	}
	err := p.Wait()
	fmt.Println("indexed", words.Load(), "letters, error:", err)
	// Output: indexed 20 letters, error: <nil>
}

// WithContext cancels the group's context with the first error as its
// cause; Wait returns that error, and jobs still queued are not started.
func ExampleWithContext() {
	p, ctx := crew.WithContext(context.Background(), 2)
	errDisk := errors.New("disk full")
	_ = p.Submit(ctx, func(context.Context) error { return errDisk })
	_ = p.Submit(ctx, func(ctx context.Context) error {
		<-ctx.Done() // a long job notices the cancellation
		return ctx.Err()
	})
	fmt.Println("Wait:", p.Wait())
	fmt.Println("cause:", context.Cause(ctx))
	// Output:
	// Wait: disk full
	// cause: disk full
}

type task struct {
	priority int
	name     string
	hold     chan struct{} // keeps the worker busy while the example queues
}

// A typed pool takes any mailbox: here each worker runs its most urgent job
// first (a lower priority number).
func ExampleNewPool() {
	busy := make(chan struct{})
	p := crew.NewPool(1, func(_ context.Context, t task) error {
		if t.hold != nil {
			close(busy)
			<-t.hold // hold the only worker while the rest queue up
			return nil
		}
		fmt.Println(t.priority, t.name)
		return nil
	}, crew.WithMailbox(func() crew.Mailbox[task] {
		return crew.NewStablePriority(func(a, b task) bool { return a.priority < b.priority })
	}))
	ctx := context.Background()
	hold := make(chan struct{})
	_ = p.Submit(ctx, task{hold: hold})
	<-busy
	for _, t := range []task{
		{priority: 3, name: "reindex"},
		{priority: 1, name: "page the on-call"},
		{priority: 2, name: "send invoice"},
		{priority: 1, name: "restart web"},
	} {
		_ = p.Submit(ctx, t)
	}
	close(hold)
	if err := p.Wait(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1 page the on-call
	// 1 restart web
	// 2 send invoice
	// 3 reindex
}

type request struct {
	tenant, id string
	hold       chan struct{}
}

// A Fair mailbox serves tenants in turn, so one tenant's burst does not
// starve the others.
func ExampleNewPool_fair() {
	busy := make(chan struct{})
	p := crew.NewPool(1, func(_ context.Context, r request) error {
		if r.hold != nil {
			close(busy)
			<-r.hold
			return nil
		}
		fmt.Println(r.tenant, r.id)
		return nil
	}, crew.WithMailbox(func() crew.Mailbox[request] {
		return crew.NewFair(func(r request) string { return r.tenant })
	}))
	ctx := context.Background()
	hold := make(chan struct{})
	_ = p.Submit(ctx, request{hold: hold})
	<-busy
	for _, r := range []request{{"acme", "1", nil}, {"acme", "2", nil}, {"acme", "3", nil}, {"globex", "1", nil}, {"initech", "1", nil}} {
		_ = p.Submit(ctx, r)
	}
	close(hold)
	_ = p.Wait()
	// Output:
	// acme 1
	// globex 1
	// initech 1
	// acme 2
	// acme 3
}

// A pool holds a bounded number of jobs (WithQueueSize per worker, beside
// the running one); Submit waits for room, as long as its context allows.
func ExamplePool_Submit() {
	p := crew.NewGroup(1, crew.WithQueueSize(1))
	release := make(chan struct{})
	wait := func(context.Context) error { <-release; return nil }
	ctx := context.Background()
	fmt.Println(p.Submit(ctx, wait)) // runs
	fmt.Println(p.Submit(ctx, wait)) // waits in the worker's mailbox

	// The pool is full: this Submit blocks until its deadline.
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	fmt.Println(p.Submit(tctx, wait))
	fmt.Println(p.TrySubmit(wait))

	close(release)
	fmt.Println(p.Wait())
	fmt.Println(p.Submit(ctx, wait))
	// Output:
	// <nil>
	// <nil>
	// context deadline exceeded
	// false
	// <nil>
	// crew: pool closed
}

// Map is the commonest fan-out: one call per input, results in input order.
func ExampleMap() {
	words := []string{"actor", "mailbox", "router", "pool"}
	upper, err := crew.Map(context.Background(), 4, words, func(_ context.Context, w string) (string, error) {
		return strings.ToUpper(w), nil
	})
	fmt.Println(upper, err)
	// Output: [ACTOR MAILBOX ROUTER POOL] <nil>
}

// With uneven job times, a slow job does not hold back the jobs submitted
// after it: SmallestMailbox sends them to idle workers, and an idle worker
// takes over any job queued behind a busy one.
func ExamplePool_Stats() {
	slow := make(chan struct{})
	started := make(chan struct{})
	var quick atomic.Int64
	allQuick := make(chan struct{})
	p := crew.NewPool(4, func(_ context.Context, n int) error {
		if n == 0 {
			close(started)
			<-slow // a job that takes "forever"
			return nil
		}
		if quick.Add(1) == 100 {
			close(allQuick)
		}
		return nil
	})
	ctx := context.Background()
	_ = p.Submit(ctx, 0)
	<-started
	for n := 1; n <= 100; n++ {
		_ = p.Submit(ctx, n)
	}
	<-allQuick // the slow job still runs
	fmt.Println("quick jobs done while the slow one runs:", quick.Load())
	close(slow)
	_ = p.Wait()
	s := p.Stats()
	fmt.Println("submitted:", s.Submitted, "completed:", s.Completed, "workers:", len(s.PerWorker))
	// Output:
	// quick jobs done while the slow one runs: 100
	// submitted: 101 completed: 101 workers: 4
}
