package natsqueue

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// depthQueryTimeout bounds one consumer-info query of a depth refresh.
const depthQueryTimeout = 5 * time.Second

// epoch is the origin of depths' monotonic clock.
var epoch = time.Now()

// depths caches a consumer's depths for Len and Busy: messages waiting
// (pending) and taken but not yet acknowledged (ackPending), -1 while
// unknown. A reader that finds them older than ttl starts one refresh on a
// goroutine of its own, which ends with the query, and reads the cached
// values meanwhile: readers never wait for the server, and at most one
// query runs per ttl. Each delivered message refreshes pending too.
type depths struct {
	ttl   int64 // nanoseconds
	query func(context.Context) (*jetstream.ConsumerInfo, error)

	pending    atomic.Int64
	ackPending atomic.Int64
	next       atomic.Int64 // epoch-relative time after which a read refreshes
	refreshing atomic.Bool  // a refresh goroutine is running
}

func newDepths(ttl time.Duration, query func(context.Context) (*jetstream.ConsumerInfo, error)) *depths {
	d := &depths{ttl: int64(ttl), query: query}
	d.pending.Store(-1)
	d.ackPending.Store(-1)
	return d
}

// len returns the cached waiting plus taken messages, or -1 while unknown.
func (d *depths) len() int {
	d.maybeRefresh()
	p, a := d.pending.Load(), d.ackPending.Load()
	if p < 0 || a < 0 {
		return -1
	}
	return int(p + a)
}

// busy reports whether, as last read, some messages were taken.
func (d *depths) busy() bool {
	d.maybeRefresh()
	return d.ackPending.Load() > 0
}

// store records a consumer-info reading.
func (d *depths) store(ci *jetstream.ConsumerInfo) {
	d.pending.Store(int64(ci.NumPending))
	d.ackPending.Store(int64(ci.NumAckPending))
	d.next.Store(int64(time.Since(epoch)) + d.ttl)
}

// observe records the pending count a delivered message carried.
func (d *depths) observe(pending uint64) { d.pending.Store(int64(pending)) }

func (d *depths) maybeRefresh() {
	now := int64(time.Since(epoch))
	if now < d.next.Load() || !d.refreshing.CompareAndSwap(false, true) {
		return
	}
	// A refresh that ended between the load above and the swap has just
	// set next: without this check a second query would run within ttl.
	if now < d.next.Load() {
		d.refreshing.Store(false)
		return
	}
	// Set before the query, so that no other reader starts one within ttl
	// even when this one fails.
	d.next.Store(now + d.ttl)
	go d.refresh()
}

// refresh runs one query; it is the whole life of its goroutine.
func (d *depths) refresh() {
	defer d.refreshing.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), depthQueryTimeout)
	defer cancel()
	if ci, err := d.query(ctx); err == nil {
		d.store(ci)
	}
}
