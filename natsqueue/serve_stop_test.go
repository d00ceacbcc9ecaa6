package natsqueue_test

import (
	"context"
	"testing"

	"github.com/crewlib/crew/natsqueue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
