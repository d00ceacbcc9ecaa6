package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

func TestEveryTenantContenderRunsRequestsWithATenantAndWithout(t *testing.T) {
	for _, c := range append(tenantContenders(4), crowdContenders()...) {
		t.Run(c.name, func(t *testing.T) {
			b := c.start(4)
			var ran [2 * 100]atomic.Int32
			var wg sync.WaitGroup
			for k, tenant := range []string{"", tenantsNoisyTenant} {
				wg.Go(func() {
					work := make([]int, 100)
					for j := range work {
						work[j] = k*100 + j
					}
					b.request(tenant, work, func(n int) { ran[n].Add(1) })
					for _, n := range work {
						assert.Equal(t, int32(1), ran[n].Load(), "job %d of the request with tenant %q, by the time it returned", n, tenant)
					}
				})
			}
			wg.Wait()
			b.close()
		})
	}
}

func TestTheRoomyBacklogHoldsANoisyRequestAndNoMore(t *testing.T) {
	for _, w := range []int{1, 3, 8, 64, 3000} {
		n := tenantsBacklog(w)
		assert.GreaterOrEqual(t, w*n, tenantsNoisyJobs, "%d workers", w)
		assert.Less(t, w*(n-1), tenantsNoisyJobs, "%d workers", w)
	}
	assert.Equal(t, tenantsFCFSName+", WithQueueSize(250)", tenantsRoomy(tenantsFCFSName, 8))
}

func TestJobKindsSleepOrSpinTheirTime(t *testing.T) {
	sleeps, spins := tenantsJobs[0], tenantsJobs[1]
	require.False(t, sleeps.spins)
	require.True(t, spins.spins)
	assert.Equal(t, int(sleeps.d), sleeps.arg(100), "a sleeping job's argument: nanoseconds")
	assert.Equal(t, 100*200, spins.arg(100), "a spinning job's argument: rounds at 100 per µs")
	start := time.Now()
	sleeps.run()(int(time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), time.Millisecond)
}

// recordingBatcher runs each request's jobs at once, in the caller, and
// records the sizes of each tenant's requests in order, and whether any
// came after close.
type recordingBatcher struct {
	mu     sync.Mutex // guards sizes, order, closed, late
	sizes  map[string][]int
	order  []string // the tenants of the requests, in the order they began
	closed bool
	late   bool // a request began after close
}

func newRecordingBatcher() *recordingBatcher {
	return &recordingBatcher{sizes: map[string][]int{}}
}

func (r *recordingBatcher) request(tenant string, work []int, job func(int)) {
	r.mu.Lock()
	r.sizes[tenant] = append(r.sizes[tenant], len(work))
	r.order = append(r.order, tenant)
	r.late = r.late || r.closed
	r.mu.Unlock()
	for _, n := range work {
		job(n)
	}
}

func (r *recordingBatcher) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

func TestRunThinkingTimesEverySmallRequestOfEachClientAsItsTenant(t *testing.T) {
	job := tenantsJob{"jobs that sleep 20 µs", 20 * time.Microsecond, false}
	const d = 60 * time.Millisecond
	for _, noisy := range []bool{false, true} {
		b := newRecordingBatcher()
		x := runThinking(b, tenantsTable{job, tenantsShapes[0], false}, 1, 0, d, noisy)
		assert.True(t, b.closed, "b closed")
		assert.False(t, b.late, "no request after close")
		assert.GreaterOrEqual(t, x.elapsed, d-tenantsThink, "the clients ran until a request would start after d")
		requests, jobs := 0, 0
		for c := range tenantsClients {
			sizes := b.sizes[fmt.Sprint("client ", c+1)]
			// A client thinks 20 ms between requests, after a first pause
			// of up to 20 ms, and sends none that would start after 60 ms:
			// 2 or 3 requests, unless the machine is slow.
			assert.True(t, len(sizes) >= 1 && len(sizes) <= 3, "client %d sent %d requests", c+1, len(sizes))
			for _, n := range sizes {
				assert.True(t, n >= tenantsMinJobs && n <= tenantsMaxJobs, "a request of %d jobs", n)
				jobs += n
			}
			requests += len(sizes)
		}
		require.Len(t, x.lat, requests, "a latency per small request")
		assert.True(t, slices.IsSorted(x.lat), "latencies sorted")
		assert.Positive(t, x.lat[0], "every latency measured")
		assert.Equal(t, int64(jobs), x.smallJobs)
		if !noisy {
			assert.Zero(t, x.noisy)
			assert.NotContains(t, b.sizes, tenantsNoisyTenant)
			continue
		}
		sent := b.sizes[tenantsNoisyTenant]
		require.NotEmpty(t, sent, "the noisy client sent its requests as tenant %q", tenantsNoisyTenant)
		for _, n := range sent {
			assert.Equal(t, tenantsNoisyJobs, n)
		}
		assert.Positive(t, x.noisy, "noisy jobs ended while the small clients ran")
		assert.LessOrEqual(t, x.noisy, int64(tenantsNoisyJobs*len(sent)))
	}
}

func TestRunThinkingDrawsEachClientsRequestsFromTheRunsSeed(t *testing.T) {
	job := tenantsJob{"jobs that take no time", 0, false}
	first := func(run int) []int {
		b := newRecordingBatcher()
		runThinking(b, tenantsTable{job, tenantsShapes[0], false}, 1, run, tenantsThink+10*time.Millisecond, false) // a request at least from each client
		var sizes []int
		for c := range tenantsClients {
			sizes = append(sizes, b.sizes[fmt.Sprint("client ", c+1)][0])
		}
		return sizes
	}
	assert.Equal(t, first(1), first(1), "the same run gave different requests")
	assert.NotEqual(t, first(1), first(2), "two runs gave the same requests")
}

// Starting together, the clients send their first requests at once:
// every client's first request begins before any client's second, which
// comes tenantsThink later (their requests take no time here). The
// requests are those the spread-out shape draws.
func TestRunThinkingTogetherStartsEveryClientsRequestsAtOnce(t *testing.T) {
	job := tenantsJob{"jobs that take no time", 0, false}
	spread, together := newRecordingBatcher(), newRecordingBatcher()
	runThinking(spread, tenantsTable{job, tenantsShapes[0], false}, 1, 3, 2*tenantsThink+10*time.Millisecond, false)
	runThinking(together, tenantsTable{job, tenantsShapes[1], false}, 1, 3, 2*tenantsThink+10*time.Millisecond, false)
	require.True(t, tenantsShapes[1].together)
	firsts := together.order[:tenantsClients]
	for c := range tenantsClients {
		tenant := fmt.Sprint("client ", c+1)
		assert.Contains(t, firsts, tenant, "the first %d requests began together", tenantsClients)
		n := min(len(spread.sizes[tenant]), len(together.sizes[tenant]))
		require.Positive(t, n)
		assert.Equal(t, spread.sizes[tenant][:n], together.sizes[tenant][:n], "%s's requests", tenant)
	}
	assert.GreaterOrEqual(t, len(together.order), 2*tenantsClients, "a second request from each client")
}

// holdingBatcher runs a request's first job in the caller, then hands the
// job function to held and holds the rest of the request until release is
// closed.
type holdingBatcher struct {
	held    chan func(int)
	release chan struct{}
}

func (b *holdingBatcher) request(_ string, work []int, job func(int)) {
	job(work[0])
	b.held <- job
	<-b.release
	for _, n := range work[1:] {
		job(n)
	}
}

func (b *holdingBatcher) close() {}

func TestStartNoisyCountsTheJobsEndedBeforeStopAndSkipsTheRest(t *testing.T) {
	b := &holdingBatcher{held: make(chan func(int), 1), release: make(chan struct{})}
	var ran atomic.Int64
	stop := startNoisy(b, [][]int{{1, 1, 1}}, func(n int) { ran.Add(int64(n)) })
	job := <-b.held // the request's first job ran; the rest is held
	ended := make(chan int64)
	go func() { ended <- stop() }()
	// A probe through the noisy client's job function runs until stop has
	// set its flag; from then on, it returns at once.
	const probe = 1000
	for {
		before := ran.Load()
		job(probe)
		if ran.Load() == before {
			break
		}
		runtime.Gosched()
	}
	close(b.release)
	n := <-ended
	assert.Equal(t, int64(1), ran.Load()%probe, "the held jobs ran after stop")
	assert.GreaterOrEqual(t, n, int64(1), "the first job counted")
	assert.LessOrEqual(t, n, 1+ran.Load()/probe, "only jobs that ran counted")
	assert.Zero(t, startNoisy(b, nil, nil)(), "no noisy client, no jobs")
}

func TestRunCrowdTimesEverySmallRequestAndSendsTheNoisyOnesAsTheirTenant(t *testing.T) {
	small := batchWork(300, 1, 0)
	jobs := 0
	for _, w := range small {
		jobs += len(w)
	}
	for _, noisy := range [][][]int{nil, {{1, 2, 3}, {4, 5}}} {
		b := newRecordingBatcher()
		x := runCrowd(b, small, noisy)
		require.Len(t, x.lat, len(small), "a latency per small request")
		assert.True(t, slices.IsSorted(x.lat), "latencies sorted")
		assert.Positive(t, x.lat[0], "every latency measured")
		assert.Equal(t, int64(jobs), x.smallJobs)
		assert.Positive(t, x.elapsed)
		assert.True(t, b.closed, "b closed")
		assert.False(t, b.late, "no request after close")
		assert.Len(t, b.sizes[""], len(small), "the small requests, each of its own")
		if noisy == nil {
			assert.Zero(t, x.noisy)
			assert.NotContains(t, b.sizes, tenantsNoisyTenant)
		} else {
			// Each noisy request sent whole (5 jobs per two) is counted
			// once it ended; the last may have ended after the small ones.
			sent := len(b.sizes[tenantsNoisyTenant])
			assert.Positive(t, sent, "the noisy client sent its requests as tenant %q", tenantsNoisyTenant)
			assert.LessOrEqual(t, x.noisy, int64(3*sent), "noisy jobs counted")
		}
	}
}

func TestNoisyWorkIsSeededPerRunAndWithinItsBounds(t *testing.T) {
	const perMicro = 100
	a, b, other := noisyWork(perMicro, 1), noisyWork(perMicro, 1), noisyWork(perMicro, 2)
	require.True(t, slices.EqualFunc(a, b, slices.Equal), "the same run gave different requests")
	require.False(t, slices.EqualFunc(a, other, slices.Equal), "two runs gave the same requests")
	require.Len(t, a, crowdNoisyDraws)
	lo, hi := int(perMicro*batchMinSpin.Microseconds()), int(perMicro*batchMaxSpin.Microseconds())
	for _, w := range a {
		require.Len(t, w, tenantsNoisyJobs)
		for _, n := range w {
			require.True(t, n >= lo && n <= hi, "a job of %d rounds, want %d to %d", n, lo, hi)
		}
	}
}

func TestTenantsSamplesGivesTheMedianOfEachFigure(t *testing.T) {
	var s tenantsSamples
	for _, x := range []tenantsRun{
		{lat: []float64{1, 2, 3, 4}, elapsed: time.Second, smallJobs: 10, noisy: 100},
		{lat: []float64{5, 6}, elapsed: 2 * time.Second, smallJobs: 10, noisy: 300},
		{lat: []float64{7, 8, 9}, elapsed: time.Second, smallJobs: 30, noisy: 20},
	} {
		s.add(x)
	}
	assert.Equal(t, tenantsFigures{p50: 5, p99: 6, noisyJobsPerS: 100, jobsPerS: 110, requests: 3, p99s: []float64{4, 6, 9}}, s.figures(), "each run's p99 kept in run order")
}

func TestTenantStatsSumsEachTenantsBatches(t *testing.T) {
	ctx := context.Background()
	p := crew.NewGroup(2, crew.WithFairShare())
	job := func(context.Context) error {
		spin(10_000)
		return nil
	}
	// Tenant a: two batches of 3 jobs; tenant b: one batch of 1 job.
	var tenants [][]*crew.Batch[crew.Job]
	for _, sizes := range [][]int{{3, 3}, {1}} {
		var bs []*crew.Batch[crew.Job]
		for _, n := range sizes {
			b, _ := p.NewBatch(ctx, crew.WithTenant(string(rune('a'+len(tenants)))))
			for range n {
				require.NoError(t, b.Submit(ctx, job))
			}
			require.NoError(t, b.Wait())
			bs = append(bs, b)
		}
		tenants = append(tenants, bs)
	}
	require.NoError(t, p.Wait())
	got := tenantStats(tenants)
	require.Len(t, got, 2)
	assert.Equal(t, int64(6), got[0].Completed)
	assert.Equal(t, int64(1), got[1].Completed)
	for i, bs := range tenants {
		var sum time.Duration
		for _, b := range bs {
			require.Positive(t, b.Stats().RunTime, "a fair pool measures its batches' run time")
			sum += b.Stats().RunTime
		}
		assert.Equal(t, sum, got[i].RunTime, "tenant %d's run time: its batches' summed", i)
	}
}

func TestWeightsCheckMeasuresEachTenantAndLeavesNothingRunning(t *testing.T) {
	w := weightsCheck(2, []int{1, 3}, 20*time.Millisecond, 1000)
	require.Len(t, w.runTime, 2)
	require.Len(t, w.jobs, 2)
	assert.GreaterOrEqual(t, w.took, 20*time.Millisecond)
	// Over a window this short, one tenant may run nothing: a job whose
	// worker waited for a CPU is charged that wait, and its tenant waits
	// its turn back. What the harness must do is measure and sum.
	assert.Positive(t, w.runTime[0]+w.runTime[1], "the tenants ran")
	assert.Positive(t, w.jobs[0]+w.jobs[1], "the tenants' jobs ended")
	for i := range w.weights {
		assert.GreaterOrEqual(t, w.runTime[i], time.Duration(0), "tenant %d's run time", i)
	}
	assert.InDelta(t, 1, w.share(0)+w.share(1), 1e-9)
	assert.Equal(t, 0.25, w.due(0))
	assert.Equal(t, 0.75, w.due(1))
}
