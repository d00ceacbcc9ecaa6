package natsqueue_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Example tells three jobs and serves them with two workers until all have
// run. In production the server is a NATS cluster and Tell and Serve run in
// different processes; here an embedded server stands in (in tests, use
// natstest.Server).
func Example() {
	dir, _ := os.MkdirTemp("", "natsqueue-example-")
	defer os.RemoveAll(dir)
	s, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	s.Start()
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	s.ReadyForConnections(10 * time.Second)
	nc, _ := nats.Connect(s.ClientURL())
	defer nc.Close()
	js, _ := jetstream.New(nc)

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
