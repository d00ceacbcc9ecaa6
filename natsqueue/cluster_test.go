package natsqueue_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/internal/embed"
	"github.com/crewlib/crew/natsqueue/natstest"
)

// connectAll returns a JetStream client of the cluster, connected to any
// of its servers and reconnecting to the others.
func connectAll(t testing.TB, servers []*server.Server) jetstream.JetStream {
	t.Helper()
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	return connectURL(t, strings.Join(urls, ","))
}

func TestWithReplicasMakesAReplicatedStreamAndRefusesAnother(t *testing.T) {
	servers := natstest.Cluster(t, 3)
	js := connectAll(t, servers)
	_, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(3))
	require.NoError(t, err)
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	assert.Equal(t, 3, stream.CachedInfo().Config.Replicas)

	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	assert.NoError(t, err, "without WithReplicas, Open binds whatever the replicas")
	_, err = natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(1))
	assert.ErrorIs(t, err, natsqueue.ErrIncompatible)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, 3, info.Config.Replicas, "a refused Open leaves the stream as it was")

	_, err = natsqueue.Open[int](ctx(t), js, "more", natsqueue.WithReplicas(5))
	assert.Error(t, err, "more replicas than servers: the server's error")
	assert.NotErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.Panics(t, func() { natsqueue.WithReplicas(6) })
	assert.Panics(t, func() { natsqueue.WithReplicas(0) })
}

func TestAReplicatedQueueLosesNothingWhenTheStreamsLeaderDies(t *testing.T) {
	servers := natstest.Cluster(t, 3)
	js := connectAll(t, servers)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(3), natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	const n = 200
	tellAll(t, q, n/2)

	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	require.NotNil(t, info.Cluster)
	lost := 0
	for _, s := range servers {
		if s.Name() == info.Cluster.Leader {
			s.Shutdown() // the stream's leader, with half the jobs told
			s.WaitForShutdown()
			lost++
		}
	}
	require.Equal(t, 1, lost, "the stream's leader %q is one of the servers", info.Cluster.Leader)
	for i := n / 2; i < n; i++ { // Tell retries while the others elect a leader
		require.NoError(t, q.Tell(ctx(t), i))
	}
	c := newTally(n)
	stop := serving(t, q, 4, func(_ context.Context, job int) error { c.ran(job, nil); return nil })
	c.wait(t)
	require.NoError(t, stop())
	runs, _ := c.snapshot()
	for i := range n {
		assert.GreaterOrEqual(t, runs[i], 1, "job %d", i)
	}
}

// Serve goes on when a server is lost while it runs: the stream's leader,
// or another one.
func TestServeGoesOnWhenAServerOfTheClusterIsLost(t *testing.T) {
	for _, lose := range []string{"the stream's leader", "a server that does not lead the stream"} {
		t.Run(lose, func(t *testing.T) {
			servers := natstest.Cluster(t, 3)
			js := connectAll(t, servers)
			q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(3), natsqueue.WithAckWait(testAckWait))
			require.NoError(t, err)
			const n = 300
			tellAll(t, q, n/2)
			c := newTally(n)
			var done atomic.Int32
			third := make(chan struct{})
			stop := serving(t, q, 4, func(_ context.Context, job int) error {
				c.ran(job, nil)
				if done.Add(1) == n/3 {
					close(third)
				}
				return nil
			})
			<-third // a third of the jobs ran: Serve holds some, and pulls on
			stream, err := js.Stream(ctx(t), "jobs")
			require.NoError(t, err)
			info, err := stream.Info(ctx(t))
			require.NoError(t, err)
			require.NotNil(t, info.Cluster)
			leads := lose == "the stream's leader"
			for _, s := range servers {
				if (s.Name() == info.Cluster.Leader) == leads {
					embed.Stop(s)
					break
				}
			}
			for i := n / 2; i < n; i++ {
				require.NoError(t, q.Tell(ctx(t), i))
			}
			c.wait(t)
			require.NoError(t, stop())
			runs, _ := c.snapshot()
			for i := range n {
				assert.GreaterOrEqual(t, runs[i], 1, "job %d", i)
			}
		})
	}
}

// Two worker processes and the test as producer, on a cluster of 3 with
// the stream on 3 replicas: the stream's leader is shut down after a
// third of the jobs ran. Every job runs at least once; a job runs again
// only if its acknowledgement was lost with the leader, so at most what
// the processes held: 2 processes × (2 workers + 2 prefetched).
func TestProcessesOnAClusterLoseNothingWhenTheStreamsLeaderDies(t *testing.T) {
	servers := natstest.Cluster(t, 3)
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	url := strings.Join(urls, ",")
	js := connectAll(t, servers)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(3), natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)

	events := make(chan event, 10000)
	l := newLedger()
	ready := 0
	a := startWorker(t, url, "a", 0, events)
	b := startWorker(t, url, "b", 100*time.Microsecond, events)
	await(t, events, func(e event) bool {
		if e.what == "ready" {
			ready++
		}
		return ready == 2
	}, l.record)

	const n = 600
	tellAll(t, q, n)
	await(t, events, func(event) bool { return len(l.done) >= n/3 }, l.record)
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	require.NotNil(t, info.Cluster)
	for _, s := range servers {
		if s.Name() == info.Cluster.Leader {
			embed.Stop(s)
		}
	}
	await(t, events, func(event) bool { return len(l.done) == n }, l.record)
	a.stop(t)
	b.stop(t)
	l.drain(events)

	runs := 0
	for i := range n {
		require.NotEmpty(t, l.done[i], "job %d ran", i)
		runs += len(l.done[i])
	}
	t.Logf("jobs per process: %v; %d duplicates", l.per, runs-n)
	assert.LessOrEqual(t, runs-n, 2*(2+2), "runs beyond the first")
}
