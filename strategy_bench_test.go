package crew_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/crewlib/crew"
)

var benchStrategies = []struct {
	name string
	new  func() crew.Strategy
}{
	{"RoundRobin", crew.RoundRobin},
	{"Random", crew.Random},
	{"SmallestMailbox", crew.SmallestMailbox},
	{"SmallestOfTwo", crew.SmallestOfTwo},
}

// busyRoutees spawns n actors, each stuck in its handler with one more
// message queued (score 2), so that SmallestMailbox scans them all. The
// returned function releases and stops them.
func busyRoutees(n int) ([]*crew.Ref[int], func()) {
	gate := make(chan struct{})
	started := make(chan struct{}, n)
	refs := make([]*crew.Ref[int], n)
	for i := range refs {
		refs[i] = crew.Spawn(context.Background(), func(context.Context, int) error {
			started <- struct{}{}
			<-gate
			return nil
		})
		_ = refs[i].Tell(context.Background(), 0)
		<-started
		_ = refs[i].Tell(context.Background(), 1)
	}
	return refs, func() {
		close(gate)
		for _, r := range refs {
			r.Stop()
			<-r.Done()
		}
	}
}

// BenchmarkPick measures one routing decision among n busy routees of
// equal load: the worst case for SmallestMailbox, which finds no idle
// routee to stop at and scans them all.
func BenchmarkPick(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		refs, stop := busyRoutees(n)
		routees := make([]crew.Routee, n)
		for i, r := range refs {
			routees[i] = r
		}
		for _, s := range benchStrategies {
			b.Run(fmt.Sprintf("%s/%d", s.name, n), func(b *testing.B) {
				b.ReportAllocs()
				p := crew.NewPicker(s.new(), routees...)
				for range b.N {
					if p.Pick() < 0 {
						b.Fatal("no routee")
					}
				}
			})
		}
		stop()
	}
}

// BenchmarkRouterTell routes b.N messages to n actors with an empty
// handler and waits until all are handled: ns/op is the cost of one
// message through the router and an actor.
func BenchmarkRouterTell(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		for _, s := range benchStrategies {
			b.Run(fmt.Sprintf("%s/%d", s.name, n), func(b *testing.B) {
				b.ReportAllocs()
				var wg sync.WaitGroup
				wg.Add(b.N)
				r := crew.SpawnRouter(context.Background(), n, func(context.Context, int) error {
					wg.Done()
					return nil
				}, crew.WithStrategy(s.new()))
				b.ResetTimer()
				for i := range b.N {
					if err := r.Tell(context.Background(), i); err != nil {
						b.Fatal(err)
					}
				}
				wg.Wait()
				b.StopTimer()
				r.Stop()
				for _, ref := range r.Routees() {
					<-ref.Done()
				}
			})
		}
	}
}
