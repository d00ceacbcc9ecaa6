package natsqueue_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew/natsqueue"
)

// crashRuns is how many runs TestNothingIsLostWhenAServerAndAWorkerAreKilled
// makes; the figure is of 20 (-natsqueue.crashruns 20).
var crashRuns = flag.Int("natsqueue.crashruns", 2, "runs of the cluster crash test")

// connectURL returns a JetStream client of the servers at url (commas
// between them), reconnecting to the others when one is lost.
func connectURL(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// Two worker processes on a cluster of 3 server processes, the queue on 3
// replicas; every 7th job fails permanently. A third of the way through,
// one worker and the server that leads the stream are SIGKILLed. Every
// job then has run, or is a stored dead letter: none is lost.
func TestNothingIsLostWhenAServerAndAWorkerAreKilled(t *testing.T) {
	for run := range *crashRuns {
		t.Run(fmt.Sprint("run ", run), func(t *testing.T) {
			const n, every = 300, 7
			c := startCluster(t, 3)
			js := connectURL(t, c.url())
			q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(3), natsqueue.WithAckWait(testAckWait))
			require.NoError(t, err)
			events := make(chan event, 10*n)
			l := newLedger()
			ready := 0
			env := deadEnv + "=" + fmt.Sprint(every)
			a := startWorker(t, c.url(), "a", time.Millisecond, events, env)
			b := startWorker(t, c.url(), "b", 2*time.Millisecond, events, env)
			await(t, events, func(e event) bool {
				if e.what == "ready" {
					ready++
				}
				return ready == 2
			}, l.record)
			tellAll(t, q, n)
			await(t, events, func(event) bool { return len(l.done) >= n/3 }, l.record)
			stream, err := js.Stream(ctx(t), "jobs")
			require.NoError(t, err)
			info, err := stream.Info(ctx(t))
			require.NoError(t, err)
			require.NotNil(t, info.Cluster)
			a.kill(t)
			c.kill(t, info.Cluster.Leader)

			dead := map[int]bool{}
			for i := 0; i < n; i += every {
				dead[i] = true
			}
			await(t, events, func(event) bool { return len(l.done) == n-len(dead) }, l.record)
			stored := map[int]int{}
			eventually(t, func() bool {
				clear(stored)
				c, cancel := context.WithTimeout(ctx(t), time.Second) // a request no leader answers
				defer cancel()
				for d, err := range q.DeadLetters().All(c) {
					if err != nil {
						return false
					}
					job, err := q.Decode(d)
					require.NoError(t, err)
					stored[job]++
				}
				return len(stored) == len(dead)
			}, "every dead letter stored")
			b.stop(t)
			l.drain(events)
			for i := range n {
				if dead[i] {
					assert.GreaterOrEqual(t, stored[i], 1, "job %d's dead letter", i)
					assert.Empty(t, l.done[i], "job %d cannot succeed", i)
				} else {
					assert.NotEmpty(t, l.done[i], "job %d ran", i)
					assert.Zero(t, stored[i], "job %d is no dead letter", i)
				}
			}
			var twice []string
			for job, k := range stored {
				if k > 1 {
					twice = append(twice, fmt.Sprint(job))
				}
			}
			t.Logf("jobs per process: %v; dead letters %d, stored twice: [%s]", l.per, len(stored), strings.Join(twice, " "))
		})
	}
}

// A delayed job, on a cluster whose stream's leader is lost before its
// time, runs after it once, and no earlier.
func TestADelayedJobRunsAfterAServerIsLost(t *testing.T) {
	c := startCluster(t, 3)
	js := connectURL(t, c.url())
	q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithReplicas(3), natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	at := time.Now().Add(2 * time.Second)
	require.NoError(t, q.TellWith(ctx(t), 1, natsqueue.RunAt(at)))
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	require.NotNil(t, info.Cluster)
	c.kill(t, info.Cluster.Leader)
	rec := newRecorder()
	stop := serving(t, q, 1, rec.handle(nil))
	r := rec.next(t)
	assert.Equal(t, 1, r.job)
	assert.False(t, r.at.Before(at), "%v early", at.Sub(r.at))
	t.Logf("ran %v after its time (the cluster elected a leader meanwhile)", r.at.Sub(at))
	require.NoError(t, stop())
	select {
	case r := <-rec.ch:
		t.Errorf("job %d ran again", r.job)
	default:
	}
}

// A dead letter outlives the process that stored it and the dead-letter
// stream's leader: another process lists it and replays it.
func TestADeadLetterSurvivesItsWriterAndItsStreamsLeader(t *testing.T) {
	c := startCluster(t, 3)
	q, err := natsqueue.Open[int](ctx(t), connectURL(t, c.url()), "jobs", natsqueue.WithReplicas(3), natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	events := make(chan event, 100)
	l := newLedger()
	w := startWorker(t, c.url(), "w", 0, events, deadEnv+"=1") // every job fails
	await(t, events, func(e event) bool { return e.what == "ready" }, l.record)
	tellAll(t, q, 3)
	js := connectURL(t, c.url())
	dl, err := natsqueue.OpenDeadLetters(ctx(t), js, "jobs")
	require.NoError(t, err)
	eventually(t, func() bool { n, err := dl.Count(ctx(t)); return err == nil && n == 3 }, "3 dead letters stored")
	w.kill(t)
	info, err := js.Stream(ctx(t), "DEAD_jobs")
	require.NoError(t, err)
	si, err := info.Info(ctx(t))
	require.NoError(t, err)
	require.NotNil(t, si.Cluster)
	assert.Equal(t, 3, si.Config.Replicas, "on the queue's replicas")
	c.kill(t, si.Cluster.Leader)

	var jobs []int
	eventually(t, func() bool {
		jobs = jobs[:0]
		c, cancel := context.WithTimeout(ctx(t), time.Second) // a request no leader answers
		defer cancel()
		for d, err := range dl.All(c) {
			if err != nil {
				return false
			}
			job, err := q.Decode(d)
			require.NoError(t, err)
			assert.Equal(t, natsqueue.ReasonPermanent, d.Reason)
			jobs = append(jobs, job)
		}
		return len(jobs) == 3
	}, "the dead letters are there after the leader's loss")
	assert.ElementsMatch(t, []int{0, 1, 2}, jobs)
	c2, cancel := context.WithTimeout(ctx(t), 10*time.Second)
	defer cancel()
	n, err := dl.ReplayAll(c2, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	rec := newRecorder()
	stop := serving(t, q, 2, rec.handle(nil))
	var ran []int
	for range 3 {
		r := rec.next(t)
		assert.Equal(t, 1, r.d.Attempt)
		ran = append(ran, r.job)
	}
	require.NoError(t, stop())
	assert.ElementsMatch(t, []int{0, 1, 2}, ran)
}
