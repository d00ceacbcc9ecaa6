package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/crewlib/crew"
)

// The actors scenario's contenders.
const (
	chanActorName      = "goroutine + buffered chan (1024)"
	bareLoopName       = "goroutine + buffered chan (1024), empty loop"
	crewActorName      = "crew actor (Unbounded)"
	crewSegmentedName  = "crew actor (Segmented)"
	crewBoundedActName = "crew actor (Bounded(1024, Backpressure))"
	protoActorName     = "protoactor-go actor (default mailbox)"
)

// actorResult is the cost of one message told to one actor.
type actorResult struct {
	name                   string
	producers              int
	loaded                 bool // beside one CPU-bound process per CPU
	nsPerMsg, allocsPerMsg float64
	runs                   []float64 // each run's ns/msg, for the advice
}

// actorsScenario tells messages to one actor from producers goroutines,
// alone, then beside one CPU-bound process per CPU.
type actorsScenario struct {
	none
	actorMsgs, runs int
	actors          []actorResult
}

func (*actorsScenario) name() string  { return "actors" }
func (*actorsScenario) title() string { return "Actors" }

func (a *actorsScenario) configure(s settings) error {
	a.actorMsgs, a.runs = pick(s.mode, 100_000, 600_000, 1_000_000), s.runsFor(3, 5, 5)
	return nil
}

func (a *actorsScenario) run(progress func(string)) {
	alongside(func(loaded bool) {
		for _, p := range fanIn {
			a.actors = append(a.actors, actors(p, loaded, a.actorMsgs, a.runs,
				func(what string) { progress(fmt.Sprintf("%s%s, %s", producers(p), withLoad(loaded), what)) })...)
		}
	})
}

// actors tells msgs messages from producers goroutines to one actor whose
// handler only counts them, and waits until the last one is handled, next
// to the hand-written equivalent: a goroutine ranging over a buffered
// channel that calls the same handler; median of runs, the contenders
// interleaved run by run. loaded says whether the caller started CPU-bound
// processes beside it.
//
// The bare loop, a goroutine that ranges over the channel and calls
// nothing, is what this scenario compared the actors with before: it
// leaves out the handler's call, which a user's loop makes as an actor
// does, so it rates an actor by more than the actor costs. It stays as a
// row of its own.
func actors(producers int, loaded bool, msgs, runs int, progress func(string)) []actorResult {
	names := []string{chanActorName, bareLoopName, crewActorName, crewSegmentedName, crewBoundedActName, protoActorName}
	segmented := crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewSegmented[int]() })
	bounded := crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](1024, crew.Backpressure) })
	costs := perMessage(names, msgs, runs, progress, func(i int) time.Duration {
		switch names[i] {
		case chanActorName:
			return toGoroutine(producers, msgs, true)
		case bareLoopName:
			return toGoroutine(producers, msgs, false)
		case crewActorName:
			return toActor(producers, msgs)
		case crewSegmentedName:
			return toActor(producers, msgs, segmented)
		case crewBoundedActName:
			return toActor(producers, msgs, bounded)
		default:
			return toProtoActor(producers, msgs)
		}
	})
	out := make([]actorResult, len(names))
	for i, name := range names {
		out[i] = actorResult{name, producers, loaded, costs[i].ns, costs[i].allocs, costs[i].runs}
	}
	return out
}

func (r *actorsScenario) actorOf(name string, producers int, loaded bool) actorResult {
	return find(r.actors, func(a actorResult) bool { return a.name == name && a.producers == producers && a.loaded == loaded })
}

func (r *actorsScenario) markdown(p printer) {
	p("%d messages told from P producers to one actor whose handler only counts them, until the last one is handled; the baseline is the hand-written equivalent, a goroutine ranging over a buffered channel of 1024 that calls the same handler; median of %s, contenders interleaved run by run. With load, one CPU-bound process per CPU runs beside the measurement. ", r.actorMsgs, plural(r.runs, "run"))
	p("The empty loop, a goroutine that ranges over the channel and calls no handler, was this scenario's baseline before: its column keeps those ratios comparable with older reports.\n\n")
	p("| contender | producers | load | ns/msg | allocs/msg | vs goroutine + chan | vs empty loop |\n|---|---|---|---|---|---|---|\n")
	for _, a := range r.actors {
		base, bare := r.actorOf(chanActorName, a.producers, a.loaded), r.actorOf(bareLoopName, a.producers, a.loaded)
		p("| %s | %d | %s | %.1f | %.3f | %.2fx | %.2fx |\n", a.name, a.producers, loadName(a.loaded), a.nsPerMsg, a.allocsPerMsg,
			a.nsPerMsg/base.nsPerMsg, a.nsPerMsg/bare.nsPerMsg)
	}
	p("\n")
}

// toGoroutine sends msgs messages to a goroutine over a buffered channel.
// The goroutine calls the actors' handler for each, as a user's loop calls
// its own, or, unless handle, only counts them (the empty loop).
func toGoroutine(producers, msgs int, handle bool) time.Duration {
	ctx := context.Background()
	ch := make(chan int, 1024)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		if !handle {
			for range ch {
			}
			return
		}
		serve(ctx, ch, counter(msgs, func() {}))
	}()
	split(producers, msgs, func(first, n int) {
		for v := first; v < first+n; v++ {
			ch <- v
		}
	}).Wait()
	close(ch)
	<-done
	return time.Since(start)
}

// serve is a user's hand-written actor: it calls handle for each message
// from ch, and would log an error. handle comes as an argument, called
// through a func value as an actor calls its handler.
//
//go:noinline
func serve(ctx context.Context, ch <-chan int, handle func(context.Context, int) error) {
	for v := range ch {
		if err := handle(ctx, v); err != nil {
			panic(err)
		}
	}
}

// counter returns the actors' handler: it counts messages on the calling
// goroutine, with no shared write of its own, and calls last on the
// msgs'th.
func counter(msgs int, last func()) func(context.Context, int) error {
	handled := 0
	return func(context.Context, int) error {
		if handled++; handled == msgs {
			last()
		}
		return nil
	}
}

// toActor tells msgs messages to an actor spawned with opts, whose handler
// is counter's.
func toActor(producers, msgs int, opts ...crew.Option) time.Duration {
	ctx := context.Background()
	done := make(chan struct{})
	start := time.Now()
	ref := crew.Spawn(ctx, counter(msgs, func() { close(done) }), opts...)
	split(producers, msgs, func(first, n int) {
		for v := first; v < first+n; v++ {
			if err := ref.Tell(ctx, v); err != nil {
				panic(err)
			}
		}
	}).Wait()
	<-done
	elapsed := time.Since(start)
	ref.Stop()
	<-ref.Done()
	return elapsed
}

// toProtoActor tells msgs messages to a protoactor-go actor with its default
// (unbounded) mailbox. protoactor-go's messages are interfaces: an int above
// 255 costs an allocation on the way in, which is part of its cost.
func toProtoActor(producers, msgs int) time.Duration {
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	defer system.Shutdown()
	handled, done := 0, make(chan struct{})
	start := time.Now()
	pid := system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(int); ok {
			if handled++; handled == msgs {
				close(done)
			}
		}
	}))
	split(producers, msgs, func(first, n int) {
		for v := first; v < first+n; v++ {
			system.Root.Send(pid, v)
		}
	}).Wait()
	<-done
	elapsed := time.Since(start)
	if err := system.Root.StopFuture(pid).Wait(); err != nil {
		panic(err)
	}
	return elapsed
}
