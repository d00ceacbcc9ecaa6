package natsqueue

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDepthsAreUnknownUntilAReadSucceedsThenFollowMessages(t *testing.T) {
	type answer struct {
		ci  *jetstream.ConsumerInfo
		err error
	}
	answers := make(chan answer)
	var queries atomic.Int32
	d := newDepths(time.Hour, func(context.Context) (*jetstream.ConsumerInfo, error) {
		queries.Add(1)
		a := <-answers
		return a.ci, a.err
	})
	settled := func() bool { return !d.refreshing.Load() }

	assert.Equal(t, -1, d.len(), "no read yet; this one starts the first")
	answers <- answer{err: errors.New("no server")}
	require.Eventually(t, settled, time.Minute, time.Millisecond)
	assert.Equal(t, -1, d.len(), "the read failed")
	assert.False(t, d.busy())
	assert.EqualValues(t, 1, queries.Load(), "no second query within the TTL, even after a failure")

	d.next.Store(0) // the TTL has passed
	assert.Equal(t, -1, d.len())
	answers <- answer{ci: &jetstream.ConsumerInfo{NumPending: 3, NumAckPending: 2}}
	require.Eventually(t, settled, time.Minute, time.Millisecond)
	assert.Equal(t, 5, d.len(), "waiting plus taken")
	assert.True(t, d.busy())

	d.observe(7) // a delivered message said 7 were waiting behind it
	assert.Equal(t, 9, d.len())
	assert.EqualValues(t, 2, queries.Load())
}
