package natsqueue_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenFromManyClientsAtOnceMakesOneQueue(t *testing.T) {
	s := natstest.Server(t)
	var wg sync.WaitGroup
	queues := make([]*natsqueue.Queue[int], 8)
	errs := make([]error, len(queues))
	for i := range queues {
		js := connect(t, s)
		wg.Go(func() { queues[i], errs[i] = natsqueue.Open[int](ctx(t), js, "jobs") })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, queues[0].Tell(ctx(t), 1))
	js := connect(t, s)
	var names []string
	for info := range js.ListStreams(ctx(t)).Info() {
		names = append(names, info.Config.Name)
	}
	assert.ElementsMatch(t, []string{"jobs", "DEAD_jobs"}, names, "the queue's stream and its dead letters'")
	assert.EqualValues(t, 1, consumerInfo(t, js).NumPending, "all share one consumer")
}

func TestOpenRefusesAnIncompatibleStreamAndLeavesIt(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	cfg := jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"}, Retention: jetstream.LimitsPolicy}
	_, err := js.CreateStream(ctx(t), cfg)
	require.NoError(t, err)

	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	require.ErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.EqualError(t, err, `natsqueue: Open "jobs": incompatible stream or consumer: stream has retention Limits, not WorkQueue`,
		"the prefix once, the sentinel's words after it")
	assert.EqualError(t, natsqueue.ErrIncompatible, "natsqueue: incompatible stream or consumer", "the sentinel's text is kept")

	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, jetstream.LimitsPolicy, info.Config.Retention, "unchanged")
	assert.Zero(t, info.State.Consumers, "no consumer added")
}

func TestOpenRefusesAStreamWithoutTheQueueSubject(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	_, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "jobs", Subjects: []string{"other"}, Retention: jetstream.WorkQueuePolicy})
	require.NoError(t, err)
	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	require.ErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.Contains(t, err.Error(), "natsqueue.jobs")
}

func TestOpenRefusesAnotherAckWait(t *testing.T) {
	s, js, _ := open(t)
	_, err := natsqueue.Open[int](ctx(t), connect(t, s), "jobs", natsqueue.WithAckWait(5*time.Second))
	require.ErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.Contains(t, err.Error(), "AckWait")
	assert.Equal(t, testAckWait, consumerInfo(t, js).Config.AckWait, "the consumer is unchanged")
}

func TestOpenRefusesAStreamThatDropsJobs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*jetstream.StreamConfig)
		says string
	}{
		{"a maximum age", func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }, "MaxAge"},
		{"a message limit", func(c *jetstream.StreamConfig) { c.MaxMsgs = 10 }, "MaxMsgs"},
		{"a byte limit", func(c *jetstream.StreamConfig) { c.MaxBytes = 1 << 20 }, "MaxBytes"},
		{"memory storage", func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage }, "memory"},
	} {
		t.Run("with "+tc.name, func(t *testing.T) {
			s := natstest.Server(t)
			js := connect(t, s)
			cfg := jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"}, Retention: jetstream.WorkQueuePolicy}
			tc.cfg(&cfg)
			_, err := js.CreateStream(ctx(t), cfg)
			require.NoError(t, err)
			_, err = natsqueue.Open[int](ctx(t), js, "jobs")
			require.ErrorIs(t, err, natsqueue.ErrIncompatible)
			assert.Contains(t, err.Error(), tc.says)
			assert.Equal(t, 1, strings.Count(err.Error(), "natsqueue:"), "the prefix once: %v", err)
			stream, err := js.Stream(ctx(t), "jobs")
			require.NoError(t, err)
			assert.Zero(t, stream.CachedInfo().State.Consumers, "no consumer added")
		})
	}
}

func TestOpenAcceptsALimitedStreamThatRefusesTellWhenFull(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	_, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"},
		Retention: jetstream.WorkQueuePolicy, MaxMsgs: 1, Discard: jetstream.DiscardNew})
	require.NoError(t, err)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs")
	require.NoError(t, err)
	require.NoError(t, q.Tell(ctx(t), 1))
	var apiErr *jetstream.APIError
	assert.ErrorAs(t, q.Tell(ctx(t), 2), &apiErr, "the server's refusal")
	// The stream's count, which a Tell's acknowledgement follows; the
	// consumer's pending count catches up with it on its own time.
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	assert.EqualValues(t, 1, info.State.Msgs, "the first job kept, the second refused")
}

func TestOpenRefusesAStreamWithAnotherConsumerOfItsJobs(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	stream, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"}, Retention: jetstream.WorkQueuePolicy})
	require.NoError(t, err)
	_, err = stream.CreateConsumer(ctx(t), jetstream.ConsumerConfig{Durable: "other", AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(t, err)
	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	require.ErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.Contains(t, err.Error(), "another consumer")
}

func TestOpenMisusePanics(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	assert.PanicsWithValue(t, "natsqueue: Open: WithBackoff (for Serve) does not apply", func() {
		_, _ = natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithBackoff(natsqueue.DefaultBackoff))
	})
	assert.PanicsWithValue(t, "natsqueue: WithAckWait: 10ms is under 100ms", func() { natsqueue.WithAckWait(10 * time.Millisecond) })
}

func TestTellReportsACodecFailure(t *testing.T) {
	s := natstest.Server(t)
	q, err := natsqueue.Open[func()](ctx(t), connect(t, s), "jobs")
	require.NoError(t, err)
	err = q.Tell(ctx(t), func() {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "encoding")
}

func TestTellRetriesALostAckWithoutDuplicating(t *testing.T) {
	_, js, q := open(t)
	var mu sync.Mutex // guards acks
	var acks []*jetstream.PubAck
	natsqueue.WrapPublish(q, func(publish natsqueue.PublishFunc) natsqueue.PublishFunc {
		return func(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
			ack, err := publish(ctx, m, opts...)
			mu.Lock()
			defer mu.Unlock()
			acks = append(acks, ack)
			if len(acks) == 1 {
				// The server stored it, but its ack never arrives.
				return nil, nats.ErrTimeout
			}
			return ack, err
		}
	})
	require.NoError(t, q.Tell(ctx(t), 7))
	mu.Lock()
	require.Len(t, acks, 2, "retried once")
	assert.False(t, acks[0].Duplicate)
	assert.True(t, acks[1].Duplicate, "the retry had the same message ID")
	assert.Equal(t, acks[0].Sequence, acks[1].Sequence)
	mu.Unlock()
	assert.EqualValues(t, 1, consumerInfo(t, js).NumPending, "stored once")
}

func TestTellGivesUpWithinTheDuplicateWindow(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	const window = 3 * time.Second // leaves a second of retries
	_, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"},
		Retention: jetstream.WorkQueuePolicy, Duplicates: window})
	require.NoError(t, err)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs")
	require.NoError(t, err)
	require.NoError(t, js.DeleteStream(ctx(t), "jobs"))

	// Past the window a retry could store the job twice; no ctx deadline
	// needed.
	c, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	start := time.Now()
	err = q.Tell(c, 1)
	require.Error(t, err)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, jetstream.ErrNoStreamResponse, "the last publish error")
	assert.Less(t, time.Since(start), window, "within the window")
}

func TestTellReturnsTheContextError(t *testing.T) {
	_, _, q := open(t)
	c, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, q.Tell(c, 1), context.Canceled)
}

func TestLenAndBusyFollowTheServerWithoutWaitingForIt(t *testing.T) {
	_, _, q := open(t, natsqueue.WithDepthTTL(20*time.Millisecond))
	assert.Equal(t, 0, q.Len(), "Open read the depths")
	assert.False(t, q.Busy())
	tellAll(t, q, 5)
	eventually(t, func() bool { return q.Len() == 5 }, "Len catches up")

	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stop := serving(t, q, 1, func(context.Context, int) error {
		once.Do(func() { close(started) })
		<-release
		return nil
	}, natsqueue.WithPrefetch(0))
	<-started
	eventually(t, q.Busy, "Busy while a job is taken")
	assert.Equal(t, 5, q.Len(), "taken jobs count until acknowledged")
	close(release)
	eventually(t, func() bool { return q.Len() == 0 && !q.Busy() }, "drained")
	require.NoError(t, stop())
}

func TestLenDoesNotQueryWithinTheTTL(t *testing.T) {
	_, _, q := open(t, natsqueue.WithDepthTTL(time.Hour))
	queries, gate := gateDepthQueries(q)
	tellAll(t, q, 3)
	// Within the TTL of Open's read: no query, the cached 0.
	for range 1000 {
		assert.Equal(t, 0, q.Len())
	}
	assert.Zero(t, queries.Load())
	close(gate)
}

func TestLenRefreshesInTheBackground(t *testing.T) {
	_, _, q := open(t, natsqueue.WithDepthTTL(time.Millisecond))
	queries, gate := gateDepthQueries(q)
	tellAll(t, q, 3)
	eventually(t, func() bool { q.Len(); return queries.Load() == 1 }, "a refresh started")
	for range 1000 {
		assert.Equal(t, 0, q.Len(), "the cached value while the query runs")
	}
	assert.EqualValues(t, 1, queries.Load(), "one query at a time")
	close(gate)
	eventually(t, func() bool { return q.Len() == 3 }, "the refresh lands")
}

func TestQueuesAreRouteesForCrewPickers(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	busy, err := natsqueue.Open[int](ctx(t), js, "busy", natsqueue.WithDepthTTL(time.Millisecond))
	require.NoError(t, err)
	idle, err := natsqueue.Open[int](ctx(t), js, "idle", natsqueue.WithDepthTTL(time.Millisecond))
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, busy.Tell(ctx(t), i))
	}
	eventually(t, func() bool { return busy.Len() == 10 }, "depth read")
	var _ crew.Teller[int] = idle
	p := crew.NewPicker(crew.SmallestOfTwo(), busy, idle)
	for range 10 {
		assert.Equal(t, 1, p.Pick(), "the shorter queue")
	}
}

// gateDepthQueries counts q's depth queries and holds each until gate is
// closed.
func gateDepthQueries(q *natsqueue.Queue[int]) (queries *atomic.Int32, gate chan struct{}) {
	queries, gate = new(atomic.Int32), make(chan struct{})
	natsqueue.WrapDepthQuery(q, func(query func(context.Context) (*jetstream.ConsumerInfo, error)) func(context.Context) (*jetstream.ConsumerInfo, error) {
		return func(ctx context.Context) (*jetstream.ConsumerInfo, error) {
			queries.Add(1)
			<-gate // held: readers must not wait for it
			return query(ctx)
		}
	})
	return queries, gate
}
