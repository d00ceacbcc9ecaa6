package natsqueue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
)

// A run is one handler run of a job, as a test records it.
type run struct {
	job int
	at  time.Time
	d   natsqueue.Delivery
}

// recorder records the runs of a Serve's handler, and sends each to ch.
type recorder struct {
	mu   sync.Mutex
	runs []run
	ch   chan run
}

func newRecorder() *recorder { return &recorder{ch: make(chan run, 1000)} }

func (r *recorder) handle(fail func(job int) error) func(context.Context, int) error {
	return func(ctx context.Context, job int) error {
		d, _ := natsqueue.DeliveryFrom(ctx)
		x := run{job: job, at: time.Now(), d: d}
		r.mu.Lock()
		r.runs = append(r.runs, x)
		r.mu.Unlock()
		r.ch <- x
		if fail != nil {
			return fail(job)
		}
		return nil
	}
}

func (r *recorder) next(t testing.TB) run {
	t.Helper()
	select {
	case x := <-r.ch:
		return x
	case <-time.After(testTimeout):
		t.Fatalf("no job ran within %v", testTimeout)
		return run{}
	}
}

func TestADeadLetterIsStoredAndCanBeReplayedAsANewJob(t *testing.T) {
	_, js, q := open(t)
	require.NoError(t, q.TellWith(ctx(t), 7, natsqueue.UniqueKey("job-7")))
	dl := newDeadLetters()
	rec := newRecorder()
	var replayed sync.WaitGroup
	replayed.Add(1)
	failing := true
	var mu sync.Mutex
	stop := serving(t, q, 1, rec.handle(func(int) error {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return errors.New("downstream is down")
		}
		return nil
	}), natsqueue.WithMaxDeliveries(2), natsqueue.WithBackoff(func(int) time.Duration { return time.Millisecond }),
		natsqueue.WithDeadLetters(dl.sink))
	first := rec.next(t)
	assert.Equal(t, 1, first.d.Attempt)
	assert.Equal(t, 2, rec.next(t).d.Attempt)
	sunk := dl.next(t) // after the store
	assert.ErrorIs(t, sunk.Reason, natsqueue.ErrTooManyDeliveries)

	dead := q.DeadLetters()
	n, err := dead.Count(ctx(t))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var letters []natsqueue.DeadLetter
	for d, err := range dead.All(ctx(t)) {
		require.NoError(t, err)
		letters = append(letters, d)
	}
	require.Len(t, letters, 1)
	d := letters[0]
	assert.Equal(t, "jobs", d.Queue)
	assert.Equal(t, "job-7", d.ID)
	assert.Equal(t, natsqueue.ReasonTooManyDeliveries, d.Reason)
	assert.Contains(t, d.Error, "downstream is down")
	assert.Equal(t, 2, d.Attempts)
	assert.Equal(t, first.d.Sequence, d.Sequence)
	assert.WithinDuration(t, first.d.Published, d.Told, time.Millisecond)
	assert.False(t, d.Died.Before(d.Told))
	job, err := q.Decode(d)
	require.NoError(t, err)
	assert.Equal(t, 7, job)
	got, err := dead.Get(ctx(t), d.Seq)
	require.NoError(t, err)
	assert.Equal(t, d, got)
	eventually(t, func() bool { ci := consumerInfo(t, js); return ci.NumPending == 0 && ci.NumAckPending == 0 },
		"the job left the queue once stored as a dead letter")

	mu.Lock()
	failing = false
	mu.Unlock()
	require.NoError(t, dead.Replay(ctx(t), d.Seq))
	again := rec.next(t)
	assert.Equal(t, 7, again.job)
	assert.Equal(t, 1, again.d.Attempt, "a replay is a new job: its first delivery")
	assert.Equal(t, "job-7", again.d.ID, "with the job's ID")
	assert.NotEqual(t, first.d.Sequence, again.d.Sequence)
	n, err = dead.Count(ctx(t))
	require.NoError(t, err)
	assert.Zero(t, n, "replayed, the dead letter is gone")
	assert.ErrorIs(t, dead.Replay(ctx(t), d.Seq), natsqueue.ErrNoDeadLetter)
	_, err = dead.Get(ctx(t), d.Seq)
	assert.ErrorIs(t, err, natsqueue.ErrNoDeadLetter)
	require.NoError(t, stop())
	assert.Equal(t, 1, dl.count(), "the sink ran once")
}

func TestReplayAllAndPurgeAllTakeTheDeadLettersAFilterMatches(t *testing.T) {
	_, _, q := open(t)
	tellAll(t, q, 6)
	dl := newDeadLetters()
	rec := newRecorder()
	stop := serving(t, q, 2, rec.handle(func(job int) error {
		return natsqueue.Permanent(errors.New([]string{"even", "odd"}[job%2]))
	}), natsqueue.WithDeadLetters(dl.sink))
	for range 6 {
		dl.next(t)
	}
	require.NoError(t, stop())
	dead := q.DeadLetters()
	odd := func(d natsqueue.DeadLetter) bool { return d.Error == "permanent: odd" }
	n, err := dead.PurgeAll(ctx(t), odd)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	var left []int
	for d, err := range dead.All(ctx(t)) {
		require.NoError(t, err)
		assert.Equal(t, natsqueue.ReasonPermanent, d.Reason)
		job, err := q.Decode(d)
		require.NoError(t, err)
		left = append(left, job)
	}
	assert.ElementsMatch(t, []int{0, 2, 4}, left)
	n, err = dead.ReplayAll(ctx(t), func(d natsqueue.DeadLetter) bool { return d.Seq != 0 })
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	n, err = dead.PurgeAll(ctx(t), nil)
	require.NoError(t, err)
	assert.Zero(t, n)

	rec = newRecorder()
	stop = serving(t, q, 2, rec.handle(nil))
	var ran []int
	for range 3 {
		ran = append(ran, rec.next(t).job)
	}
	assert.ElementsMatch(t, []int{0, 2, 4}, ran)
	require.NoError(t, stop())
}

// A dead letter that cannot be stored is not removed from the queue: the
// job comes again and ends as a dead letter again, once the store works.
func TestAJobWhoseDeadLetterCannotBeStoredStaysInTheQueue(t *testing.T) {
	_, js, q := open(t)
	var mu sync.Mutex
	refusals := 0
	natsqueue.WrapPublish(q, func(publish natsqueue.PublishFunc) natsqueue.PublishFunc {
		return func(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
			mu.Lock()
			defer mu.Unlock()
			if m.Subject == "natsqueue.jobs.dead" && refusals < 1 {
				refusals++
				return nil, &jetstream.APIError{ErrorCode: 10077, Description: "maximum messages exceeded"}
			}
			return publish(ctx, m, opts...)
		}
	})
	require.NoError(t, q.Tell(ctx(t), 1))
	dl := newDeadLetters()
	rec := newRecorder()
	stop := serving(t, q, 1, rec.handle(func(int) error { return natsqueue.Permanent(errors.New("bad")) }),
		natsqueue.WithDeadLetters(dl.sink), natsqueue.WithBackoff(func(int) time.Duration { return time.Millisecond }))
	assert.Equal(t, 1, rec.next(t).d.Attempt)
	assert.Equal(t, 2, rec.next(t).d.Attempt, "delivered again: its dead letter was refused")
	dl.next(t)
	require.NoError(t, stop())
	assert.Equal(t, 1, dl.count(), "the sink ran for the stored dead letter only")
	n, err := q.DeadLetters().Count(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	ci := consumerInfo(t, js)
	assert.Zero(t, ci.NumPending+uint64(ci.NumAckPending))
}

func TestAUniqueJobToldTwiceWithinTheWindowRunsOnce(t *testing.T) {
	_, js, q := open(t)
	require.NoError(t, q.TellWith(ctx(t), 1, natsqueue.UniqueKey("invoice-42")))
	err := q.TellWith(ctx(t), 2, natsqueue.UniqueKey("invoice-42"))
	require.ErrorIs(t, err, natsqueue.ErrDuplicate)
	assert.Contains(t, err.Error(), `"invoice-42"`)
	require.NoError(t, q.TellWith(ctx(t), 3, natsqueue.UniqueKey("invoice-43")))
	assert.EqualValues(t, 2, consumerInfo(t, js).NumPending)
	rec := newRecorder()
	stop := serving(t, q, 1, rec.handle(nil))
	a, b := rec.next(t), rec.next(t)
	require.NoError(t, stop())
	assert.Equal(t, []int{1, 3}, []int{a.job, b.job})
	assert.Equal(t, "invoice-42", a.d.ID)
	assert.Panics(t, func() { natsqueue.UniqueKey("") })
	assert.Panics(t, func() { natsqueue.UniqueKey("a\nb") })
}

// A delayed job runs no earlier than asked, on a stream that schedules
// jobs (the one Open makes) and on one that does not (made beforehand):
// there Serve defers it, and the deferrals use none of its deliveries.
func TestADelayedJobNeverRunsEarly(t *testing.T) {
	for _, scheduled := range []bool{true, false} {
		name := map[bool]string{true: "the server schedules it", false: "Serve defers it"}[scheduled]
		t.Run(name, func(t *testing.T) {
			s := natstest.Server(t)
			js := connect(t, s)
			if !scheduled {
				_, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"},
					Retention: jetstream.WorkQueuePolicy})
				require.NoError(t, err)
			}
			q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithAckWait(testAckWait))
			require.NoError(t, err)
			rec := newRecorder()
			stop := serving(t, q, 2, rec.handle(func(job int) error {
				if job == 1 {
					return errors.New("once more")
				}
				return nil
			}), natsqueue.WithMaxDeliveries(2), natsqueue.WithBackoff(func(int) time.Duration { return time.Millisecond }))
			told := time.Now()
			at := told.Add(1500 * time.Millisecond)
			require.NoError(t, q.TellWith(ctx(t), 1, natsqueue.RunAt(at), natsqueue.UniqueKey("late")))
			require.NoError(t, q.TellWith(ctx(t), 2, natsqueue.RunAfter(500*time.Millisecond)))
			require.NoError(t, q.TellWith(ctx(t), 3, natsqueue.RunAfter(-time.Second)))
			runs := []run{rec.next(t), rec.next(t), rec.next(t), rec.next(t)}
			require.NoError(t, stop())
			assert.Equal(t, 3, runs[0].job, "the job whose time had passed runs at once")
			assert.Equal(t, 2, runs[1].job)
			assert.GreaterOrEqual(t, runs[1].at.Sub(told), 500*time.Millisecond, "not early")
			assert.Equal(t, 1, runs[2].job)
			assert.False(t, runs[2].at.Before(at), "not early: %v before its time", at.Sub(runs[2].at))
			assert.Less(t, runs[2].at.Sub(at), time.Second+250*time.Millisecond, "within a second of its time (and a timer's)")
			assert.Equal(t, 1, runs[2].d.Attempt, "its wait used no delivery")
			assert.Equal(t, "late", runs[2].d.ID)
			assert.Equal(t, 1, runs[3].job)
			assert.Equal(t, 2, runs[3].d.Attempt, "retried as any job")
			assert.Equal(t, runs[2].d.Sequence, runs[3].d.Sequence)
		})
	}
}

func TestOpenCreatesTheDeadLetterStreamAndRefusesAnIncompatibleOne(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	_, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "DEAD_jobs", Subjects: []string{"natsqueue.jobs.dead"},
		Retention: jetstream.WorkQueuePolicy})
	require.NoError(t, err)
	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	require.ErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.Contains(t, err.Error(), "dead-letter stream")
	require.NoError(t, js.DeleteStream(ctx(t), "DEAD_jobs"))
	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	require.NoError(t, err)
	dead, err := js.Stream(ctx(t), "DEAD_jobs")
	require.NoError(t, err)
	assert.Equal(t, jetstream.LimitsPolicy, dead.CachedInfo().Config.Retention)

	_, err = natsqueue.OpenDeadLetters(ctx(t), js, "jobs")
	require.NoError(t, err)
	_, err = natsqueue.OpenDeadLetters(ctx(t), js, "nosuch")
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound)
	_, err = js.Stream(ctx(t), "nosuch")
	assert.ErrorIs(t, err, jetstream.ErrStreamNotFound, "OpenDeadLetters creates nothing")
}

func TestWithDuplicateWindowSetsTheWindowAndRefusesAnother(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	_, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithDuplicateWindow(time.Hour))
	require.NoError(t, err)
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	assert.Equal(t, time.Hour, stream.CachedInfo().Config.Duplicates)
	_, err = natsqueue.Open[int](ctx(t), js, "jobs")
	require.NoError(t, err, "without the option, any window")
	_, err = natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithDuplicateWindow(time.Minute))
	require.ErrorIs(t, err, natsqueue.ErrIncompatible)
	assert.Panics(t, func() { natsqueue.WithDuplicateWindow(time.Second) })
}

// On a full stream without schedules (limits with DiscardNew), a delayed
// job whose relay the stream refuses runs as it is, rather than wait for
// room it would never find.
func TestADeferredJobRunsInPlaceWhenTheStreamRefusesItsRelay(t *testing.T) {
	s := natstest.Server(t)
	js := connect(t, s)
	_, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "jobs", Subjects: []string{"natsqueue.jobs"},
		Retention: jetstream.WorkQueuePolicy, MaxMsgs: 1, Discard: jetstream.DiscardNew})
	require.NoError(t, err)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	told := time.Now()
	require.NoError(t, q.TellWith(ctx(t), 1, natsqueue.RunAfter(300*time.Millisecond)))
	rec := newRecorder()
	stop := serving(t, q, 1, rec.handle(nil))
	r := rec.next(t)
	require.NoError(t, stop())
	assert.Equal(t, 1, r.job)
	assert.GreaterOrEqual(t, r.at.Sub(told), 300*time.Millisecond, "not early")
	assert.Equal(t, 2, r.d.Attempt, "its deferral counted among its deliveries")
}
