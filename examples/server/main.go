// Command server is a complete HTTP server on one long-lived crew pool, to
// copy whole: each request fans out as a batch of jobs on the shared pool,
// its client is its tenant (WithFairShare, so that a client that sends a
// 2,000-job request does not hold up another's small one), a deadline
// bounds each request, promcrew exports the pool's metrics on /metrics,
// and on SIGINT or SIGTERM the server stops accepting, finishes the
// requests in flight, and closes the pool with a deadline.
//
// Run it, and send it work:
//
//	go run . -addr :8080
//	curl -H 'X-Client: alice' 'localhost:8080/work?jobs=20'
//	curl localhost:8080/metrics | grep crew_pool
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/promcrew"
)

// Config is what the server is run with.
type Config struct {
	Workers         int           // the pool's workers: at most this many jobs run at once, whatever the requests
	MaxJobs         int           // the most jobs one request may ask for
	RequestTimeout  time.Duration // a request's deadline: its jobs not started by then are skipped
	ShutdownTimeout time.Duration // at exit, how long the requests in flight and then the pool's jobs may take
	Work            crew.Job      // a job's work; nil: sleep a millisecond, as a call to another service would
}

func main() {
	addr := flag.String("addr", ":8080", "the address to listen on")
	cfg := Config{Workers: 8, MaxJobs: 2000, RequestTimeout: 5 * time.Second, ShutdownTimeout: 10 * time.Second}
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "the pool's workers")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", ln.Addr())
	// The first SIGINT or SIGTERM ends ctx, and so the server; a second
	// one kills the process, as the signal's default does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, ln, cfg); err != nil {
		log.Fatal(err)
	}
}

// Run serves on ln until ctx ends, then exits gracefully: it stops
// accepting, lets the requests in flight finish (within
// cfg.ShutdownTimeout), closes the pool with what is left of that
// deadline, and waits for its workers. It returns the server's error, if
// it failed, and the pool's Wait's: the first error of a job that was not
// in a batch (every job here is, so nil unless a job panicked outside
// one).
func Run(ctx context.Context, ln net.Listener, cfg Config) error {
	metrics := promcrew.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics, collectors.NewGoCollector())

	// One pool for the process: its workers are the limit every request
	// shares. WithFairShare shares them by run time between tenants.
	pool := crew.NewGroup(cfg.Workers,
		crew.WithName("work"),
		crew.WithFairShare(),
		crew.WithMetrics(metrics),
		crew.WithErrorHandler(func(err error) { log.Printf("job: %v", err) }),
	)

	mux := http.NewServeMux()
	mux.Handle("GET /work", &workHandler{pool: pool, cfg: cfg})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served: // the listener failed
	}

	// Graceful exit: the requests first (they are the pool's batches),
	// then the pool, within one deadline.
	stop, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil {
		log.Printf("http: %v", err) // the deadline passed: the pool's Shutdown cancels their jobs
	}
	if err := pool.Shutdown(stop); err != nil {
		log.Printf("pool: %v: the jobs still queued were skipped", err)
	}
	// Shutdown returns nil once every job ended, or ctx's error once its
	// deadline passed, without waiting for the jobs that still run: Wait
	// waits for them, and returns the jobs' error. Call it either way.
	waitErr := pool.Wait()
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, waitErr)
}

// workHandler runs a request's jobs as one batch on the shared pool.
//
//	GET /work?jobs=N    with the client's name in the X-Client header
//
// It answers 200 once every job ran, 504 if the request's deadline passed
// first, 503 if the server is shutting down, and 500 if a job failed.
type workHandler struct {
	pool *crew.Pool[crew.Job]
	cfg  Config
}

func (h *workHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	jobs, err := strconv.Atoi(r.URL.Query().Get("jobs"))
	if err != nil || jobs < 1 || jobs > h.cfg.MaxJobs {
		http.Error(w, fmt.Sprintf("jobs must be a number from 1 to %d", h.cfg.MaxJobs), http.StatusBadRequest)
		return
	}
	client := r.Header.Get("X-Client")
	if client == "" {
		client = "anonymous"
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.RequestTimeout)
	defer cancel()

	// The batch's context ends with the request's (the client went away,
	// or its deadline passed) or at the batch's first error: its jobs not
	// started by then are skipped.
	batch, bctx := h.pool.NewBatch(ctx, crew.WithTenant(client))
	work := h.cfg.Work
	if work == nil {
		work = sleep
	}
	submitted := 0
	var refused error
	for range jobs {
		// Submit waits while the pool is full, and fails once the batch
		// failed, the request ended, or the pool closed.
		if refused = batch.Submit(bctx, work); refused != nil {
			break
		}
		submitted++
	}
	err = batch.Wait() // this request's jobs only: the first error of one
	switch {
	case errors.Is(refused, crew.ErrPoolClosed):
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	case (err != nil || refused != nil) && errors.Is(ctx.Err(), context.DeadlineExceeded):
		http.Error(w, fmt.Sprintf("deadline: %d of %d jobs ran", batch.Stats().Completed, jobs), http.StatusGatewayTimeout)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case refused != nil: // the client went away: it reads no answer
		http.Error(w, fmt.Sprintf("%d of %d jobs submitted: %v", submitted, jobs, refused), http.StatusServiceUnavailable)
	default:
		fmt.Fprintf(w, "%d jobs ran for %s\n", jobs, client)
	}
}

// sleep is the default job: a millisecond's wait that ends early if ctx does.
func sleep(ctx context.Context) error {
	t := time.NewTimer(time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
