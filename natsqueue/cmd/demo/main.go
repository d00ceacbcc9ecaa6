// Command demo shows natsqueue surviving the death of a worker process: it
// starts an embedded NATS server (or uses -url), starts worker processes of
// different speeds (this program again, with -worker), tells them jobs,
// SIGKILLs one of them in the middle of the run, and prints who ran what:
// jobs per process, redeliveries, lost jobs (0) and duplicates. With
// -cluster 3 it starts a cluster of 3 embedded servers instead, opens the
// queue on 3 replicas, and also shuts down the server that leads the
// stream at the same moment.
//
//	go -C natsqueue run ./cmd/demo
//	go -C natsqueue run ./cmd/demo -cluster 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/crewlib/crew/natsqueue"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A Job is what the demo's queue carries.
type Job struct {
	ID int `json:"id"`
}

func main() {
	var (
		url     = flag.String("url", "", "a NATS server with JetStream to use instead of an embedded one")
		jobs    = flag.Int("jobs", 4000, "how many jobs to tell")
		workers = flag.Int("workers", 4, "workers in each worker process")
		ackWait = flag.Duration("ackwait", 2*time.Second, "the queue's AckWait: how long a dead process holds its jobs")
		worker  = flag.Bool("worker", false, "run as a worker process (the demo starts these itself)")
		queue   = flag.String("queue", "", "with -worker: the queue's name")
		delay   = flag.Duration("delay", time.Millisecond, "with -worker: how long each job takes")
		cluster = flag.Int("cluster", 0, "run an embedded cluster of n servers (3 or 5), the queue on n replicas, and shut the stream's leader down mid-run")
	)
	flag.Parse()
	var err error
	if *worker {
		err = serve(*url, *queue, *workers, *delay, *ackWait)
	} else {
		err = run(*url, *jobs, *workers, *ackWait, *cluster)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// serve is a worker process: it runs jobs, writing "done <id>" for each
// to stdout, until SIGTERM.
func serve(url, name string, workers int, delay, ackWait time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	nc, q, err := open(ctx, url, name, ackWait, 0)
	if err != nil {
		return err
	}
	defer nc.Close()
	fmt.Println("ready")
	return natsqueue.Serve(ctx, q, workers, func(_ context.Context, j Job) error {
		time.Sleep(delay) // the job's work
		fmt.Println("done", j.ID)
		return nil
	})
}

// open connects to url (a list of servers, comma-separated) and opens the
// queue called name, creating its stream with replicas copies if not 0.
func open(ctx context.Context, url, name string, ackWait time.Duration, replicas int) (*nats.Conn, *natsqueue.Queue[Job], error) {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err == nil {
		var q *natsqueue.Queue[Job]
		opts := []natsqueue.Option{natsqueue.WithAckWait(ackWait)}
		if replicas > 0 {
			opts = append(opts, natsqueue.WithReplicas(replicas))
		}
		if q, err = natsqueue.Open[Job](ctx, js, name, opts...); err == nil {
			return nc, q, nil
		}
	}
	nc.Close()
	return nil, nil, err
}
