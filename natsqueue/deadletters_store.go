package natsqueue

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// store writes the dead letter of message m, whose metadata is md (nil
// if it had none), ended by reason, and returns once the stream has it.
// Its message ID is the job's sequence in the queue's stream, so that a
// job that ends as a dead letter again within the duplicate window (its
// Term was lost) is stored once.
// retryFor bounds the retries (see publishOnce), and the error's text is
// cut to maxErrorHeader bytes.
func (dl *DeadLetters) store(ctx context.Context, publish publishFunc, m jetstream.Msg, md *jetstream.MsgMetadata, reason error, retryFor time.Duration) error {
	h := jobHeaders(m.Headers())
	id := jobID(m.Headers())
	h.Set(idHeader, id)
	h.Set(reasonHeader, reasonOf(reason))
	text := firstLine(reason.Error())
	if len(text) > maxErrorHeader {
		text = strings.ToValidUTF8(text[:maxErrorHeader], "") + "…"
	}
	h.Set(errorHeader, text)
	msgID := "dead:" + nuid.Next() // a message without metadata: no sequence to be known by
	if md != nil {
		h.Set(attemptsHeader, strconv.FormatUint(md.NumDelivered, 10))
		h.Set(sequenceHeader, strconv.FormatUint(md.Sequence.Stream, 10))
		h.Set(toldHeader, md.Timestamp.UTC().Format(time.RFC3339Nano))
		msgID = "dead:" + strconv.FormatUint(md.Sequence.Stream, 10) + ":" + id
	}
	_, err := publishOnce(ctx, publish, &nats.Msg{Subject: dl.dead, Header: h, Data: m.Data()}, msgID, min(retryFor, dl.storeFor))
	return err
}

// jobHeaders returns a copy of a job's headers h other than those of NATS
// and natsqueue ("Nats-" and "Natsqueue-" ones): the user's own.
func jobHeaders(h nats.Header) nats.Header {
	out := nats.Header{}
	for k, v := range h {
		if !strings.HasPrefix(k, "Nats-") && !strings.HasPrefix(k, "Natsqueue-") {
			out[k] = v
		}
	}
	return out
}

// jobID returns the ID of the job whose message has headers h: natsqueue's
// own header where the message ID could not be kept, else the message ID.
func jobID(h nats.Header) string {
	if id := h.Get(idHeader); id != "" {
		return id
	}
	return h.Get(jetstream.MsgIDHeader)
}

// reasonOf returns the stored reason of a dead letter ended by err.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, ErrUndecodable):
		return ReasonUndecodable
	case isPermanent(err):
		return ReasonPermanent
	default:
		return ReasonTooManyDeliveries
	}
}
