package natsqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeKeepsPrefetchedJobsFromBeingRedelivered(t *testing.T) {
	s, js, q := open(t)
	tellAll(t, q, 2)
	c := newTally(2)
	work := func(_ context.Context, job int) error {
		// Each job outlasts AckWait, so the prefetched one waits longer
		// than AckWait before it starts.
		time.Sleep(3 * testAckWait / 2)
		c.ran(job, nil)
		return nil
	}
	stop := serving(t, q, 1, work) // one running, one prefetched
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 2 }, "both jobs taken")
	// A second process, which would get a job redelivered.
	q2, err := natsqueue.Open[int](ctx(t), connect(t, s), "jobs", natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	stop2 := serving(t, q2, 1, work)
	c.wait(t)
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "acknowledged")
	require.NoError(t, stop())
	require.NoError(t, stop2())
	runs, _ := c.snapshot()
	assert.Equal(t, map[int]int{0: 1, 1: 1}, runs, "each job ran once")
	assert.Zero(t, consumerInfo(t, js).NumRedelivered)
}

func TestServeDeadLettersAJobDeliveredMoreTimesThanAllowed(t *testing.T) {
	_, js, q := open(t)
	tellAll(t, q, 1)
	// A process takes the job and dies without settling it.
	cons, err := js.Consumer(ctx(t), "jobs", "natsqueue")
	require.NoError(t, err)
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(testTimeout))
	require.NoError(t, err)
	for range batch.Messages() {
	}
	require.NoError(t, batch.Error())

	dl := newDeadLetters()
	var calls atomic.Int32
	stop := serving(t, q, 1, func(context.Context, int) error { calls.Add(1); return nil },
		natsqueue.WithDeadLetters(dl.sink), natsqueue.WithMaxDeliveries(1))
	d := dl.next(t) // after AckWait, its second delivery
	assert.ErrorIs(t, d.Reason, natsqueue.ErrTooManyDeliveries)
	assert.Equal(t, 0, d.Message)
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "terminated")
	require.NoError(t, stop())
	assert.Zero(t, calls.Load(), "the handler is never called")
	assert.Equal(t, 1, dl.count())
	assert.Zero(t, consumerInfo(t, js).NumPending)
}

func TestServeSettlesAJobWhoseDeadLetterSinkPanics(t *testing.T) {
	_, js, q := open(t)
	tellAll(t, q, 1)
	var calls, sunk atomic.Int32
	stop := serving(t, q, 1, func(context.Context, int) error {
		calls.Add(1)
		return natsqueue.Permanent(errors.New("bad job"))
	}, natsqueue.WithDeadLetters(func(crew.DeadLetter) { sunk.Add(1); panic("sink broke") }))
	// Unsettled, the job would come back after AckWait.
	eventually(t, func() bool {
		return calls.Load() > 1 || sunk.Load() == 1 && consumerInfo(t, js).NumAckPending == 0
	}, "terminated, or run again")
	require.NoError(t, stop())
	assert.EqualValues(t, 1, calls.Load(), "never run again")
	assert.Zero(t, consumerInfo(t, js).NumPending)
}

func TestServeRetriesAJobWhoseBackoffPanics(t *testing.T) {
	_, _, q := open(t)
	tellAll(t, q, 1)
	c := newTally(1)
	var calls atomic.Int32
	stop := serving(t, q, 1, failingOnce(c, &calls, func() error { return errors.New("transient") }),
		natsqueue.WithBackoff(func(int) time.Duration { panic("backoff broke") }))
	c.wait(t)
	require.NoError(t, stop())
	assert.EqualValues(t, 2, calls.Load())
}

func TestServeTermsADeadLetterWithTheFirstLineOfItsReason(t *testing.T) {
	_, js, q := open(t)
	advisories, err := js.Conn().SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.jobs.natsqueue")
	require.NoError(t, err)
	tellAll(t, q, 1)
	stop := serving(t, q, 1, func(context.Context, int) error {
		return natsqueue.Permanent(errors.New("bad job\nmore detail"))
	}, natsqueue.WithDeadLetters(func(crew.DeadLetter) {}))
	m, err := advisories.NextMsg(testTimeout)
	require.NoError(t, err)
	require.NoError(t, stop())
	var adv server.JSConsumerDeliveryTerminatedAdvisory
	require.NoError(t, json.Unmarshal(m.Data, &adv))
	assert.Equal(t, "permanent: bad job", adv.Reason)
}

func TestServeDeadLettersAJobThatPanicsOnItsLastDeliveryWithThePrefixOnce(t *testing.T) {
	_, _, q := open(t)
	tellAll(t, q, 1)
	dl := newDeadLetters()
	stop := serving(t, q, 1, func(context.Context, int) error { panic("boom") },
		natsqueue.WithDeadLetters(dl.sink), natsqueue.WithMaxDeliveries(1))
	d := dl.next(t)
	require.NoError(t, stop())
	assert.ErrorIs(t, d.Reason, natsqueue.ErrTooManyDeliveries)
	reason, stack, _ := strings.Cut(d.Reason.Error(), "\n")
	assert.Equal(t, "natsqueue: too many deliveries: failed on delivery 1 of 1: handler panicked: boom", reason)
	assert.Contains(t, stack, "goroutine", "the panic's stack follows")
}
