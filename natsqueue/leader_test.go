package natsqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/internal/embed"
)

// minority starts 2 servers of a cluster of 5 whose other 3 are made but
// not started: a minority, which elects no leader until the others start.
// Every server made is shut down at t's cleanup. (Not 1 of 3: a server
// that never had a route leaks its store's goroutines when shut down.)
func minority(t *testing.T) (up, others []*server.Server) {
	t.Helper()
	servers, err := embed.NewCluster(5, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { embed.Stop(servers...) })
	require.NoError(t, embed.Start(servers[:2]...))
	return servers[:2], servers[2:]
}

func TestOpenWaitsForANewClusterToElectItsLeaders(t *testing.T) {
	up, others := minority(t)
	js := connectAll(t, up)
	watch := connectAll(t, up).Conn()
	requests, err := watch.SubscribeSync("$JS.API.>")
	require.NoError(t, err)
	require.NoError(t, watch.Flush()) // subscribed before Open asks
	opened := make(chan error, 1)
	go func() {
		// No deadline: nats.go would wait 5 s for each request.
		_, err := natsqueue.Open[int](context.Background(), js, "jobs", natsqueue.WithReplicas(3))
		opened <- err
	}()
	_, err = requests.NextMsg(testTimeout) // Open asked; no leader answers
	require.NoError(t, err)
	require.NoError(t, embed.Start(others...)) // all 5: the cluster elects its leaders
	select {
	case err := <-opened:
		require.NoError(t, err)
	case <-time.After(testTimeout):
		t.Fatal("Open did not return")
	}
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	assert.Equal(t, 3, stream.CachedInfo().Config.Replicas)
}

func TestOpenSaysNoLeaderWasElected(t *testing.T) {
	t.Run("within its bound when ctx has no deadline", func(t *testing.T) {
		up, _ := minority(t)
		natsqueue.SetLeaderWait(t, time.Second)
		_, err := natsqueue.Open[int](context.Background(), connectAll(t, up), "jobs")
		require.Error(t, err)
		assert.ErrorContains(t, err, `natsqueue: Open "jobs": no leader was elected to answer within 1s`)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("when ctx ends", func(t *testing.T) {
		up, _ := minority(t)
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := natsqueue.Open[int](c, connectAll(t, up), "jobs")
		require.Error(t, err)
		assert.ErrorContains(t, err, `natsqueue: Open "jobs": no leader was elected to answer before ctx ended`)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
