package crew_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

func TestKeyedPoolKeepsEachKeysOrderUnderZipfKeys(t *testing.T) {
	const workers, jobs, keys = 8, 100_000, 1000
	order := newKeyOrder(keys)
	p := crew.NewPool(workers, func(_ context.Context, j keyedJob) error {
		order.start(j)
		order.end(j)
		return nil
	}, crew.WithKey(jobKey))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, keys-1)
	next := make([]int, keys)
	for range jobs {
		k := int(zipf.Uint64())
		require.NoError(t, p.Submit(context.Background(), keyedJob{key: k, seq: next[k]}))
		next[k]++
	}
	require.NoError(t, p.Wait())
	assert.Zero(t, order.breaches.Load(), "a key's jobs overlapped or ran out of submission order")
	s := p.Stats()
	assert.EqualValues(t, jobs, s.Completed)
	assert.Zero(t, s.Keys, "the key table is empty once the pool drained")
}

func TestKeyedPoolMemoryStaysFlatOverAMillionKeys(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("a million jobs")
	}
	// A bound keeps the backlog (queued jobs, active keys) small, so that
	// what the heap holds at the two points is what the pool kept.
	p := crew.NewPool(4, func(context.Context, keyedJob) error { return nil }, crew.WithKey(jobKey), crew.WithQueueSize(4))
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var after100k uint64
	for k := range 1_000_000 {
		require.NoError(t, p.Submit(context.Background(), keyedJob{key: k}))
		if k == 100_000 {
			after100k = heap()
		}
	}
	end := heap()
	assert.Less(t, int64(end)-int64(after100k), int64(1<<20), "the heap grew by %d bytes over 900,000 more keys", int64(end)-int64(after100k))
	require.NoError(t, p.Wait())
	assert.Zero(t, p.Stats().Keys)
}

func TestKeyedPoolPlacesNewKeysAwayFromALoadedWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		started := make(chan struct{}, 1)
		var others atomic.Int32
		p := crew.NewPool(4, func(_ context.Context, j keyedJob) error {
			if j.gate != nil {
				select {
				case started <- struct{}{}:
				default:
				}
				<-j.gate
				return nil
			}
			others.Add(1)
			return nil
		}, crew.WithKey(jobKey), crew.WithQueueSize(20))
		ctx := context.Background()
		for seq := range 6 { // key 0: one running, five queued, on one worker
			require.NoError(t, p.Submit(ctx, keyedJob{key: 0, seq: seq, gate: gate}))
		}
		<-started
		// One new key at a time, each placed while the other workers are idle:
		// none may land behind key 0, or it would never run.
		for k := int32(1); k <= 30; k++ {
			require.NoError(t, p.Submit(ctx, keyedJob{key: int(k)}))
			synctest.Wait() // the other workers ran it and are idle again
			require.Equal(t, k, others.Load(), "key %d landed behind key 0", k)
		}
		close(gate)
		require.NoError(t, p.Wait())
	})
}

func TestFreshKeyedPoolPlacesRoundRobin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var running atomic.Int32
		workersSeen := make([]atomic.Int32, 4)
		p := crew.NewPool(4, func(ctx context.Context, j keyedJob) error {
			workersSeen[crew.WorkerIndex(ctx)].Add(1)
			running.Add(1)
			<-j.gate
			return nil
		}, crew.WithKey(jobKey))
		for k := range 4 {
			require.NoError(t, p.Submit(context.Background(), keyedJob{key: k, gate: gate}))
		}
		synctest.Wait()
		require.EqualValues(t, 4, running.Load(), "four keys, four workers")
		for i := range workersSeen {
			assert.EqualValues(t, 1, workersSeen[i].Load(), "worker %d", i)
		}
		close(gate)
		require.NoError(t, p.Wait())
	})
}

func TestKeyedPoolWithOneWorker(t *testing.T) {
	var got []int
	p := crew.NewPool(1, func(_ context.Context, j keyedJob) error {
		got = append(got, j.key*1000+j.seq)
		return nil
	}, crew.WithKey(jobKey), crew.WithQueueSize(1))
	var want []int
	for seq := range 100 {
		for k := range 10 {
			require.NoError(t, p.Submit(context.Background(), keyedJob{key: k, seq: seq}))
			want = append(want, k*1000+seq)
		}
	}
	require.NoError(t, p.Wait())
	assert.Equal(t, want, got, "one worker runs everything in submission order")
}

func TestAKeyKeepsItsWorkerWhenAJobThereCallsGoexit(t *testing.T) {
	// WithConsistentHash pins each key to a worker: a Goexit in one of
	// the key's jobs leaves the key on that worker, whose new goroutine
	// runs the key's next jobs; WithKey keeps every worker taking keys.
	for name, opt := range map[string]crew.Option{
		"WithKey":            crew.WithKey(jobKey),
		"WithConsistentHash": crew.WithConsistentHash(jobKey),
	} {
		t.Run(name, func(t *testing.T) {
			var where [2]atomic.Int32 // the worker (plus 1) that ran key 7's first and last jobs
			p := crew.NewPool(3, func(ctx context.Context, j keyedJob) error {
				if j.key == 7 && j.seq == 0 {
					where[0].Store(int32(crew.WorkerIndex(ctx)) + 1)
					runtime.Goexit()
				}
				if j.key == 7 {
					where[1].Store(int32(crew.WorkerIndex(ctx)) + 1)
				}
				return nil
			}, opt)
			require.NoError(t, p.Submit(context.Background(), keyedJob{key: 7}))
			for k := range 100 {
				require.NoError(t, p.Submit(context.Background(), keyedJob{key: k, seq: 1}), "key %d", k)
			}
			require.ErrorIs(t, p.Wait(), crew.ErrGoexit)
			s := p.Stats()
			assert.EqualValues(t, 101, s.Completed)
			assert.EqualValues(t, 1, s.Replaced)
			if name == "WithConsistentHash" {
				assert.Equal(t, where[0].Load(), where[1].Load(), "key 7 stays on its worker")
			}
		})
	}
}

func TestKeyedPoolBadInput(t *testing.T) {
	assert.PanicsWithValue(t, "crew: WithKey: nil key function", func() { crew.WithKey[keyedJob, int](nil) })
	assert.PanicsWithValue(t, "crew: WithConsistentHash: nil key function", func() { crew.WithConsistentHash[keyedJob, int](nil) })
	assert.PanicsWithValue(t, "crew: WithKey and WithConsistentHash need the pool's own mailbox: drop WithMailbox", func() {
		crew.NewPool(1, func(context.Context, keyedJob) error { return nil }, crew.WithKey(jobKey),
			crew.WithMailbox(func() crew.Mailbox[keyedJob] { return crew.NewUnbounded[keyedJob]() }))
	})
	assert.Panics(t, func() {
		crew.NewPool(1, func(context.Context, string) error { return nil }, crew.WithKey(jobKey))
	}, "a key function for another job type")
}

func TestConsistentHashKeepsKeysOnTheirWorkersAndSpreadsThem(t *testing.T) {
	const workers, keys = 8, 10_000
	where := make([]atomic.Int32, keys)
	var moved atomic.Int32
	p := crew.NewPool(workers, func(ctx context.Context, j keyedJob) error {
		w := int32(crew.WorkerIndex(ctx)) + 1
		if old := where[j.key].Swap(w); old != 0 && old != w {
			moved.Add(1)
		}
		return nil
	}, crew.WithConsistentHash(jobKey))
	for round := range 3 {
		for k := range keys {
			require.NoError(t, p.Submit(context.Background(), keyedJob{key: k, seq: round}))
		}
	}
	require.NoError(t, p.Wait())
	assert.Zero(t, moved.Load(), "a key changed worker")
	perWorker := make([]int, workers)
	for k := range where {
		perWorker[where[k].Load()-1]++
	}
	for w, n := range perWorker {
		assert.InDelta(t, keys/workers, n, 0.2*keys/workers, "worker %d has %d keys", w, n)
	}
}

func TestKeyedPoolDoesNotAllocatePerJob(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	// A bound keeps the traffic steady: an unbounded pool fed faster than it
	// runs grows its key queues, and growth allocates.
	p := crew.NewPool(4, func(context.Context, keyedJob) error { return nil }, crew.WithKey(jobKey), crew.WithQueueSize(16))
	const jobs = 20_000
	submit := func() {
		for i := range jobs {
			_ = p.Submit(context.Background(), keyedJob{key: i % 100, seq: i})
		}
	}
	submit() // the key table reaches its size
	allocs := testing.AllocsPerRun(1, submit)
	require.NoError(t, p.Wait())
	assert.Less(t, allocs/jobs, 0.001, "%v allocations for %d jobs", allocs, jobs)
}

func TestKeyedRouterKeepsEachKeysOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const routees, msgs, keys = 4, 20_000, 200
		order := newKeyOrder(keys)
		var handled atomic.Int64
		done := make(chan struct{})
		r := crew.SpawnRouter(context.Background(), routees, func(_ context.Context, j keyedJob) error {
			order.start(j)
			order.end(j)
			if handled.Add(1) == msgs {
				close(done)
			}
			return nil
		}, crew.WithKey(jobKey))
		zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, keys-1)
		next := make([]int, keys)
		for range msgs {
			k := int(zipf.Uint64())
			require.NoError(t, r.Tell(context.Background(), keyedJob{key: k, seq: next[k]}))
			next[k]++
		}
		<-done
		assert.Zero(t, order.breaches.Load(), "a key's messages overlapped or ran out of order")
		synctest.Wait() // the last releases follow the handlers
		assert.Zero(t, r.Keys(), "the key table is empty once every message was handled")
		r.Stop()
		for _, ref := range r.Routees() {
			<-ref.Done()
		}
		assert.PanicsWithValue(t, "crew: WithKey and WithConsistentHash need the router's own mailbox: drop WithMailbox", func() {
			crew.SpawnRouter(context.Background(), 1, func(context.Context, keyedJob) error { return nil }, crew.WithKey(jobKey),
				crew.WithMailbox(func() crew.Mailbox[keyedJob] { return crew.NewUnbounded[keyedJob]() }))
		})
	})
}

func TestKeyedRouterReleasesTheKeysOfDeadLetters(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{})
	r := crew.SpawnRouter(context.Background(), 2, func(_ context.Context, j keyedJob) error {
		if j.seq == 0 && j.key == 0 {
			close(started)
			<-gate
		}
		return nil
	}, crew.WithKey(jobKey), crew.WithDeadLetters(func(crew.DeadLetter) {}))
	for seq := range 5 {
		require.NoError(t, r.Tell(context.Background(), keyedJob{key: 0, seq: seq}))
	}
	<-started
	r.Stop() // the four queued messages of key 0 become dead letters
	close(gate)
	for _, ref := range r.Routees() {
		<-ref.Done()
	}
	assert.Zero(t, r.Keys(), "no key stays bound to a stopped routee")
}

func TestAKeysNextJobGoesBeforeJobsSubmittedAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Two workers, one held. a0 runs on the other; a1 waits behind it, then
		// b0 and c0, of free keys, queue. When a0 ends, a1 (submitted before b0
		// and c0) runs next, though it joined the backlog after them.
		held, hold := make(chan struct{}), make(chan struct{})
		a0started, a0release := make(chan struct{}), gateFor(t)
		var rec recorder
		p := crew.NewPool(2, func(_ context.Context, j keyedJob) error {
			switch {
			case j.key < 0:
				close(held)
				<-hold
			case j.key == 1 && j.seq == 0:
				close(a0started)
				<-a0release
			default:
				rec.add(j.key*10 + j.seq)
			}
			return nil
		}, crew.WithKey(jobKey))
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, keyedJob{key: -1}))
		<-held
		require.NoError(t, p.Submit(ctx, keyedJob{key: 1, seq: 0}))
		<-a0started
		for _, j := range []keyedJob{{key: 1, seq: 1}, {key: 2}, {key: 3}} {
			require.NoError(t, p.Submit(ctx, j))
		}
		close(a0release)
		synctest.Wait()
		require.Len(t, rec.get(), 3, "the free worker ran a1, b0 and c0")
		close(hold)
		require.NoError(t, p.Wait())
		assert.Equal(t, []int{11, 20, 30}, rec.get())
	})
}

func TestAKeyedRouterRefusesNothingWhileARouteeLives(t *testing.T) {
	for name, opt := range map[string]crew.Option{
		"WithKey":            crew.WithKey(jobKey),
		"WithConsistentHash": crew.WithConsistentHash(jobKey),
	} {
		t.Run(name, func(t *testing.T) {
			r := crew.SpawnRouter(context.Background(), 4, func(context.Context, keyedJob) error { return nil }, opt)
			routees := r.Routees()
			var wg sync.WaitGroup
			var stopped atomic.Int64
			for g := range 4 {
				wg.Go(func() {
					for i := range 2000 {
						err := r.Tell(context.Background(), keyedJob{key: (g*2000 + i) % 64})
						if errors.Is(err, crew.ErrStopped) {
							t.Errorf("Tell: %v, with routee 3 live (%d stopped)", err, stopped.Load())
							return
						}
					}
				})
			}
			for i := range 3 { // the last routee stays
				routees[i].Stop()
				stopped.Add(1)
			}
			wg.Wait()
			r.Stop()
			for _, ref := range routees {
				<-ref.Done()
			}
		})
	}
}

func TestBroadcastOnAKeyedRouterKeepsEachKeysOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, perKey = 4, 200
		order := newKeyOrder(keys)
		var handled atomic.Int64
		r := crew.SpawnRouter(context.Background(), 4, func(_ context.Context, j keyedJob) error {
			if j.seq < 0 { // a broadcast copy: outside every key
				runtime.Gosched()
				return nil
			}
			order.start(j)
			runtime.Gosched() // let the others run meanwhile
			order.end(j)
			handled.Add(1)
			return nil
		}, crew.WithKey(jobKey))
		for s := range perKey {
			for k := range keys {
				require.NoError(t, r.Tell(context.Background(), keyedJob{key: k, seq: s}))
			}
			if s%4 == 0 { // its copies' ends must not let a key's next message go
				require.NoError(t, r.Broadcast(context.Background(), keyedJob{key: s % keys, seq: -1}))
			}
		}
		synctest.Wait()
		require.EqualValues(t, keys*perKey, handled.Load())
		r.Stop()
		for _, ref := range r.Routees() {
			<-ref.Done()
		}
		assert.Zero(t, order.breaches.Load(), "messages of one key overlapped or ran out of order")
	})
}
