package natsqueue_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// benchWorkers is Serve's worker count in BenchmarkServe; Serve's default
// fetch is then 2×benchWorkers (a job per worker plus the prefetch), the
// fetch size of the plain loop it is compared with.
const benchWorkers = 8

// fill publishes n jobs asynchronously and waits until all are stored. It
// waits for each thousand before the next, under nats.go's limit of
// outstanding async publishes (4,000), which a slow cluster would reach.
func fill(b *testing.B, js jetstream.JetStream, subject string, n int) {
	b.Helper()
	for i := range n {
		_, err := js.PublishAsync(subject, []byte(strconv.Itoa(i)))
		require.NoError(b, err)
		if (i+1)%1000 != 0 && i+1 != n {
			continue
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(testTimeout):
			b.Fatal("async publishes not acknowledged")
		}
	}
}

// BenchmarkServe compares Serve's throughput, with no-op handlers, with a
// plain nats.go loop that fetches as many jobs at a time and acks each: the
// jobs are in the stream before the timer starts; it stops when the last
// job has run.
func BenchmarkServe(b *testing.B) {
	s := natstest.Server(b)
	benchServe(b, connect(b, s), []benchSetting{{"", nil}})
}

// BenchmarkServeOnACluster runs BenchmarkServe on a cluster of 3 servers,
// the queue's stream on 3 replicas and on 1.
func BenchmarkServeOnACluster(b *testing.B) {
	servers := natstest.Cluster(b, 3)
	benchServe(b, connectAll(b, servers), []benchSetting{
		{"replicas 3/", []natsqueue.Option{natsqueue.WithReplicas(3)}},
		{"replicas 1/", []natsqueue.Option{natsqueue.WithReplicas(1)}},
	})
}

// A benchSetting is a prefix of benchmark names and the options of their
// queue.
type benchSetting struct {
	prefix string
	opts   []natsqueue.Option
}

// benchServe runs Serve and the plain loop on js, for each of settings.
func benchServe(b *testing.B, js jetstream.JetStream, settings []benchSetting) {
	seq := 0
	next := func(b *testing.B, opts []natsqueue.Option) *natsqueue.Queue[int] {
		seq++
		q, err := natsqueue.Open[int](context.Background(), js, "bench"+strconv.Itoa(seq), opts...)
		require.NoError(b, err)
		fill(b, js, natsqueue.Subject(q), b.N)
		return q
	}
	for _, s := range settings {
		b.Run(s.prefix+"natsqueue.Serve", func(b *testing.B) { serveAll(b, next(b, s.opts)) })
		b.Run(s.prefix+"plain pull loop", func(b *testing.B) { pullAll(b, js, next(b, s.opts)) })
	}
}

// serveAll times Serve running q's b.N jobs.
func serveAll(b *testing.B, q *natsqueue.Queue[int]) {
	var n atomic.Int64
	all := make(chan struct{})
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.ResetTimer()
	go func() {
		done <- natsqueue.Serve(c, q, benchWorkers, func(context.Context, int) error {
			if n.Add(1) == int64(b.N) {
				close(all)
			}
			return nil
		})
	}()
	<-all
	b.StopTimer()
	cancel()
	require.NoError(b, <-done)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// pullAll times a plain nats.go loop taking and acking q's b.N jobs.
func pullAll(b *testing.B, js jetstream.JetStream, q *natsqueue.Queue[int]) {
	cons, err := js.Consumer(context.Background(), q.Name(), "natsqueue")
	require.NoError(b, err)
	b.ResetTimer()
	var batch jetstream.MessageBatch
	for got := 0; got < b.N; {
		batch, err = cons.Fetch(2*benchWorkers, jetstream.FetchMaxWait(time.Second))
		require.NoError(b, err)
		for m := range batch.Messages() {
			var job int
			if err := (natsqueue.JSON{}).Unmarshal(m.Data(), &job); err != nil {
				b.Fatal(err)
			}
			_ = m.Ack()
			if got++; got == b.N {
				break // as Serve's timing ends with the last job, not its batch
			}
		}
	}
	b.StopTimer()
	for range batch.Messages() { // the last batch ends at its wait: its goroutine with it
	}
	require.NoError(b, js.Conn().Flush())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkBalance runs 1000 jobs on two worker processes (2 workers each)
// whose jobs take 1 ms and 10 ms, and reports the fast one's share of the
// jobs: 10/11 = 0.909 would be in proportion to their speeds.
func BenchmarkBalance(b *testing.B) {
	const jobs = 1000
	for range b.N {
		s := natstest.Server(b)
		events := make(chan event, 2*jobs+100)
		l := newLedger()
		ready := 0
		fast := startWorker(b, s.ClientURL(), "fast", time.Millisecond, events)
		slow := startWorker(b, s.ClientURL(), "slow", 10*time.Millisecond, events)
		await(b, events, func(e event) bool {
			if e.what == "ready" {
				ready++
			}
			return ready == 2
		}, l.record)
		_, q := openOn(b, s)
		tellers, tctx := crew.WithContext(context.Background(), 16)
		for i := range jobs {
			require.NoError(b, tellers.Submit(tctx, func(ctx context.Context) error { return q.Tell(ctx, i) }))
		}
		require.NoError(b, tellers.Wait())
		await(b, events, func(event) bool { return len(l.done) == jobs }, l.record)
		fast.stop(b)
		slow.stop(b)
		b.ReportMetric(float64(l.per["fast"])/jobs, "fast-share")
	}
}

// BenchmarkLen reads a queue's depth, the cost of a routing decision among
// queues, beside the depth of a crew actor's mailbox.
func BenchmarkLen(b *testing.B) {
	_, _, q := open(b)
	b.Run("Queue.Len", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q.Len()
		}
	})
	b.Run("Queue.Len parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q.Len()
			}
		})
	})
	b.Run("crew Ref.Len", func(b *testing.B) {
		r := crew.Spawn(context.Background(), func(context.Context, int) error { return nil })
		defer func() { r.Stop(); <-r.Done() }()
		b.ReportAllocs()
		for b.Loop() {
			r.Len()
		}
	})
}

// BenchmarkServerLoss runs 20,000 jobs already in a queue on a cluster of
// 3 servers, the stream on 3 replicas, with Serve's no-op handlers, shuts
// a server down after a third of them (the stream's leader, or one that
// does not lead it), and reports the pause: the longest time between two
// first deliveries' ends from the loss on (for the leader, the cluster
// elects another meanwhile; no job is lost); the time from the loss to
// the first job's end after it; and the jobs run again (their delivery's
// attempt above 1: jobs the server had sent through the lost server,
// held until AckWait, 30 s, and left out of the pause, as they run after
// the others).
// It logs what the lost server was to Serve: the consumer's leader (which
// JetStream elects apart from the stream's), the server Serve's
// connection was on, both or neither. Each op is one run, on a cluster of
// its own: run it with -benchtime 1x -count 5.
func BenchmarkServerLoss(b *testing.B) {
	b.Run("leader", func(b *testing.B) { benchServerLoss(b, true) })
	b.Run("follower", func(b *testing.B) { benchServerLoss(b, false) })
}

func benchServerLoss(b *testing.B, leads bool) {
	const jobs = 20_000
	for range b.N {
		b.StopTimer()
		servers := natstest.Cluster(b, 3)
		js := connectAll(b, servers)
		q, err := natsqueue.Open[int](context.Background(), js, "loss", natsqueue.WithReplicas(3))
		require.NoError(b, err)
		fill(b, js, natsqueue.Subject(q), jobs)
		info, err := js.Stream(context.Background(), "loss")
		require.NoError(b, err)
		leader := info.CachedInfo().Cluster.Leader
		cons, err := js.Consumer(context.Background(), "loss", "natsqueue")
		require.NoError(b, err)
		consumerLeader := cons.CachedInfo().Cluster.Leader
		ends := make([]time.Time, jobs*2) // a job may end twice
		var n, again atomic.Int64
		seen := make([]atomic.Bool, jobs)
		var distinct atomic.Int64
		all, third := make(chan struct{}), make(chan struct{})
		c, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		go func() {
			done <- natsqueue.Serve(c, q, benchWorkers, func(ctx context.Context, job int) error {
				if d, _ := natsqueue.DeliveryFrom(ctx); d.Attempt > 1 {
					// Held for AckWait: they end the run, not a pause.
					again.Add(1)
				} else {
					ends[n.Add(1)-1] = time.Now()
				}
				if !seen[job].Swap(true) {
					switch distinct.Add(1) {
					case jobs / 3:
						close(third)
					case jobs:
						close(all)
					}
				}
				return nil
			})
		}()
		<-third
		var lost time.Time
		on := js.Conn().ConnectedServerName()
		for _, s := range servers {
			if (s.Name() == leader) == leads {
				b.Logf("the lost server led the consumer: %v; Serve's connection was on it: %v", s.Name() == consumerLeader, s.Name() == on)
				lost = time.Now()
				s.Shutdown()
				s.WaitForShutdown()
				break
			}
		}
		<-all
		b.StopTimer()
		cancel()
		require.NoError(b, <-done)
		after := slices.SortedFunc(slices.Values(ends[:n.Load()]), time.Time.Compare)
		var pause, first time.Duration
		prev := lost
		for _, t := range after {
			if t.After(lost) {
				if prev == lost {
					first = t.Sub(lost)
				}
				pause = max(pause, t.Sub(prev))
				prev = t
			}
		}
		b.ReportMetric(pause.Seconds()*1000, "ms-pause")
		b.ReportMetric(first.Seconds()*1000, "ms-to-first")
		b.ReportMetric(float64(again.Load()), "run-again")
	}
}

// BenchmarkServerKill runs 20,000 jobs already in a queue on a cluster of
// 3 server processes, the stream on 3 replicas, with Serve's no-op
// handlers, SIGKILLs the process of the consumer's leader after a third
// of them (the server Serve's pulls wait on; with the stream's leader
// alone, jobs go on while the stream elects another), and reports the
// pause (the longest time between two first deliveries' ends from the
// kill on), the cluster's own part of it (from the kill until the
// consumer reports a new leader, polled every 10 ms), and what natsqueue
// adds: from that election to the first job's end after the pause. Each op is one run on
// a cluster of its own: run it with -benchtime 1x -count 5.
func BenchmarkServerKill(b *testing.B) {
	const jobs = 20_000
	for range b.N {
		b.StopTimer()
		c := startCluster(b, 3)
		js := connectURL(b, c.url())
		q, err := natsqueue.Open[int](context.Background(), js, "kill", natsqueue.WithReplicas(3))
		require.NoError(b, err)
		fill(b, js, natsqueue.Subject(q), jobs)
		cons, err := js.Consumer(context.Background(), "kill", "natsqueue")
		require.NoError(b, err)
		leader := cons.CachedInfo().Cluster.Leader
		ends := make([]time.Time, jobs)
		var n atomic.Int64
		seen := make([]atomic.Bool, jobs)
		var distinct atomic.Int64
		all, third := make(chan struct{}), make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		go func() {
			done <- natsqueue.Serve(ctx, q, benchWorkers, func(ctx context.Context, job int) error {
				if d, _ := natsqueue.DeliveryFrom(ctx); d.Attempt == 1 {
					ends[n.Add(1)-1] = time.Now()
				}
				if !seen[job].Swap(true) {
					switch distinct.Add(1) {
					case jobs / 3:
						close(third)
					case jobs:
						close(all)
					}
				}
				return nil
			})
		}()
		<-third
		killed := time.Now()
		c.kill(b, leader)
		elected := electedAfter(b, c.url(), "kill", leader)
		<-all
		b.StopTimer()
		cancel()
		require.NoError(b, <-done)
		after := slices.SortedFunc(slices.Values(ends[:min(int(n.Load()), jobs)]), time.Time.Compare)
		var pause time.Duration
		var resumed time.Time
		prev := killed
		for _, t := range after {
			if t.After(killed) {
				if t.Sub(prev) > pause {
					pause, resumed = t.Sub(prev), t
				}
				prev = t
			}
		}
		b.ReportMetric(pause.Seconds()*1000, "ms-pause")
		b.ReportMetric(elected.Sub(killed).Seconds()*1000, "ms-election")
		b.ReportMetric(resumed.Sub(elected).Seconds()*1000, "ms-added")
	}
}

// electedAfter polls, every 10 ms, the consumer of the stream called name
// on the servers at url until it has a leader other than lost, and
// returns when it was seen.
func electedAfter(b *testing.B, url, name, lost string) time.Time {
	b.Helper()
	js := connectURL(b, url)
	led := func(get func(context.Context) (string, error)) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		l, err := get(ctx)
		return err == nil && l != "" && l != lost
	}
	consumerLed := func(ctx context.Context) (string, error) {
		c, err := js.Consumer(ctx, name, "natsqueue")
		if err != nil || c.CachedInfo().Cluster == nil {
			return "", err
		}
		return c.CachedInfo().Cluster.Leader, nil
	}
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if led(consumerLed) {
			return time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("no leader elected within %v", testTimeout)
	return time.Time{}
}

// BenchmarkDelayedJob tells 10 jobs RunAt 1 to 1.9 s ahead (100 ms apart)
// on an idle cluster of 3 servers, the stream on 3 replicas, and reports
// how late their handlers start after their times: the median and the
// most. A job that starts early fails the benchmark. Run it with
// -benchtime 1x -count 5.
func BenchmarkDelayedJob(b *testing.B) {
	const jobs = 10
	for range b.N {
		b.StopTimer()
		servers := natstest.Cluster(b, 3)
		js := connectAll(b, servers)
		q, err := natsqueue.Open[int](context.Background(), js, "delayed", natsqueue.WithReplicas(3))
		require.NoError(b, err)
		ats := make([]time.Time, jobs)
		late := make([]time.Duration, jobs)
		var left sync.WaitGroup
		left.Add(jobs)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- natsqueue.Serve(ctx, q, jobs, func(_ context.Context, job int) error {
				late[job] = time.Since(ats[job])
				left.Done()
				return nil
			})
		}()
		b.StartTimer()
		now := time.Now()
		for i := range jobs {
			ats[i] = now.Add(time.Second + time.Duration(i)*100*time.Millisecond)
			require.NoError(b, q.TellWith(context.Background(), i, natsqueue.RunAt(ats[i])))
		}
		left.Wait()
		b.StopTimer()
		cancel()
		require.NoError(b, <-done)
		slices.Sort(late)
		if late[0] < 0 {
			b.Fatalf("a job started %v early", -late[0])
		}
		b.ReportMetric(late[jobs/2].Seconds()*1000, "ms-late-median")
		b.ReportMetric(late[jobs-1].Seconds()*1000, "ms-late-max")
	}
}
