package natsqueue_test

import (
	"context"
	"testing"

	"github.com/crewlib/crew/natsqueue"
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
	tellAll(t, q, 1)
	started, release := make(chan struct{}), make(chan struct{})
	c, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() {
		done <- natsqueue.Serve(c, q, 1, func(context.Context, int) error {
			close(started)
			<-release
			return nil
		}, natsqueue.WithPrefetch(0))
	}()
	<-started
	cancel()
	js.Conn().Close()
	close(release)
	err := <-done
	require.Error(t, err, "its ack was not sent")
	assert.Contains(t, err.Error(), "1 ")
}
