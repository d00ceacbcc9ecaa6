package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// start runs the server on a random port until the test ends, and returns
// its base URL and a function that stops it and returns Run's error.
func start(t *testing.T, cfg Config) (base string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, ln, cfg) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

// fetch sends GET url as client and returns the status and the body. It
// does not fail the test, so that a goroutine of the test may call it.
func fetch(c *http.Client, url, client string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if client != "" {
		req.Header.Set("X-Client", client)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// get is fetch on the test's goroutine: an error fails the test.
func get(t *testing.T, c *http.Client, url, client string) (int, string) {
	t.Helper()
	status, body, err := fetch(c, url, client)
	require.NoError(t, err)
	return status, body
}

// A reply is what a request got, sent from a goroutine of the test.
type reply struct {
	status int
	body   string
	err    error
}

// getting sends GET url as client on a goroutine of its own and returns
// the channel of its reply.
func getting(c *http.Client, url, client string) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		status, body, err := fetch(c, url, client)
		ch <- reply{status, body, err}
	}()
	return ch
}

// scrape returns the samples of /metrics whose names begin with prefix,
// by their name and labels as the exposition format writes them.
func scrape(t *testing.T, c *http.Client, base, prefix string) map[string]float64 {
	t.Helper()
	_, body := get(t, c, base+"/metrics", "")
	samples := map[string]float64{}
	lines := bufio.NewScanner(strings.NewReader(body))
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		v, err := strconv.ParseFloat(value, 64)
		require.NoError(t, err, line)
		samples[name] = v
	}
	return samples
}

// A noisy client's big requests and a small client's, at once, on a fair
// pool and on a first come, first served one (-fair=false): every request
// is answered 200, every job runs once, /metrics counts exactly the jobs
// sent and each client's run time, and the server exits cleanly.
func TestTheServerRunsEveryRequestsJobsAndCountsThem(t *testing.T) {
	t.Run("fair", func(t *testing.T) { runsEveryRequest(t, false) })
	t.Run("first come, first served", func(t *testing.T) { runsEveryRequest(t, true) })
}

// runsEveryRequest is TestTheServerRunsEveryRequestsJobsAndCountsThem on
// a pool first come, first served if firstCome, else fair.
func runsEveryRequest(t *testing.T, firstCome bool) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var ran atomic.Int64
	base, stop := start(t, Config{
		Workers: 4, MaxJobs: 2000, RequestTimeout: time.Minute, ShutdownTimeout: time.Minute,
		Work:      func(context.Context) error { ran.Add(1); return nil },
		FirstCome: firstCome,
	})
	c := &http.Client{}
	defer c.CloseIdleConnections()

	const noisy, noisyJobs, small, smallJobs = 3, 500, 10, 5
	var replies []<-chan reply
	for range noisy {
		replies = append(replies, getting(c, fmt.Sprintf("%s/work?jobs=%d", base, noisyJobs), "noisy"))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range small {
			r := <-getting(c, fmt.Sprintf("%s/work?jobs=%d", base, smallJobs), "small")
			assert.NoError(t, r.err)
			assert.Equal(t, http.StatusOK, r.status, r.body)
			assert.Equal(t, "5 jobs ran for small\n", r.body)
		}
	})
	for _, ch := range replies {
		r := <-ch
		assert.NoError(t, r.err)
		assert.Equal(t, http.StatusOK, r.status, r.body)
	}
	wg.Wait()
	status, _ := get(t, c, base+"/work?jobs=0", "small")
	assert.Equal(t, http.StatusBadRequest, status)

	// Each request's jobs ended, and were counted, before its answer.
	const jobs = noisy*noisyJobs + small*smallJobs
	assert.EqualValues(t, jobs, ran.Load())
	m := scrape(t, c, base, "crew_pool_")
	assert.EqualValues(t, jobs, m[`crew_pool_jobs_submitted_total{pool="work"}`])
	assert.EqualValues(t, jobs, m[`crew_pool_jobs_completed_total{pool="work"}`])
	assert.EqualValues(t, jobs, m[`crew_pool_run_seconds_count{pool="work"}`])
	for _, outcome := range []string{"failed", "panicked", "skipped", "dropped"} {
		assert.Zero(t, m[`crew_pool_jobs_`+outcome+`_total{pool="work"}`], outcome)
	}
	for _, tenant := range []string{"noisy", "small"} {
		assert.Contains(t, m, `crew_pool_tenant_run_seconds_total{pool="work",tenant="`+tenant+`"}`)
	}
	assert.EqualValues(t, 4, m[`crew_pool_workers{pool="work"}`])

	c.CloseIdleConnections()
	require.NoError(t, stop(), "the server's graceful exit")
	_, err := c.Get(base + "/metrics")
	assert.Error(t, err, "the server still answers after its exit")
}

// A request whose jobs outlast its deadline is answered 504, and its jobs
// see their context end.
func TestARequestPastItsDeadlineIsAnswered504(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	base, stop := start(t, Config{
		Workers: 2, MaxJobs: 10, RequestTimeout: 50 * time.Millisecond, ShutdownTimeout: time.Minute,
		Work: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
	})
	c := &http.Client{}
	defer c.CloseIdleConnections()
	status, body := get(t, c, base+"/work?jobs=4", "slow")
	assert.Equal(t, http.StatusGatewayTimeout, status, body)
	c.CloseIdleConnections()
	require.NoError(t, stop())
}

// A request in flight when the server is told to stop is finished and
// answered before the server exits, while new connections are refused
// from the moment the exit begins.
func TestTheServerFinishesTheRequestsInFlightAsItExits(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	started, gate, exiting := make(chan struct{}, 3), make(chan struct{}), make(chan struct{})
	base, stop := start(t, Config{
		Workers: 2, MaxJobs: 10, RequestTimeout: time.Minute, ShutdownTimeout: time.Minute,
		Work: func(context.Context) error {
			started <- struct{}{}
			<-gate
			return nil
		},
		OnShutdown: func() { close(exiting) },
	})
	c := &http.Client{}
	defer c.CloseIdleConnections()
	answered := getting(c, base+"/work?jobs=3", "late")
	<-started // the request is in flight
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	<-exiting // the server accepts no more connections, and waits for the request
	_, _, err := fetch(&http.Client{}, base+"/metrics", "")
	assert.Error(t, err, "a new connection during the exit")
	close(gate)
	r := <-answered
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusOK, r.status, r.body)
	c.CloseIdleConnections()
	require.NoError(t, <-stopped)
}

// When the exit's deadline passes with a request in flight, the pool's
// Shutdown cancels its jobs: the request is answered 503, and Run says
// that the deadline passed.
func TestARequestCutShortByTheExitsDeadlineIsAnswered503(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	started := make(chan struct{}, 2)
	base, stop := start(t, Config{
		Workers: 2, MaxJobs: 10, RequestTimeout: time.Minute, ShutdownTimeout: 50 * time.Millisecond,
		Work: func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done() // a job that ends only when it is canceled
			return ctx.Err()
		},
	})
	c := &http.Client{}
	defer c.CloseIdleConnections()
	answered := getting(c, base+"/work?jobs=2", "late")
	<-started
	err := stop()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "Run reports the deadline")
	r := <-answered
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, r.body)
}

// A request whose job fails is answered 500 with the job's error, and the
// failure is counted on /metrics.
func TestARequestWhoseJobFailsIsAnswered500(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	base, stop := start(t, Config{
		Workers: 2, MaxJobs: 10, RequestTimeout: time.Minute, ShutdownTimeout: time.Minute,
		Work: func(context.Context) error { return errors.New("the image is corrupt") },
	})
	c := &http.Client{}
	defer c.CloseIdleConnections()
	status, body := get(t, c, base+"/work?jobs=1", "bad")
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Equal(t, "the image is corrupt\n", body)
	assert.EqualValues(t, 1, scrape(t, c, base, "crew_pool_jobs_failed")[`crew_pool_jobs_failed_total{pool="work"}`])
	c.CloseIdleConnections()
	require.NoError(t, stop(), "a batch's failure is the request's, not the pool's")
}
