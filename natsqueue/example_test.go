package natsqueue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// exampleServer starts an embedded server, with JetStream in a temporary
// folder, and returns a client of it and a function that stops both. In
// production the server is a NATS cluster; in tests, use natstest.Server.
func exampleServer() (jetstream.JetStream, func()) {
	dir, _ := os.MkdirTemp("", "natsqueue-example-")
	s, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	s.Start()
	s.ReadyForConnections(10 * time.Second)
	nc, _ := nats.Connect(s.ClientURL())
	js, _ := jetstream.New(nc)
	return js, func() {
		nc.Close()
		s.Shutdown()
		s.WaitForShutdown()
		_ = os.RemoveAll(dir)
	}
}

// Example tells three jobs and serves them with two workers until all have
// run. In production Tell and Serve run in different processes; here an
// embedded server stands in (see exampleServer).
func Example() {
	js, stop := exampleServer()
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := natsqueue.Open[string](ctx, js, "greetings")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"ada", "grace", "linus"} {
		if err := q.Tell(ctx, name); err != nil {
			fmt.Println(err)
			return
		}
	}

	var mu sync.Mutex
	var greeted []string
	err = natsqueue.Serve(ctx, q, 2, func(_ context.Context, name string) error {
		mu.Lock()
		defer mu.Unlock()
		greeted = append(greeted, "hello, "+name)
		if len(greeted) == 3 {
			cancel() // Serve finishes and acknowledges what it holds, then returns
		}
		return nil
	}, natsqueue.WithDeadLetters(func(d crew.DeadLetter) { fmt.Println(d) }))
	slices.Sort(greeted)
	fmt.Println(err, greeted)
	// Output: <nil> [hello, ada hello, grace hello, linus]
}

// counts is a Metrics that counts events and observations, as a
// Prometheus or OpenTelemetry adapter would (see the README).
type counts struct {
	mu      sync.Mutex // guards events, timings
	events  map[natsqueue.Event]int
	timings map[natsqueue.Timing]int
}

func (c *counts) Track(natsqueue.Source) natsqueue.Recorder { return c }

func (c *counts) Add(e natsqueue.Event, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events[e] += n
}

func (c *counts) Observe(t natsqueue.Timing, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timings[t]++
}

func (c *counts) Close() {}

// ExampleWithMetrics serves three jobs, one of which fails once, and
// prints what Serve reported.
func ExampleWithMetrics() {
	js, stop := exampleServer()
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := natsqueue.Open[int](ctx, js, "jobs")
	for job := 0; err == nil && job < 3; job++ {
		err = q.Tell(ctx, job)
	}
	if err != nil {
		fmt.Println(err)
		return
	}

	m := &counts{events: map[natsqueue.Event]int{}, timings: map[natsqueue.Timing]int{}}
	var failed atomic.Bool
	var done atomic.Int32
	err = natsqueue.Serve(ctx, q, 2, func(_ context.Context, job int) error {
		if job == 1 && !failed.Swap(true) {
			return errors.New("busy") // a nak: delivered again after the backoff
		}
		if done.Add(1) == 3 {
			cancel()
		}
		return nil
	}, natsqueue.WithMetrics(m), natsqueue.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))
	fmt.Println("Serve:", err)
	for e := natsqueue.EventDelivery; e <= natsqueue.EventDeadLetter; e++ {
		fmt.Println(e, m.events[e])
	}
	for t := natsqueue.TellToAck; t <= natsqueue.NakDelay; t++ {
		fmt.Println(t, m.timings[t], "observed")
	}
	// Output:
	// Serve: <nil>
	// delivery 3
	// redelivery 1
	// ack 3
	// nak 1
	// dead_letter 0
	// tell_to_ack 3 observed
	// run_time 4 observed
	// nak_delay 1 observed
}

// ExampleQueue_TellWith tells a unique job twice, the second time in
// vain, and a job to run a moment later.
func ExampleQueue_TellWith() {
	js, stop := exampleServer()
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := natsqueue.Open[string](ctx, js, "invoices")
	if err != nil {
		fmt.Println(err)
		return
	}
	err = q.TellWith(ctx, "invoice 42", natsqueue.UniqueKey("invoice-42"))
	fmt.Println("first:", err)
	err = q.TellWith(ctx, "invoice 42 again", natsqueue.UniqueKey("invoice-42"))
	fmt.Println("again, a duplicate:", errors.Is(err, natsqueue.ErrDuplicate))
	err = q.TellWith(ctx, "reminder", natsqueue.RunAfter(100*time.Millisecond))
	fmt.Println("delayed:", err)

	ran := make(chan string, 2)
	served := make(chan error, 1)
	go func() {
		// One worker runs the jobs in the stream's order.
		served <- natsqueue.Serve(ctx, q, 1, func(ctx context.Context, job string) error {
			if d, _ := natsqueue.DeliveryFrom(ctx); job == "invoice 42" {
				job += " (ID " + d.ID + ")"
			}
			ran <- job
			return nil
		})
	}()
	fmt.Println("ran:", <-ran) // at once
	fmt.Println("ran:", <-ran) // after 100 ms at least
	cancel()
	fmt.Println("Serve:", <-served)
	// Output:
	// first: <nil>
	// again, a duplicate: true
	// delayed: <nil>
	// ran: invoice 42 (ID invoice-42)
	// ran: reminder
	// Serve: <nil>
}

// ExampleDeadLetters serves a job that fails for good, lists the dead
// letter it leaves, and replays it once its cause is fixed.
func ExampleDeadLetters() {
	js, stop := exampleServer()
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := natsqueue.Open[string](ctx, js, "orders")
	if err == nil {
		err = q.TellWith(ctx, "order 7", natsqueue.UniqueKey("order-7"))
	}
	if err != nil {
		fmt.Println(err)
		return
	}

	var fixed atomic.Bool
	ran := make(chan string, 1)
	dead := make(chan struct{}, 1)
	served := make(chan error, 1)
	go func() {
		served <- natsqueue.Serve(ctx, q, 1, func(_ context.Context, job string) error {
			if !fixed.Load() {
				return natsqueue.Permanent(errors.New("no such customer"))
			}
			ran <- job
			return nil
		}, natsqueue.WithDeadLetters(func(crew.DeadLetter) { dead <- struct{}{} })) // called once stored
	}()
	<-dead

	letters := q.DeadLetters() // or natsqueue.OpenDeadLetters, in a tool
	var seq uint64
	for d, err := range letters.All(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		job, _ := q.Decode(d)
		fmt.Printf("%q: ID %s, %s after %d attempt(s): %s\n", job, d.ID, d.Reason, d.Attempts, d.Error)
		seq = d.Seq
	}

	fixed.Store(true)
	if err := letters.Replay(ctx, seq); err != nil { // told again as a new job, then deleted
		fmt.Println(err)
		return
	}
	fmt.Println("ran:", <-ran)
	n, err := letters.Count(ctx)
	fmt.Println("dead letters left:", n, err)
	cancel()
	fmt.Println("Serve:", <-served)
	// Output:
	// "order 7": ID order-7, permanent after 1 attempt(s): permanent: no such customer
	// ran: order 7
	// dead letters left: 0 <nil>
	// Serve: <nil>
}
