package crew_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/internal/queue"
)

// A note is a message of a keyed router's tests: key, and seq, its rank
// among the notes told, which numbers it. A broadcast note has key -1 and
// no number of its own.
type note struct{ key, seq int }

func noteKey(n note) int { return n.key }

// A noteLedger checks a keyed router's notes: every note a Tell accepted is
// handled once or becomes a dead letter once, and the notes of each key
// are handled one at a time, in the order they were told.
type noteLedger struct {
	order  *keyOrder
	told   []atomic.Bool  // by seq: its Tell returned nil
	seen   []atomic.Int32 // by seq: handled or dead-lettered
	copies atomic.Int64   // broadcast notes handled or dead-lettered
	dead   atomic.Int64   // dead letters, of any note
}

func newNoteLedger(keys, notes int) *noteLedger {
	return &noteLedger{order: newKeyOrder(keys), told: make([]atomic.Bool, notes), seen: make([]atomic.Int32, notes)}
}

// handle is the routees' handler; sink, the router's dead letters.
func (l *noteLedger) handle(_ context.Context, n note) error {
	if n.key < 0 {
		l.copies.Add(1)
		return nil
	}
	l.order.start(keyedJob{key: n.key, seq: n.seq})
	l.seen[n.seq].Add(1)
	l.order.end(keyedJob{key: n.key})
	return nil
}

func (l *noteLedger) sink(d crew.DeadLetter) {
	l.dead.Add(1)
	if n := d.Message.(note); n.key >= 0 {
		l.seen[n.seq].Add(1)
	} else {
		l.copies.Add(1)
	}
}

// tell tells n to r and records whether r accepted it; a refusal other
// than "no routee" or "stopped" is an error.
func (l *noteLedger) tell(t *testing.T, r *crew.Router[note], n note) {
	switch err := r.Tell(context.Background(), n); {
	case err == nil:
		l.told[n.seq].Store(true)
	case errors.Is(err, crew.ErrNoRoutee), errors.Is(err, crew.ErrStopped):
		if errors.Is(err, crew.ErrStopped) {
			l.told[n.seq].Store(true) // a dead letter too
		}
	default:
		t.Errorf("Tell(%v): %v", n, err)
	}
}

// check reports each note lost, or handled or dead-lettered more than
// once, and the breaches of a key's order. Call it once the router is done.
func (l *noteLedger) check(t *testing.T, label string) bool {
	t.Helper()
	ok := true
	for seq := range l.seen {
		want := int32(0)
		if l.told[seq].Load() {
			want = 1
		}
		if got := l.seen[seq].Load(); got != want {
			t.Errorf("%s: note %d was handled or dead-lettered %d times, want %d", label, seq, got, want)
			ok = false
		}
	}
	if n := l.order.breaches.Load(); n > 0 {
		t.Errorf("%s: %d notes ran beside or before an earlier note of their key", label, n)
		ok = false
	}
	return ok
}

// A routee that stops while the router broadcasts must not take with it a
// keyed message's turn: its Broadcast copies and its keyed messages each
// release exactly what they hold. The race is narrow (the routee stops
// between taking a message and starting it), so the test repeats it.
func TestAKeyedRouterLosesNoMessageWhenBroadcastMeetsARouteesStop(t *testing.T) {
	const rounds, notes = 3000, 24
	for round := range rounds {
		l := newNoteLedger(2, notes)
		r := crew.SpawnRouter(context.Background(), 2, l.handle, crew.WithKey(noteKey), crew.WithDeadLetters(l.sink))
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			<-stop
			r.Routees()[0].Stop()
			close(stopped)
		}()
		for seq := range notes {
			if seq == notes/3 {
				close(stop)
			}
			if seq%3 == 2 {
				_ = r.Broadcast(context.Background(), note{key: -1, seq: seq})
				continue
			}
			l.tell(t, r, note{key: seq % 2, seq: seq})
		}
		<-stopped
		r.Stop()
		<-r.Done()
		if !l.check(t, fmt.Sprint("round ", round)) || !assert.Zero(t, r.Keys(), "round %d: a key stays busy", round) {
			return
		}
	}
}

// WithConsistentHash moves a key off a routee that drains or stops only
// once the key's messages there have ended: one told meanwhile waits
// behind them, so that the key's messages still run one at a time, in the
// order they were told.
func TestConsistentHashMovesAKeyOnlyOnceItsMessagesOnAStoppingRouteeEnded(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stop        func(*crew.Ref[note])
		handled     []int
		deadLetters int
	}{
		{"when the routee drains, its queued message runs before the next on another routee", (*crew.Ref[note]).Drain, []int{0, 1, 2}, 0},
		{"when the routee stops, the next waits for the one in flight", (*crew.Ref[note]).Stop, []int{0, 2}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started, hold := make(chan struct{}), gateFor(t)
				order := newKeyOrder(1)
				var rec recorder
				var dead letters
				r := crew.SpawnRouter(context.Background(), 2, func(_ context.Context, n note) error {
					order.start(keyedJob{key: n.key, seq: n.seq})
					rec.add(n.seq)
					if n.seq == 0 {
						close(started)
						<-hold
					}
					order.end(keyedJob{key: n.key})
					return nil
				}, crew.WithConsistentHash(noteKey), crew.WithDeadLetters(dead.sink))
				ctx := context.Background()
				require.NoError(t, r.Tell(ctx, note{seq: 0}))
				<-started
				require.NoError(t, r.Tell(ctx, note{seq: 1}))
				synctest.Wait() // the other routee is idle, not busy
				var home *crew.Ref[note]
				for _, ref := range r.Routees() {
					if ref.Busy() {
						home = ref
					}
				}
				require.NotNil(t, home, "the routee of key 0 handles seq 0")
				tc.stop(home)
				require.NoError(t, r.Tell(ctx, note{seq: 2}))
				synctest.Wait() // seq 2 waits behind seq 0 (and seq 1), in the router
				assert.Equal(t, 1, r.Keys(), "key 0 has messages out")
				close(hold)
				synctest.Wait()
				assert.Equal(t, tc.handled, rec.get())
				assert.Len(t, dead.get(), tc.deadLetters)
				assert.Zero(t, order.breaches.Load(), "a message of key 0 ran beside or before an earlier one")
				assert.Zero(t, r.Keys())
				r.Stop()
				<-r.Done()
			})
		})
	}
}

var routerSeed = flag.Uint64("crew.router-seed", 0, "the seed of TestKeyedRoutersLoseNothingWithRouteesStoppedAndDrainedMidTraffic; 0 draws one")

// Keyed routers, by key and by consistent hash, with routees stopped and
// drained while one goroutine tells keyed messages and another
// broadcasts: each message told is handled or dead-lettered once, each
// key's messages run one at a time and in order, no key stays busy once
// the router is done, the router counts every dead letter its sink got,
// and a router that only drained (no routee stopped on its own) has none.
// Some rounds drain the router itself while the Tells go on; the router
// then drains, stops, or drains and stops at once. Each round draws its
// router and its events from the seed, which the log prints; rerun one
// with -crew.router-seed.
func TestKeyedRoutersLoseNothingWithRouteesStoppedAndDrainedMidTraffic(t *testing.T) {
	seed := *routerSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d", seed)
	rounds := 10000
	if testing.Short() || raceEnabled {
		rounds = 2000
	}
	for round := range rounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		routees, keys, notes := 1+rng.IntN(4), 1+rng.IntN(6), 32+rng.IntN(96)
		opt, how := crew.WithKey(noteKey), "WithKey"
		if rng.IntN(2) == 0 {
			opt, how = crew.WithConsistentHash(noteKey), "WithConsistentHash"
		}
		label := fmt.Sprintf("round %d (%s, %d routees, %d keys)", round, how, routees, keys)
		l := newNoteLedger(keys, notes)
		yields := rng.IntN(4)
		r := crew.SpawnRouter(context.Background(), routees, func(ctx context.Context, n note) error {
			for range yields {
				runtime.Gosched() // let messages queue, and widen the windows between a start and its end
			}
			return l.handle(ctx, n)
		}, opt, crew.WithDeadLetters(l.sink))

		// Events: a routee stops or drains once the teller has told the
		// note numbered at: on the teller's goroutine, before it tells the
		// next (inline), or on a goroutine of its own, racing the Tells.
		type event struct {
			at, routee    int
			drain, inline bool
		}
		events := make([]event, rng.IntN(routees+1))
		marks := make(map[int]chan struct{})
		for i := range events {
			e := event{at: rng.IntN(notes), routee: rng.IntN(routees), drain: rng.IntN(2) == 0, inline: rng.IntN(2) == 0}
			if events[i] = e; marks[e.at] == nil {
				marks[e.at] = make(chan struct{})
			}
		}
		apply := func(e event) {
			if ref := r.Routees()[e.routee]; e.drain {
				ref.Drain()
			} else {
				ref.Stop()
			}
		}
		// The router's own Drain, racing the Tells, in some rounds.
		drainAt := -1
		if rng.IntN(4) == 0 {
			if drainAt = rng.IntN(notes); marks[drainAt] == nil {
				marks[drainAt] = make(chan struct{})
			}
		}
		var wg sync.WaitGroup
		if drainAt >= 0 {
			wg.Go(func() {
				<-marks[drainAt]
				r.Drain()
			})
		}
		for _, e := range events {
			if !e.inline {
				wg.Go(func() {
					<-marks[e.at]
					apply(e)
				})
			}
		}
		broadcasts := rng.IntN(8)
		wg.Go(func() {
			for range broadcasts {
				_ = r.Broadcast(context.Background(), note{key: -1})
			}
		})
		for seq := range notes {
			l.tell(t, r, note{key: rng.IntN(keys), seq: seq})
			if ch := marks[seq]; ch != nil {
				for _, e := range events {
					if e.inline && e.at == seq {
						apply(e)
					}
				}
				close(ch)
			}
		}
		wg.Wait()
		end := rng.IntN(3) // Drain, Stop, or both
		if end != 1 {
			r.Drain()
		}
		if end != 0 {
			r.Stop()
		}
		<-r.Done()
		if !l.check(t, label) || !assert.Zero(t, r.Keys(), "%s: a key stays busy", label) ||
			!assert.Equal(t, l.dead.Load(), r.DeadLetters(), "%s: the router's dead letters against its sink's", label) {
			return
		}
		if end == 0 && drainAt < 0 && len(events) == 0 && !assert.Zero(t, l.dead.Load(), "%s: dead letters when only Drain ran", label) {
			return
		}
	}
}

func TestABusyKeysDrainedBacklogGivesBackItsBuffer(t *testing.T) {
	// A burst waits behind one key; the key stays busy as its last
	// message runs, its backlog drained. Its buffer, grown for the burst,
	// goes back rather than stay with the key for as long as it is busy.
	const burst = 10_000
	last, gate := make(chan struct{}), make(chan struct{})
	r := crew.SpawnRouter(context.Background(), 1, func(_ context.Context, n note) error {
		if n.seq == burst-1 {
			close(last)
			<-gate
		}
		return nil
	}, crew.WithKey(noteKey))
	for i := range burst {
		require.NoError(t, r.Tell(context.Background(), note{key: 1, seq: i}))
	}
	<-last // the message before it ended, and took it out of the backlog
	assert.LessOrEqual(t, crew.RouterKeySlots(r, note{key: 1}), queue.KeptRingSlots)
	close(gate)
	r.Stop()
}

// Drain means "handle what you accepted, then stop" for a keyed router as
// for an actor: the messages it holds behind their keys are handled, each
// key's in the order they were told, by routees that take no new Tell
// meanwhile, and Done closes only once none is left.
func TestADrainedKeyedRouterHandlesEveryMessageItHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  crew.Option
	}{
		{"WithKey", crew.WithKey(noteKey)},
		{"WithConsistentHash", crew.WithConsistentHash(noteKey)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const routees, keys, tellers, each = 4, 16, 4, 1000
			l := newNoteLedger(keys, tellers*each)
			gate := make(chan struct{})
			var first sync.Once
			var handled atomic.Int64
			r := crew.SpawnRouter(context.Background(), routees, func(ctx context.Context, n note) error {
				first.Do(func() { <-gate }) // hold the first message until every Tell is in and Drain was called
				handled.Add(1)
				return l.handle(ctx, n)
			}, tc.opt, crew.WithDeadLetters(l.sink))
			// Each teller tells keys of its own, so that the order they were
			// told in is the order of their numbers.
			var wg sync.WaitGroup
			for i := range tellers {
				wg.Go(func() {
					for j := range each {
						n := note{key: i + tellers*(j%(keys/tellers)), seq: i*each + j}
						require.NoError(t, r.Tell(context.Background(), n))
						l.told[n.seq].Store(true)
					}
				})
			}
			wg.Wait()
			r.Drain()
			assert.ErrorIs(t, r.Tell(context.Background(), note{key: -1}), crew.ErrStopped, "Tell after Drain")
			assert.ErrorIs(t, r.Routees()[0].Tell(context.Background(), note{key: -1}), crew.ErrStopped, "a routee's own Tell after Drain")
			close(gate)
			<-r.Done()
			assert.EqualValues(t, tellers*each, handled.Load(), "handled")
			assert.EqualValues(t, 2, l.dead.Load(), "dead letters: the two Tells after Drain")
			assert.True(t, l.check(t, "drained"))
			assert.EqualValues(t, 2, r.DeadLetters(), "the router's dead letters")
			assert.Zero(t, r.Keys(), "keys busy once done")
			assert.Zero(t, l.order.breaches.Load(), "notes that ran beside or before an earlier one of their key")
		})
	}
}

// The messages a keyed router still holds when it cannot hand them on say
// why: ErrStopped after the router's Stop, ErrNoRoutee when its routees
// were stopped one by one while it drained.
func TestAKeyedRoutersLeftoverMessagesSayWhyTheyWereLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(r *crew.Router[note])
		want error
	}{
		{"Stop", (*crew.Router[note]).Stop, crew.ErrStopped},
		{"routees stopped while draining", func(r *crew.Router[note]) {
			r.Drain()
			for _, ref := range r.Routees() {
				ref.Stop()
			}
		}, crew.ErrNoRoutee},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const held = 9
			started, gate := make(chan struct{}), make(chan struct{})
			var mu sync.Mutex
			reasons := map[string]int{}
			r := crew.SpawnRouter(context.Background(), 2, func(context.Context, note) error {
				close(started)
				<-gate
				return nil
			}, crew.WithKey(noteKey), crew.WithDeadLetters(func(d crew.DeadLetter) {
				mu.Lock()
				reasons[d.Reason.Error()]++
				mu.Unlock()
			}))
			for i := range held + 1 {
				require.NoError(t, r.Tell(context.Background(), note{key: 0, seq: i}))
			}
			<-started // the first is out; the others wait behind it in the router
			tc.end(r)
			close(gate)
			<-r.Done()
			assert.Equal(t, map[string]int{tc.want.Error(): held}, reasons)
			assert.EqualValues(t, held, r.DeadLetters())
		})
	}
}

// A WithConsistentHash router reads a message's key as its Tell takes it,
// and never again: a key that waited behind a stopping routee is placed
// on another by the hash kept with it, so that a key function that
// panics, or reads something that changed, cannot strand the key's
// messages as a routee's handler ends.
func TestAConsistentHashRouterReadsAKeyOnlyInTell(t *testing.T) {
	var telling atomic.Bool
	var late atomic.Int32 // calls of the key function outside a Tell
	key := func(n note) int {
		if !telling.Load() {
			late.Add(1)
		}
		return n.key
	}
	started, gate := make(chan struct{}, 1), make(chan struct{})
	handled := make(chan int, 8)
	r := crew.SpawnRouter(context.Background(), 2, func(_ context.Context, n note) error {
		if n.seq == 0 {
			started <- struct{}{}
			<-gate
		}
		handled <- n.seq
		return nil
	}, crew.WithConsistentHash(key))
	tell := func(n note) {
		telling.Store(true)
		require.NoError(t, r.Tell(context.Background(), n))
		telling.Store(false)
	}
	tell(note{key: 7, seq: 0})
	<-started
	var pinned *crew.Ref[note]
	for _, ref := range r.Routees() {
		if ref.Busy() {
			pinned = ref
		}
	}
	require.NotNil(t, pinned)
	pinned.Stop() // its message goes on; the key's next ones wait in the router
	for seq := 1; seq <= 3; seq++ {
		tell(note{key: 7, seq: seq})
	}
	close(gate)
	for want := range 4 {
		assert.Equal(t, want, <-handled)
	}
	r.Stop()
	<-r.Done()
	assert.Zero(t, late.Load(), "the key function was called outside Tell")
}

// Stop stops a keyed router at once: a message held behind its key when
// its key's message out is dead-lettered by a routee's Stop is not sent
// to a routee that Stop has not reached yet, where it could start after
// Stop: it is a dead letter of the router itself, with ErrStopped.
func TestAStoppedKeyedRouterSendsNoHeldMessageOn(t *testing.T) {
	started, gate, filled := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	dead := map[int]crew.DeadLetter{}
	r := crew.SpawnRouter(context.Background(), 2, func(_ context.Context, n note) error {
		switch n.seq {
		case 0:
			close(started)
			<-gate
		case 1:
			close(filled)
		}
		return nil
	}, crew.WithKey(noteKey), crew.WithStrategy(crew.RoundRobin()), crew.WithName("stopper"),
		crew.WithDeadLetters(func(d crew.DeadLetter) {
			mu.Lock()
			dead[d.Message.(note).seq] = d
			mu.Unlock()
		}))
	ctx := context.Background()
	require.NoError(t, r.Tell(ctx, note{key: 1, seq: 0})) // to routee 0, which it holds
	<-started
	require.NoError(t, r.Tell(ctx, note{key: 3, seq: 1})) // to routee 1
	<-filled
	require.NoError(t, r.Tell(ctx, note{key: 2, seq: 2})) // to routee 0, behind the first
	require.NoError(t, r.Tell(ctx, note{key: 2, seq: 3})) // waits behind it, in the router
	r.Stop()
	close(gate)
	<-r.Done()
	assert.Equal(t, map[int]crew.DeadLetter{
		2: {Message: note{key: 2, seq: 2}, Target: "stopper-0", Reason: crew.ErrStopped},
		3: {Message: note{key: 2, seq: 3}, Target: "stopper", Reason: crew.ErrStopped},
	}, dead)
}
