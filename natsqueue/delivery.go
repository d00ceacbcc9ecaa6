package natsqueue

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A Delivery is what a handler run by Serve can learn of the message it
// handles, through DeliveryFrom: which delivery of the job this is, and
// the job's identity, so that job IDs need not travel in the payload.
type Delivery struct {
	// Attempt is 1 on the job's first delivery, 2 on its first
	// redelivery (after a failure, or after a process holding it died),
	// and so on: a handler that must not repeat an effect can check
	// Attempt > 1 and look for what an earlier attempt did.
	Attempt int
	// ID is the message ID Tell gave the job (the Nats-Msg-Id header,
	// which the stream deduplicates by; its UniqueKey if it had one): the
	// same on every delivery of the job, and on a delayed job and a
	// replayed dead letter, which natsqueue tells again with a header of
	// its own. It is "" for a message published without one.
	ID string
	// Sequence is the job's sequence number in the stream: unique, and
	// the same on every delivery.
	Sequence uint64
	// Published is when the stream stored the job.
	Published time.Time
}

type deliveryKey struct{}

// DeliveryFrom returns the delivery that ctx, the context Serve gave a
// handler, belongs to, and reports whether it has one: false for any
// other context.
func DeliveryFrom(ctx context.Context) (Delivery, bool) {
	d, ok := ctx.Value(deliveryKey{}).(Delivery)
	return d, ok
}

// withDelivery returns ctx carrying the delivery of message m, whose
// metadata is md.
func withDelivery(ctx context.Context, m jetstream.Msg, md *jetstream.MsgMetadata) context.Context {
	return context.WithValue(ctx, deliveryKey{}, Delivery{
		Attempt:   int(md.NumDelivered),
		ID:        jobID(m.Headers()),
		Sequence:  md.Sequence.Stream,
		Published: md.Timestamp,
	})
}
