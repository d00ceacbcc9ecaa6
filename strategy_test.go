package crew_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A fleet is a set of actors whose handlers record each message, report
// that they started, and then block until the test opens the gate, so the
// depth of every mailbox is exact at each step.
type fleet struct {
	refs    []*crew.Ref[int]
	started chan int // the index of a routee whose handler started
	gate    chan struct{}
	dead    letters

	mu  sync.Mutex
	got [][]int // messages each routee's handler received
}

func newFleet(t *testing.T, n int, opts ...crew.Option) *fleet {
	f := &fleet{started: make(chan int, 1<<16), gate: make(chan struct{}), got: make([][]int, n)}
	for i := range n {
		handle := func(_ context.Context, v int) error {
			if v == warmUp {
				return nil
			}
			f.mu.Lock()
			f.got[i] = append(f.got[i], v)
			f.mu.Unlock()
			f.started <- i
			<-f.gate
			return nil
		}
		o := append([]crew.Option{crew.WithName(fmt.Sprint(i)), crew.WithDeadLetters(f.dead.sink)}, opts...)
		f.refs = append(f.refs, crew.Spawn(context.Background(), handle, o...))
	}
	t.Cleanup(f.stop)
	// An actor's goroutine, as it first runs, looks busy for an instant
	// while it finds its mailbox empty: a router that picked then would
	// pass it over. Each handles a message first, and is idle once it is
	// done with it, past that first look.
	for _, r := range f.refs {
		require.NoError(t, r.Tell(context.Background(), warmUp))
	}
	for _, r := range f.refs {
		until(t, func() bool { return !r.Busy() && r.Len() == 0 })
	}
	return f
}

// warmUp is the message each routee of a fleet handles first, unrecorded.
const warmUp = -1

// stop opens the gate, stops every actor and waits for them.
func (f *fleet) stop() {
	select {
	case <-f.gate:
	default:
		close(f.gate)
	}
	for _, r := range f.refs {
		r.Stop()
		<-r.Done()
	}
}

// fill tells routee i n messages directly, the first one alone so that it
// is in the handler before the others queue: routee i ends up busy with n-1
// queued.
func (f *fleet) fill(t *testing.T, i, n int) {
	for v := range n {
		require.NoError(t, f.refs[i].Tell(context.Background(), 1000*(i+1)+v))
		if v == 0 {
			require.Equal(t, i, <-f.started)
		}
	}
}

// awaitStarts waits for n handlers to start.
func (f *fleet) awaitStarts(n int) {
	for range n {
		<-f.started
	}
}

// counts returns how many messages each routee's handler received.
func (f *fleet) counts() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make([]int, len(f.got))
	for i, g := range f.got {
		c[i] = len(g)
	}
	return c
}

func (f *fleet) lens() []int {
	l := make([]int, len(f.refs))
	for i, r := range f.refs {
		l[i] = r.Len()
	}
	return l
}

func tellAll(t *testing.T, r *crew.Router[int], from, n int) {
	for v := from; v < from+n; v++ {
		require.NoError(t, r.Tell(context.Background(), v))
	}
}

func TestSmallestMailboxGivesEachIdleRouteeOneMessage(t *testing.T) {
	f := newFleet(t, 5)
	r := crew.NewRouter(crew.SmallestMailbox(), f.refs...)
	tellAll(t, r, 0, 5)
	f.awaitStarts(5)
	assert.Equal(t, []int{1, 1, 1, 1, 1}, f.counts())
	assert.Equal(t, []int{0, 0, 0, 0, 0}, f.lens())
}

func TestSmallestMailboxAvoidsAPrefilledRoutee(t *testing.T) {
	f := newFleet(t, 5)
	f.fill(t, 0, 10)
	r := crew.NewRouter(crew.SmallestMailbox(), f.refs...)
	tellAll(t, r, 0, 4)
	f.awaitStarts(4)
	assert.Equal(t, []int{1, 1, 1, 1, 1}, f.counts(), "routee 0 handles only its first; each other gets one")
	assert.Equal(t, 9, f.refs[0].Len())
}

func TestSmallestMailboxStarvesAStuckRoutee(t *testing.T) {
	f := newFleet(t, 5)
	f.fill(t, 0, 51) // stuck on a slow message with a backlog of 50
	r := crew.NewRouter(crew.SmallestMailbox(), f.refs...)
	tellAll(t, r, 0, 4)
	// Once each has started its message, every score is steady: an actor
	// taking a message looks busy with it still queued for an instant, and
	// a Tell then would count it twice.
	f.awaitStarts(4)
	tellAll(t, r, 4, 16)
	assert.Equal(t, []int{50, 4, 4, 4, 4}, f.lens(), "the stuck routee gets none of the next 20")
}

func TestSmallestMailboxRotatesAmongEqualDepths(t *testing.T) {
	f := newFleet(t, 4)
	for i := range f.refs {
		f.fill(t, i, 4) // each busy with 3 queued
	}
	r := crew.NewRouter(crew.SmallestMailbox(), f.refs...)
	for round := range 3 {
		seen := map[int]bool{}
		for v := range 4 {
			before := f.lens()
			require.NoError(t, r.Tell(context.Background(), 100*round+v))
			after := f.lens()
			for i := range after {
				if after[i] != before[i] {
					assert.False(t, seen[i], "routee %d got two messages in one round", i)
					seen[i] = true
				}
			}
		}
		assert.Len(t, seen, 4, "each routee got one message this round")
		assert.Equal(t, []int{4 + round, 4 + round, 4 + round, 4 + round}, f.lens(), "depths stay equal")
	}
}

func TestRoutersSkipAStoppedRoutee(t *testing.T) {
	for name, s := range map[string]func() crew.Strategy{
		"SmallestMailbox": crew.SmallestMailbox,
		"SmallestOfTwo":   crew.SmallestOfTwo,
		"RoundRobin":      crew.RoundRobin,
		"Random":          crew.Random,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFleet(t, 4)
			f.fill(t, 0, 3) // one in flight, two queued
			f.refs[0].Stop()
			assert.Equal(t, []int{1001, 1002}, f.dead.messages(), "its leftovers are dead letters")
			r := crew.NewRouter(s(), f.refs...)
			tellAll(t, r, 0, 30)
			assert.Zero(t, f.refs[0].Len(), "never sent to the stopped routee")

			close(f.gate)
			<-f.refs[0].Done()
			assert.Len(t, f.dead.get(), 2)
			for _, d := range f.dead.get() {
				assert.ErrorIs(t, d.Reason, crew.ErrStopped)
			}
			assert.Equal(t, 1, f.counts()[0])
		})
	}
}

func TestSmallestMailboxSkipsFullRouteesThenFallsBackToRoundRobin(t *testing.T) {
	synctest.Test(t, smallestMailboxSkipsFullRoutees)
}

func smallestMailboxSkipsFullRoutees(t *testing.T) {
	f := newFleet(t, 3, crew.WithMailbox(func() crew.Mailbox[int] {
		return crew.NewBounded[int](2, crew.Fail)
	}))
	f.fill(t, 0, 3) // one in flight, mailbox full
	require.True(t, f.refs[0].Full())
	// Every actor has looked at its mailbox and waits: an actor looking
	// counts as busy for that moment, and a router that scored it then
	// would send both messages below to the other idle routee.
	synctest.Wait()
	r := crew.NewRouter(crew.SmallestMailbox(), f.refs...)
	tellAll(t, r, 0, 2) // to the two idle routees
	f.awaitStarts(2)
	tellAll(t, r, 2, 4) // two more each: their mailboxes fill up too
	assert.Equal(t, []int{2, 2, 2}, f.lens())
	assert.Equal(t, []int{1, 1, 1}, f.counts())
	assert.Empty(t, f.dead.get(), "no message was refused while a routee had room")

	// Every routee is full: the message goes round robin to one of them,
	// whose mailbox refuses it, and it becomes that routee's dead letter.
	err := r.Tell(context.Background(), 99)
	assert.ErrorIs(t, err, crew.ErrMailboxFull)
	require.Len(t, f.dead.get(), 1)
	assert.Equal(t, 99, f.dead.get()[0].Message)
}

func TestBroadcastReachesEveryLiveRoutee(t *testing.T) {
	f := newFleet(t, 4)
	f.refs[3].Stop()
	<-f.refs[3].Done()
	r := crew.NewRouter(crew.RoundRobin(), f.refs...)
	require.NoError(t, r.Broadcast(context.Background(), 7))
	f.awaitStarts(3)
	assert.Equal(t, []int{1, 1, 1, 0}, f.counts())
	assert.Empty(t, f.dead.get())
}

func TestRouterWithoutLiveRouteesErrs(t *testing.T) {
	empty := crew.NewRouter[int](crew.SmallestMailbox())
	assert.ErrorIs(t, empty.Tell(context.Background(), 1), crew.ErrNoRoutee)
	assert.ErrorIs(t, empty.Broadcast(context.Background(), 1), crew.ErrNoRoutee)

	f := newFleet(t, 2)
	f.stop()
	for _, s := range []crew.Strategy{crew.SmallestMailbox(), crew.SmallestOfTwo(), crew.RoundRobin(), crew.Random()} {
		r := crew.NewRouter(s, f.refs...)
		assert.ErrorIs(t, r.Tell(context.Background(), 1), crew.ErrNoRoutee)
	}
	assert.Empty(t, f.dead.get(), "ErrNoRoutee leaves the message with the caller")
}

func TestRoundRobinSendsInTurn(t *testing.T) {
	f := newFleet(t, 3)
	r := crew.NewRouter(crew.RoundRobin(), f.refs...)
	tellAll(t, r, 0, 9)
	f.awaitStarts(3)
	assert.Equal(t, []int{2, 2, 2}, f.lens())
	close(f.gate)
	f.awaitStarts(6)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Equal(t, [][]int{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}, f.got)
}

func TestRandomReachesEveryRoutee(t *testing.T) {
	f := newFleet(t, 4)
	close(f.gate)
	r := crew.NewRouter(crew.Random(), f.refs...)
	tellAll(t, r, 0, 400)
	f.awaitStarts(400)
	for i, c := range f.counts() {
		assert.Greater(t, c, 40, "routee %d got %d of 400", i, c)
	}
}

// stubRoutee is a Routee that is not an actor.
type stubRoutee struct {
	len     int
	busy    bool
	stopped bool
}

func (s *stubRoutee) Len() int      { return s.len }
func (s *stubRoutee) Busy() bool    { return s.busy }
func (s *stubRoutee) Stopped() bool { return s.stopped }

func TestUnknownDepthNeverWinsByDefault(t *testing.T) {
	unknown := &stubRoutee{len: -1}
	loaded := &stubRoutee{len: 40, busy: true}
	p := crew.NewPicker(crew.SmallestMailbox(), unknown, loaded)
	for range 10 {
		assert.Equal(t, 1, p.Pick(), "a known depth of 41 beats an unknown one")
	}
	loaded.stopped = true
	assert.Equal(t, 0, p.Pick(), "the unknown routee is the last resort")
	unknown.stopped = true
	assert.Equal(t, -1, p.Pick())
}

func TestPickerScoresCustomRoutees(t *testing.T) {
	a, b, c := &stubRoutee{len: 3}, &stubRoutee{len: 2, busy: true}, &stubRoutee{len: 1}
	p := crew.NewPicker(crew.SmallestMailbox(), a, b, c)
	assert.Equal(t, 2, p.Pick())
	c.len = 5
	assert.Contains(t, []int{0, 1}, p.Pick(), "a and b tie at 3")
}

func TestSmallestMailboxLoadFollowsTheFastRoutees(t *testing.T) {
	const routees, messages, window, slowness = 8, 20000, 16, 50
	var seen [messages]atomic.Int32
	var handled [routees]atomic.Int64
	// Time is counted in messages handled by the fast routees: a slow one
	// takes slowness ticks of that clock per message, so handler times are
	// uneven by a fixed factor whatever the machine does, with no sleep.
	var clock atomic.Int64
	var sent atomic.Bool
	// The sender keeps at most window messages outstanding, as a steady
	// stream would, so where each one goes depends on the queues it finds.
	credits := make(chan struct{}, window)
	refs := make([]*crew.Ref[int], routees)
	for i := range refs {
		slow := i >= routees/2
		refs[i] = crew.Spawn(context.Background(), func(_ context.Context, v int) error {
			if slow {
				for start := clock.Load(); clock.Load() < start+slowness && !sent.Load(); {
					runtime.Gosched()
				}
			} else {
				clock.Add(1)
			}
			seen[v].Add(1)
			handled[i].Add(1)
			<-credits
			return nil
		})
	}
	router := crew.NewRouter(crew.SmallestMailbox(), refs...)
	for v := range messages {
		credits <- struct{}{}
		require.NoError(t, router.Tell(context.Background(), v))
	}
	sent.Store(true)
	for range window {
		credits <- struct{}{} // every message has been handled
	}
	router.Stop()
	for _, ref := range refs {
		<-ref.Done()
	}
	for v := range seen {
		require.Equal(t, int32(1), seen[v].Load(), "message %d", v)
	}
	var fast, slow int64
	for i := range handled {
		if i < routees/2 {
			fast += handled[i].Load()
		} else {
			slow += handled[i].Load()
		}
	}
	t.Logf("fast routees handled %d, slow ones %d", fast, slow)
	assert.Greater(t, fast, 4*slow, "the load followed the fast routees")
}

func TestNewRouterKeepsItsOwnListOfRoutees(t *testing.T) {
	f := newFleet(t, 3)
	list := []*crew.Ref[int]{f.refs[0], f.refs[1]}
	r := crew.NewRouter(crew.RoundRobin(), list...)
	list[1] = f.refs[2] // the caller reuses its slice
	r.Routees()[0] = f.refs[2]
	require.NoError(t, r.Broadcast(context.Background(), 7))
	f.awaitStarts(2)
	assert.Equal(t, []int{1, 1, 0}, f.counts())
}

// An actor must never score 0 while a message told to it is unfinished:
// from the moment Tell returns until its handler returns, SmallestMailbox
// would otherwise take the actor for idle. The score is read first and the
// count of finished handlers after it, so a finished count below the told
// one means the message was unfinished when the score was read. Mailboxes
// whose depth the score reads from counters (Unbounded, Bounded) and
// through Len (Segmented, Fair, Chan) are both covered.
func TestAnActorNeverScoresZeroWhileAMessageIsUnfinished(t *testing.T) {
	kinds := []struct {
		name string
		new  func() crew.Mailbox[int]
	}{
		{"Unbounded", func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }},
		{"Segmented", func() crew.Mailbox[int] { return crew.NewSegmented[int]() }},
		{"Bounded", func() crew.Mailbox[int] { return crew.NewBounded[int](4, crew.Backpressure) }},
		{"Fair", func() crew.Mailbox[int] { return crew.NewFair(func(v int) int { return v % 2 }) }},
		{"Chan", func() crew.Mailbox[int] { return crew.NewChan[int](4) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var finished atomic.Int64
			ref := crew.Spawn(context.Background(), func(context.Context, int) error {
				finished.Add(1)
				return nil
			}, crew.WithMailbox(k.new))
			defer func() { ref.Stop(); <-ref.Done() }()
			told, breaches := int64(0), 0
			for i := range 20000 {
				require.NoError(t, ref.Tell(context.Background(), i))
				told++
				for {
					score := crew.RefLoad(ref)
					done := finished.Load()
					if score == 0 && done < told {
						breaches++
					}
					if done == told || i%4 != 0 { // every 4th message is watched to its end
						break
					}
					runtime.Gosched() // with GOMAXPROCS 1 the actor needs the processor
				}
			}
			assert.Zero(t, breaches, "the actor scored 0 with a message told and unfinished")
		})
	}
}

// ownLen is a mailbox of the user's that embeds an Unbounded for its
// methods but keeps its own queue, with its own Len.
type ownLen struct {
	*crew.Unbounded[int]
	mu   sync.Mutex
	side []int
}

func (m *ownLen) Enqueue(_ context.Context, v int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.side = append(m.side, v)
	return nil
}

func (m *ownLen) Dequeue() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.side) == 0 {
		return 0, false
	}
	v := m.side[0]
	m.side = m.side[1:]
	return v, true
}

func (m *ownLen) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.side)
}

func TestAMailboxThatEmbedsAnUnboundedIsScoredByItsOwnLen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := gateFor(t)
		ref := crew.Spawn(context.Background(), func(context.Context, int) error { <-release; return nil },
			crew.WithMailbox(func() crew.Mailbox[int] { return &ownLen{Unbounded: crew.NewUnbounded[int]()} }))
		defer func() { close(release); ref.Stop(); <-ref.Done() }()
		for i := range 5 {
			require.NoError(t, ref.Tell(context.Background(), i))
		}
		synctest.Wait()
		require.True(t, ref.Busy())
		require.Equal(t, 4, ref.Len())
		assert.EqualValues(t, 5, crew.RefLoad(ref), "4 queued in its own queue, plus 1 in hand")
	})
}

// unknownLen is a mailbox whose depth is unknown: its Len is -1.
type unknownLen struct{ crew.Mailbox[int] }

func (unknownLen) Len() int { return -1 }

func TestAnActorWhoseMailboxDepthIsUnknownRanksLast(t *testing.T) {
	ref := crew.Spawn(context.Background(), func(context.Context, int) error { return nil },
		crew.WithMailbox(func() crew.Mailbox[int] { return unknownLen{crew.NewUnbounded[int]()} }))
	defer func() { ref.Stop(); <-ref.Done() }()
	idle := crew.Spawn(context.Background(), func(context.Context, int) error { return nil })
	defer func() { idle.Stop(); <-idle.Done() }()
	assert.Greater(t, crew.RefLoad(ref), int64(1<<30), "unknown, not 0") // 1<<30: int is 32 bits on 386
	p := crew.NewPicker(crew.SmallestMailbox(), ref, idle)
	for range 4 {
		assert.Equal(t, 1, p.Pick(), "the actor of known depth wins")
	}
}
