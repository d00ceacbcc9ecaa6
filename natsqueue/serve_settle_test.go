package natsqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/crewlib/crew/natsqueue"
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
