package natsqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/crewlib/crew/natsqueue"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeDoesNotFetchAfterItsContextEnds(t *testing.T) {
	// Serve's pull waits for a second job that never comes while the
	// first one's handler ends Serve's context and frees room for more:
	// when the pull ends, both the end and the room are there to see.
	for i := range 8 {
		_, js, q := open(t)
		requests, err := js.Conn().SubscribeSync("$JS.API.CONSUMER.MSG.NEXT.jobs.natsqueue")
		require.NoError(t, err)
		tellAll(t, q, 1)
		c, cancel := context.WithCancel(ctx(t))
		err = natsqueue.Serve(c, q, 1, func(context.Context, int) error { cancel(); return nil })
		require.NoError(t, err)
		require.NoError(t, js.Conn().Flush()) // Serve flushed its requests; now they have arrived
		n, _, err := requests.Pending()
		require.NoError(t, err)
		require.Equal(t, 1, n, "run %d: one pull request", i)
	}
}

func TestServeReportsAcknowledgementsItCouldNotSend(t *testing.T) {
	_, js, q := open(t)
	cancel, release, ended := servingOneBlockedJob(t, q)
	cancel()
	js.Conn().Close()
	release()
	err := ended()
	require.Error(t, err, "its ack was not sent")
	assert.Contains(t, err.Error(), "1 acknowledgements not sent")
}

func TestServeEndsWhenItsConsumerIsDeleted(t *testing.T) {
	_, js, q := open(t)
	_, release, ended := servingOneBlockedJob(t, q)
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	require.NoError(t, stream.DeleteConsumer(ctx(t), "natsqueue"))
	release()
	err = ended()
	require.Error(t, err)
	assert.ErrorIs(t, err, jetstream.ErrConsumerNotFound)
}

// servingOneBlockedJob tells one job and starts Serve, with one worker and
// no prefetch, on it; it returns once the job's handler has started, when
// Serve is not pulling. cancel ends Serve's context, release lets the
// handler return, and ended waits for Serve's error, failing t if Serve
// has not returned within testTimeout.
func servingOneBlockedJob(t *testing.T, q *natsqueue.Queue[int]) (cancel context.CancelFunc, release func(), ended func() error) {
	t.Helper()
	tellAll(t, q, 1)
	started, released := make(chan struct{}), make(chan struct{})
	c, cancel := context.WithCancel(ctx(t))
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		done <- natsqueue.Serve(c, q, 1, func(context.Context, int) error {
			close(started)
			<-released
			return nil
		}, natsqueue.WithPrefetch(0))
	}()
	<-started
	ended = func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(testTimeout):
			t.Fatal("Serve did not return")
			return nil
		}
	}
	return cancel, func() { close(released) }, ended
}
