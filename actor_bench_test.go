package crew_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/crewlib/crew"
)

// BenchmarkActor moves b.N messages from 1 or 4 producers to one actor whose
// handler only counts them, so ns/op is the cost of one message from Tell to
// the handler's return. The baseline is the hand-written equivalent: a
// goroutine ranging over a buffered channel of the same capacity.
func BenchmarkActor(b *testing.B) {
	for _, producers := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("%dP/goroutine+chan", producers), func(b *testing.B) {
			b.ReportAllocs()
			ch := make(chan int, benchCapacity)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range ch {
				}
			}()
			b.ResetTimer()
			produce(b, producers, func(i int) { ch <- i })()
			close(ch)
			<-done
		})
		b.Run(fmt.Sprintf("%dP/Unbounded", producers), func(b *testing.B) {
			benchActor(b, producers)
		})
		b.Run(fmt.Sprintf("%dP/Backpressure", producers), func(b *testing.B) {
			benchActor(b, producers, crew.WithMailbox(func() crew.Mailbox[int] {
				return crew.NewBounded[int](benchCapacity, crew.Backpressure)
			}))
		})
	}
}

// benchActor tells b.N messages to an actor spawned with opts. The handler
// counts on the actor's goroutine, with no shared write of its own, as the
// channel baseline's loop does.
func benchActor(b *testing.B, producers int, opts ...crew.Option) {
	b.ReportAllocs()
	ctx := context.Background()
	handled, done := 0, make(chan struct{})
	ref := crew.Spawn(ctx, func(context.Context, int) error {
		if handled++; handled == b.N {
			close(done)
		}
		return nil
	}, opts...)
	b.ResetTimer()
	produce(b, producers, func(i int) {
		if err := ref.Tell(ctx, i); err != nil {
			panic(err) // b.Error would leave the benchmark waiting
		}
	})()
	<-done
	b.StopTimer()
	ref.Stop()
	<-ref.Done()
}
