package natsqueue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew/natsqueue"
)

func TestAHandlerSeesItsDeliveryThroughItsContext(t *testing.T) {
	_, _, q := open(t)
	before := time.Now().Add(-time.Second) // the server's clock and ours may differ a little
	tellAll(t, q, 1)
	var mu sync.Mutex // guards seen
	var seen []natsqueue.Delivery
	c := newTally(1)
	stop := serving(t, q, 1, func(ctx context.Context, job int) error {
		d, ok := natsqueue.DeliveryFrom(ctx)
		assert.True(t, ok, "Serve's context carries the delivery")
		mu.Lock()
		seen = append(seen, d)
		first := len(seen) == 1
		mu.Unlock()
		if first {
			c.ran(job, errors.New("once"))
			return errors.New("once") // delivered again
		}
		c.ran(job, nil)
		return nil
	}, natsqueue.WithBackoff(func(int) time.Duration { return time.Millisecond }))
	c.wait(t)
	require.NoError(t, stop())
	require.Len(t, seen, 2)
	assert.Equal(t, 1, seen[0].Attempt)
	assert.Equal(t, 2, seen[1].Attempt, "the redelivery is the second attempt")
	assert.NotEmpty(t, seen[0].ID, "Tell gives each job a message ID")
	assert.Equal(t, seen[0].ID, seen[1].ID, "the same job, the same ID")
	assert.Equal(t, seen[0].Sequence, seen[1].Sequence)
	assert.Positive(t, seen[0].Sequence)
	assert.True(t, seen[0].Published.After(before), "published %v", seen[0].Published)

	_, ok := natsqueue.DeliveryFrom(context.Background())
	assert.False(t, ok, "another context has no delivery")
}
