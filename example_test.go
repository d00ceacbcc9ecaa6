package crew_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// Many goroutines telling one actor is fan-in, which a Segmented mailbox
// is built for: its producers take no lock. Each sender's messages arrive
// in the order it sent them.
func ExampleNewSegmented() {
	ctx := context.Background()
	var total atomic.Int64
	counter := crew.Spawn(ctx, func(_ context.Context, n int) error {
		total.Add(int64(n))
		return nil
	}, crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewSegmented[int]() }))
	var senders sync.WaitGroup
	for range 8 {
		senders.Go(func() {
			for n := 1; n <= 1000; n++ {
				_ = counter.Tell(ctx, n)
			}
		})
	}
	senders.Wait()
	counter.Drain() // handle what is queued, then stop
	<-counter.Done()
	fmt.Println(total.Load())
	// Output:
	// 4004000
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
	<-router.Done() // every worker has exited
	fmt.Println(router.Tell(ctx, 1))
	// Output:
	// total: 8050
	// crew: actor stopped
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
// Submit that reports a canceled group, and 8 long-lived workers that share
// one backlog and start the jobs in the order they were submitted.
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

// A typed pool's backlog can be any mailbox: here a priority mailbox makes
// the pool run its most urgent job first (a lower priority number), and
// the same priority first among equals in submission order.
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

// A Fair backlog serves tenants in turn, across the whole pool, so one
// tenant's burst does not starve the others.
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

// A pool holds a bounded number of jobs, workers×(1+queue size) counting
// those running; Submit waits for room, as long as its context allows.
func ExamplePool_Submit() {
	p := crew.NewGroup(1, crew.WithQueueSize(1))
	release := make(chan struct{})
	wait := func(context.Context) error { <-release; return nil }
	ctx := context.Background()
	fmt.Println(p.Submit(ctx, wait)) // runs
	fmt.Println(p.Submit(ctx, wait)) // waits in the backlog

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
// after it: they wait in the pool's backlog, not behind the slow job, and
// the other workers take them.
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

type deposit struct {
	account string
	amount  int
}

// WithKey keeps each key's jobs in order, one at a time, while different
// keys run in parallel on whichever workers are free.
func ExampleWithKey() {
	var mu sync.Mutex
	balances := map[string][]int{}
	p := crew.NewPool(4, func(_ context.Context, d deposit) error {
		mu.Lock()
		defer mu.Unlock()
		prev := 0
		if h := balances[d.account]; len(h) > 0 {
			prev = h[len(h)-1]
		}
		balances[d.account] = append(balances[d.account], prev+d.amount)
		return nil
	}, crew.WithKey(func(d deposit) string { return d.account }))
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		_ = p.Submit(ctx, deposit{"alice", i * 10})
		_ = p.Submit(ctx, deposit{"bob", i})
	}
	_ = p.Wait()
	fmt.Println("alice:", balances["alice"])
	fmt.Println("bob:", balances["bob"])
	fmt.Println("keys bound after Wait:", p.Stats().Keys)
	// Output:
	// alice: [10 30 60]
	// bob: [1 3 6]
	// keys bound after Wait: 0
}

// One pool per process caps the work that every request shares (here 4
// lookups at once, whatever the number of requests); each request fans
// out on it as a batch and waits for its own jobs only. The first failed
// lookup cancels its request's batch, not the pool nor the other requests.
func ExamplePool_NewBatch() {
	lookups := crew.NewGroup(4) // shared by every request
	defer lookups.Wait()

	lookup := func(ctx context.Context, word string) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if word == "" {
			return "", fmt.Errorf("empty word")
		}
		return strings.ToUpper(word), nil
	}

	handler := func(w http.ResponseWriter, r *http.Request) {
		words := strings.Split(r.URL.Query().Get("q"), ",")
		out := make([]string, len(words))
		batch, ctx := lookups.NewBatch(r.Context(), crew.WithLimit(2)) // 2 of the 4 at most
		for i, word := range words {
			err := batch.Submit(ctx, func(ctx context.Context) error {
				up, err := lookup(ctx, word)
				out[i] = up // each job writes its own slot
				return err
			})
			if err != nil {
				break // the batch failed, or the request ended
			}
		}
		if err := batch.Wait(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, strings.Join(out, " "))
	}
	srv := httptest.NewServer(http.HandlerFunc(handler))
	defer srv.Close()

	for _, q := range []string{"crew,pools,batches", "one,,two"} {
		resp, err := http.Get(srv.URL + "?q=" + q)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s\n", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	// Output:
	// 200 CREW POOLS BATCHES
	// 400 empty word
}

// MapBatch is Map on a shared pool: the results come back in input order.
func ExampleMapBatch() {
	p := crew.NewGroup(4)
	defer p.Wait()
	lengths, err := crew.MapBatch(context.Background(), p, []string{"a", "bb", "ccc"},
		func(_ context.Context, s string) (int, error) { return len(s), nil })
	fmt.Println(lengths, err)
	// Output: [1 2 3] <nil>
}

// WithFairShare shares a long-lived pool's workers between its batches by
// the time their jobs run: a request that queues 100 jobs does not hold
// back one that comes after it with a single job. Here one worker is held
// while both requests queue their jobs; once it is free, the small
// request's job runs second, not 101st.
func ExampleWithFairShare() {
	p := crew.NewGroup(1, crew.WithFairShare(), crew.WithQueueSize(200))
	ctx := context.Background()
	release := make(chan struct{})
	_ = p.Submit(ctx, func(context.Context) error { <-release; return nil }) // holds the worker

	var mu sync.Mutex
	var order []string
	job := func(name string) crew.Job {
		return func(context.Context) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return nil
		}
	}
	big, bctx := p.NewBatch(ctx, crew.WithTenant("bulk-importer"))
	for range 100 {
		_ = big.Submit(bctx, job("big"))
	}
	small, sctx := p.NewBatch(ctx, crew.WithTenant("web"))
	_ = small.Submit(sctx, job("small"))

	close(release)
	_ = small.Wait()
	_ = big.Wait()
	_ = p.Wait()
	fmt.Println(order[:3], len(order))
	// Output: [big small big] 101
}

// A tenant that was quiet goes ahead of a backlogged one: credited the run
// time it left unused while the bulk importer ran (up to the fair window),
// its request runs before the importer's next jobs. With
// crew.WithFairWindow(0), the two would take turns.
func ExampleWithFairWindow() {
	p := crew.NewGroup(1, crew.WithFairShare(), crew.WithFairWindow(20*time.Millisecond), crew.WithQueueSize(100))
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	reached, gate := make(chan struct{}), make(chan struct{})
	job := func(name string, i int) crew.Job {
		return func(context.Context) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			if name == "bulk" && i == 4 {
				close(reached) // the web tenant submits while this job runs
				<-gate
			}
			time.Sleep(time.Millisecond)
			return nil
		}
	}
	bulk, bctx := p.NewBatch(ctx, crew.WithTenant("bulk-importer"))
	for i := range 20 {
		_ = bulk.Submit(bctx, job("bulk", i))
	}
	<-reached
	web, wctx := p.NewBatch(ctx, crew.WithTenant("web"))
	for i := range 3 {
		_ = web.Submit(wctx, job("web", i))
	}
	close(gate)
	_ = web.Wait()
	_ = bulk.Wait()
	_ = p.Wait()
	fmt.Println(order[:9])
	// Output: [bulk bulk bulk bulk bulk web web web bulk]
}

// A job's own Submit is the one with the context the job received: on a
// full pool it runs the new job inline. A Submit with the context
// WithContext returned, captured from outside the job, is not the job's
// own: it waits for room like any other (here until its deadline, for the
// only worker is the job itself).
func ExampleWithContext_ownSubmit() {
	p, ctx := crew.WithContext(context.Background(), 1, crew.WithQueueSize(1)) // room for 2 jobs
	submitted := make(chan struct{})
	_ = p.Submit(ctx, func(jobCtx context.Context) error {
		defer close(submitted)
		_ = p.Submit(jobCtx, func(context.Context) error { return nil }) // the pool is full now

		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		fmt.Println("outer ctx:", p.Submit(waitCtx, func(context.Context) error { return nil }))

		err := p.Submit(jobCtx, func(context.Context) error {
			fmt.Println("job's ctx: ran inline")
			return nil
		})
		fmt.Println("job's ctx:", err)
		return nil
	})
	<-submitted // before Wait: once Wait has begun, the outer ctx's Submit gets ErrPoolClosed
	fmt.Println(p.Wait())
	// Output:
	// outer ctx: context deadline exceeded
	// job's ctx: ran inline
	// job's ctx: <nil>
	// <nil>
}

// jobCounter is a Metrics of a few lines: it counts each pool's events by
// name. promcrew and otelcrew are ready-made ones.
type jobCounter struct {
	mu     sync.Mutex
	counts map[string]int // "pool/event"
}

func (c *jobCounter) Track(s crew.Source) crew.Recorder { return &poolCounter{c, s.Name} }

type poolCounter struct {
	c    *jobCounter
	name string
}

func (r *poolCounter) Add(e crew.Event, n int) {
	r.c.mu.Lock()
	r.c.counts[r.name+"/"+e.String()] += n
	r.c.mu.Unlock()
}
func (r *poolCounter) Observe(crew.Timing, time.Duration, string) {} // a histogram would go here
func (r *poolCounter) Close()                                     {}

// WithMetrics reports a pool's events as they happen to a Metrics of
// yours, or to promcrew's Prometheus collector or otelcrew's instruments.
// Name the pool: metrics are labelled with its name.
func ExampleWithMetrics() {
	m := &jobCounter{counts: make(map[string]int)}
	p := crew.NewGroup(2, crew.WithName("resize"), crew.WithMetrics(m))
	for i := range 5 {
		_ = p.Submit(context.Background(), func(context.Context) error {
			if i == 3 {
				return errors.New("corrupt image")
			}
			return nil
		})
	}
	_ = p.Wait() // the counts are exact once Wait returns
	fmt.Println(m.counts)
	// Output: map[resize/completed:5 resize/failed:1 resize/submitted:5]
}

// A router that spawns its actors and keeps each key's messages in order,
// one at a time (WithKey): here an account's deposits, spread over four
// actors. Drain handles every message the router accepted, those waiting
// behind their keys included, then stops the actors.
func ExampleSpawnRouter() {
	var mu sync.Mutex
	balances := map[string][]int{}
	router := crew.SpawnRouter(context.Background(), 4, func(_ context.Context, d deposit) error {
		mu.Lock()
		defer mu.Unlock()
		prev := 0
		if h := balances[d.account]; len(h) > 0 {
			prev = h[len(h)-1]
		}
		balances[d.account] = append(balances[d.account], prev+d.amount)
		return nil
	}, crew.WithName("ledger"), crew.WithKey(func(d deposit) string { return d.account }))
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		_ = router.Tell(ctx, deposit{"alice", i * 10})
		_ = router.Tell(ctx, deposit{"bob", i})
	}
	router.Drain()
	<-router.Done() // every message handled, every actor exited
	fmt.Println("alice:", balances["alice"])
	fmt.Println("bob:", balances["bob"])
	fmt.Println("dead letters:", router.DeadLetters())
	fmt.Println(router.Tell(ctx, deposit{"alice", 1})) // refused: a dead letter
	fmt.Println("dead letters:", router.DeadLetters())
	// Output:
	// alice: [10 30 60]
	// bob: [1 3 6]
	// dead letters: 0
	// crew: actor stopped
	// dead letters: 1
}

// At exit, a long-lived pool finishes what it accepted within a deadline:
// Shutdown returns nil once every job ended, or, once the deadline passed,
// cancels the jobs (those still queued are skipped) and returns at once.
// Wait then waits for the jobs that still run and returns their error:
// call it either way.
func ExamplePool_Shutdown() {
	pool := crew.NewGroup(2)
	for i := range 4 {
		_ = pool.Submit(context.Background(), func(ctx context.Context) error {
			if i == 3 {
				<-ctx.Done() // a job that would never end but for the deadline
				return ctx.Err()
			}
			return nil
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	fmt.Println("Shutdown:", pool.Shutdown(ctx))
	fmt.Println("Wait:", pool.Wait())
	fmt.Println("completed:", pool.Stats().Completed)
	// Output:
	// Shutdown: context deadline exceeded
	// Wait: context canceled
	// completed: 4
}
