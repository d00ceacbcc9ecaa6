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
//
// With -fair=false the pool serves its requests first come, first
// served, to compare: each client is still its tenant on /metrics.
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
	FirstCome       bool          // serve the requests first come, first served, without WithFairShare: to compare
	OnShutdown      func()        // if set, called as the graceful exit begins, once the server accepts no more connections
}

func main() {
	addr := flag.String("addr", ":8080", "the address to listen on")
	cfg := Config{Workers: 8, MaxJobs: 2000, RequestTimeout: 5 * time.Second, ShutdownTimeout: 10 * time.Second}
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "the pool's workers")
	fair := flag.Bool("fair", true, "share the workers between clients by run time (WithFairShare); false: first come, first served")
	flag.Parse()
	cfg.FirstCome = !*fair

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", ln.Addr())
	// The first SIGINT or SIGTERM ends ctx, and so the server; stop then
	// gives the signals back their default, so that a second one kills
	// the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	if err := Run(ctx, ln, cfg); err != nil {
		log.Fatal(err)
	}
}

// Run serves on ln until ctx ends, then exits gracefully: it stops
// accepting, lets the requests in flight finish, then closes the pool and
// waits for its workers, all within cfg.ShutdownTimeout. If the deadline
// passes first, the pool's Shutdown cancels the jobs still running (their
// requests are answered 503), and Run closes what connections are left.
// It returns nil after a graceful exit; otherwise the listener's error,
// or the deadline's, joined with the pool's Wait's (the first error of a
// job outside a batch: here none, for a request's jobs report to its
// batch).
func Run(ctx context.Context, ln net.Listener, cfg Config) error {
	metrics := promcrew.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics, collectors.NewGoCollector())

	// One pool for the process: its workers are the limit every request
	// shares. WithFairShare shares them by run time between tenants;
	// without it, the requests' jobs run first come, first served, and
	// the tenants still label the run time on /metrics.
	opts := []crew.Option{
		crew.WithName("work"),
		crew.WithMetrics(metrics),
		crew.WithErrorHandler(func(err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				log.Printf("job: %v", err) // a request that ended is not a failure of its jobs
			}
		}),
	}
	if !cfg.FirstCome {
		opts = append(opts, crew.WithFairShare())
	}
	pool := crew.NewGroup(cfg.Workers, opts...)

	mux := http.NewServeMux()
	mux.Handle("GET /work", &workHandler{pool: pool, cfg: cfg})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if cfg.OnShutdown != nil {
		srv.RegisterOnShutdown(cfg.OnShutdown)
	}

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
	httpErr := srv.Shutdown(stop) // stops accepting, then waits for the requests in flight
	// Shutdown returns nil once every job ended, or, once the deadline
	// passed, cancels the jobs still running or queued and returns its
	// error at once. Wait waits for the jobs that still run: call it
	// either way.
	poolErr := pool.Shutdown(stop)
	waitErr := pool.Wait()
	if httpErr != nil {
		// The deadline passed with requests in flight: their jobs were
		// canceled, so their handlers answer now. Give them a moment,
		// then close what is left.
		last, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(last) != nil {
			_ = srv.Close()
		}
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, httpErr, poolErr, waitErr)
}

// workHandler runs a request's jobs as one batch on the shared pool.
//
//	GET /work?jobs=N    with the client's name in the X-Client header
//
// It answers 200 once every job ran, 504 if the request's deadline passed
// first, 503 if the server's exit cut its jobs short, and 500 with the
// first error of a job that failed.
//
// The tenant here is what the client says it is. In a real server take
// it from an authenticated identity: a client that names itself anew
// with each request would be a new, credited tenant each time, and each
// name a new tenant label on /metrics.
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
	case errors.Is(refused, crew.ErrPoolClosed), (err != nil || refused != nil) && h.pool.Context().Err() != nil:
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	case (err != nil || refused != nil) && errors.Is(context.Cause(bctx), context.DeadlineExceeded):
		// The deadline passed before any job failed: the batch's context
		// records which came first.
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
