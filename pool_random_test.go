package crew_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/crewlib/crew"
)

// A randomized check of conservation: pools whose batches (some with
// WithLimit; in half the rounds, a pool WithFairShare, with tenants and
// weights), Resize and Shutdown race, with jobs that fail, panic or call
// runtime.Goexit, and Submits that give up waiting for room. Every job accepted runs exactly once or becomes exactly
// one dead letter (skipped or dropped), none refused ever runs, the counts
// of Stats add up, no batch runs more jobs at once than its limit, and no
// goroutine is left behind. A failure prints the seed that replays it.
func TestPoolsWithBatchesResizeAndShutdownConserveEveryJob(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rounds := 400
	if raceEnabled {
		rounds = 100
	}
	for round := range rounds {
		if !conserves(t, rand.New(rand.NewPCG(seed, uint64(round)))) {
			t.Fatalf("round %d of seed %d", round, seed)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// A ledger records what each job of a round (its id) is to do, and what
// became of it.
type ledger struct {
	fate, batch   [200]int // set before the job's Submit
	runs, letters [200]atomic.Int32
	accepted      [200]atomic.Bool
	next          atomic.Int64
	failed        atomic.Int64 // jobs that returned an error, panicked or called runtime.Goexit
	limit         [3]int       // each batch's, or 0
	running       [3]atomic.Int64
	over          atomic.Bool // a batch ran more jobs at once than its limit
}

// do is the pools' handler: it runs job id as its fate says.
func (l *ledger) do(_ context.Context, id int64) error {
	l.runs[id].Add(1)
	b := l.batch[id]
	if n := l.running[b].Add(1); l.limit[b] > 0 && n > int64(l.limit[b]) {
		l.over.Store(true)
	}
	defer l.running[b].Add(-1)
	switch l.fate[id] {
	case 0:
		l.failed.Add(1)
		runtime.Goexit()
	case 1, 2:
		l.failed.Add(1)
		panic("boom")
	case 3, 4, 5:
		l.failed.Add(1)
		return errors.New("failed")
	case 6, 7:
		runtime.Gosched()
	}
	return nil
}

func conserves(t *testing.T, rng *rand.Rand) bool {
	var l ledger
	ctx := context.Background()
	workers := 1 + rng.IntN(4)
	opts := []crew.Option{crew.WithQueueSize(1 + rng.IntN(3)), crew.WithDeadLetters(func(d crew.DeadLetter) {
		l.letters[d.Message.(int64)].Add(1)
	})}
	fair := rng.IntN(2) == 0
	if fair {
		opts = append(opts, crew.WithFairShare())
	}
	var m *metered
	if rng.IntN(2) == 0 {
		m = &metered{}
		opts = append(opts, crew.WithMetrics(m))
	}
	p := crew.NewPool(workers, l.do, opts...)
	var wg sync.WaitGroup
	for b := range l.limit {
		l.limit[b] = rng.IntN(3) // 0: none
		var opts []crew.Option
		if l.limit[b] > 0 {
			opts = append(opts, crew.WithLimit(l.limit[b]))
		}
		if fair {
			opts = append(opts, crew.WithWeight(1+rng.IntN(3)))
			if b < 2 && rng.IntN(2) == 0 {
				opts = append(opts, crew.WithTenant("t"))
			}
		}
		jobs := 10 + rng.IntN(40)
		seed := rng.Uint64()
		wg.Go(func() { runBatch(p, &l, b, jobs, rand.New(rand.NewPCG(seed, uint64(b))), opts) })
	}
	resizes := make([]int, 4)
	for i := range resizes {
		resizes[i] = 1 + rng.IntN(4)
	}
	wg.Go(func() {
		for _, n := range resizes {
			p.Resize(n) // also replaces the workers a Goexit ended
			runtime.Gosched()
		}
	})
	shutdown, cancel := context.WithCancel(ctx)
	defer cancel()
	switch rng.IntN(3) {
	case 0: // a deadline already past
		cancel()
	case 1: // a deadline that passes once a few jobs ran
		after := int64(1 + rng.IntN(20))
		go func() {
			for l.next.Load() < after && shutdown.Err() == nil {
				runtime.Gosched()
			}
			cancel()
		}()
	}
	for l.next.Load() < int64(rng.IntN(30)) {
		runtime.Gosched() // let some jobs in before Shutdown races them
	}
	_ = p.Shutdown(shutdown)
	wg.Wait()
	_ = p.Wait()
	ok := balanced(t, p, &l)
	if m != nil {
		ok = meteredAgrees(t, p, m) && ok
	}
	if fair {
		ok = assert.Empty(t, crew.FairLeftovers(p), "what the fair order holds once every batch was waited for") && ok
	}
	return ok
}

// runBatch submits up to jobs jobs to batch b of p, made with opts, until
// a Submit is refused, then waits for the batch. Ids are taken in turn by
// the batches. One Submit in four gives up waiting for room after up to
// 50 µs.
func runBatch(p *crew.Pool[int64], l *ledger, b, jobs int, rng *rand.Rand, opts []crew.Option) {
	batch, bctx := p.NewBatch(context.Background(), opts...)
	for range jobs {
		id := l.next.Add(1) - 1
		l.fate[id], l.batch[id] = rng.IntN(40), b
		sctx, cancel := bctx, context.CancelFunc(func() {})
		if rng.IntN(4) == 0 {
			sctx, cancel = context.WithTimeout(bctx, time.Duration(rng.IntN(50))*time.Microsecond)
		}
		err := batch.Submit(sctx, id)
		cancel()
		if err != nil {
			if sctx.Err() != nil && bctx.Err() == nil {
				continue // gave up waiting: not accepted
			}
			break
		}
		l.accepted[id].Store(true)
	}
	_ = batch.Wait()
}

// balanced checks what the ledger and p's Stats say of the round.
func balanced(t *testing.T, p *crew.Pool[int64], l *ledger) bool {
	ok := assert.False(t, l.over.Load(), "a batch ran more jobs at once than its limit")
	var accepted, ran, letters int64
	for id := range l.next.Load() {
		r, d := int64(l.runs[id].Load()), int64(l.letters[id].Load())
		ran, letters = ran+r, letters+d
		if l.accepted[id].Load() {
			accepted++
			ok = assert.EqualValues(t, 1, r+d, "job %d ran %d times and left %d dead letters", id, r, d) && ok
		} else {
			ok = assert.Zero(t, r+d, "job %d was refused, yet ran %d times and left %d dead letters", id, r, d) && ok
		}
	}
	s := p.Stats()
	ok = assert.Equal(t, accepted, s.Submitted, "Submitted") && ok
	ok = assert.Equal(t, ran, s.Completed, "Completed") && ok
	ok = assert.Equal(t, letters, s.Canceled+s.Dropped, "Canceled+Dropped") && ok
	ok = assert.Equal(t, l.failed.Load(), s.Failed, "Failed") && ok
	ok = assert.Zero(t, s.Queued+s.Running, "Queued+Running") && ok
	return ok
}

// meteredAgrees checks, once p's Wait returned, that what p reported to m
// agrees with its Stats: every job accepted, ran, skipped or dropped is
// counted once, and every job that ran has its queue wait and its run
// time.
func meteredAgrees(t *testing.T, p *crew.Pool[int64], m *metered) bool {
	src := m.only(t)
	s := p.Stats()
	ok := assert.EqualValues(t, s.Submitted, src.count(crew.EventSubmitted), "metrics: submitted")
	ok = assert.EqualValues(t, s.Completed, src.count(crew.EventCompleted), "metrics: completed") && ok
	ok = assert.EqualValues(t, s.Failed, src.count(crew.EventFailed), "metrics: failed") && ok
	ok = assert.EqualValues(t, s.Canceled, src.count(crew.EventSkipped), "metrics: skipped") && ok
	ok = assert.EqualValues(t, s.Dropped, src.count(crew.EventDropped), "metrics: dropped") && ok
	ok = assert.Len(t, src.observed(crew.QueueWait), int(s.Completed), "metrics: a queue wait per job that ran") && ok
	ok = assert.Len(t, src.observed(crew.RunTime), int(s.Completed), "metrics: a run time per job that ran") && ok
	for _, d := range src.observed(crew.QueueWait) {
		ok = assert.GreaterOrEqual(t, d, time.Duration(0), "metrics: a queue wait") && ok
	}
	ok = assert.Equal(t, 1, src.closes(), "metrics: closed once") && ok
	return assert.Equal(t, crew.Gauges{}, src.src.Gauges(), "metrics: gauges after Wait") && ok
}
