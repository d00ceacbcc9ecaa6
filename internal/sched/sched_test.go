package sched

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Unit tests of the scheduler through its API, with no pool around it: a
// test plays the pool, calling Offer as a Submit would and Next as a
// worker's goroutine would. A worker that finds no job parks on its
// channel, which synctest.Wait sees as durably blocked: so the tests
// order events without a poll or a sleep.

// testOwner stands for the pool's owner type.
type testOwner struct{ name string }

// newTest makes a scheduler of workers workers and perWorker jobs each.
func newTest(workers, perWorker int) *Scheduler[int, *testOwner] {
	s := new(Scheduler[int, *testOwner])
	s.Init(Config[int, *testOwner]{Workers: workers, PerWorker: perWorker, Own: &testOwner{"pool"}})
	return s
}

// grant is what a worker's Next gave it.
type grant struct {
	job     int
	owner   *testOwner
	skipped bool
	cause   error
}

// run runs worker w as a pool's goroutine would, ending each job at once,
// and sends what it was given on out, until Next says stop; then it
// closes out.
func run(s *Scheduler[int, *testOwner], w *Worker[int, *testOwner], out chan<- grant) {
	defer close(out)
	ended := false
	for {
		g, ok := s.Next(w, ended, 0, 0, nil)
		if !ok {
			return
		}
		gr := grant{job: g.Job(), owner: g.Owner(), skipped: g.Skipped()}
		if gr.skipped {
			gr.cause = s.Cause(g)
		}
		out <- gr
		ended = true
	}
}

// offer offers job as a Submit that may wait, and fails the test unless
// the scheduler took it at once.
func offer(t *testing.T, s *Scheduler[int, *testOwner], o *Owner[int, *testOwner], job int) {
	t.Helper()
	if v, _, err := s.Offer(job, o, MayWait, 0, nil); v != Accepted || err != nil {
		t.Fatalf("Offer(%d) = %v, %v; want Accepted", job, v, err)
	}
}

// openBatch opens a batch of s named name, with at most limit of its jobs
// running at once (0: no limit).
func openBatch(s *Scheduler[int, *testOwner], name string, limit int) *Owner[int, *testOwner] {
	b := new(Owner[int, *testOwner])
	s.OpenBatch(b, &testOwner{name}, context.Background(), limit, "", 1)
	return b
}

func TestOfferHandsAJobToAnIdleWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 3)
		out := make(chan grant)
		go run(s, s.Workers()[0], out)
		synctest.Wait() // the worker is parked, idle
		if n := s.Idle(); n != 1 {
			t.Fatalf("idle workers = %d, want 1", n)
		}
		offer(t, s, s.Own(), 7)
		if g := <-out; g.job != 7 || g.owner.name != "pool" || g.skipped {
			t.Fatalf("worker got %+v, want job 7 of the pool's own", g)
		}
		synctest.Wait() // the worker ended job 7 and parked again
		c := s.Counts()
		if c.Held != 0 || c.Completed != 1 || c.Backlogged != 0 || c.Running != 0 {
			t.Fatalf("counts = %+v, want 1 completed, none held, none backlogged", c)
		}
		close(s.Workers()[0].wake) // what Dismiss does, once Shut drained
		<-out
	})
}

func TestJobsAreDispatchedInTheOrderTheyWereQueuedAcrossOwners(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 100)
		fifo, limited := openBatch(s, "fifo", 0), openBatch(s, "limited", 1)
		// The worker has not asked for a job yet: every job queues.
		owners := []*Owner[int, *testOwner]{s.Own(), fifo, limited}
		for i := range 9 {
			offer(t, s, owners[i%3], i)
		}
		if c := s.Counts(); c.Queued != 9 || c.Held != 9 {
			t.Fatalf("counts = %+v, want 9 queued", c)
		}
		if c := s.BatchCounts(fifo); c.Queued != 3 {
			t.Fatalf("the fifo batch's queued = %d, want 3", c.Queued)
		}
		out := make(chan grant)
		go run(s, s.Workers()[0], out)
		for i := range 9 {
			g := <-out
			if want := []string{"pool", "fifo", "limited"}[i%3]; g.job != i || g.owner.name != want {
				t.Fatalf("dispatch %d: got job %d of %q, want job %d of %q", i, g.job, g.owner.name, i, want)
			}
		}
		synctest.Wait()
		for _, b := range []*Owner[int, *testOwner]{fifo, limited} {
			if e := s.WaitBatch(b, errors.New("closed")); e.Completed != 3 {
				t.Fatalf("a batch's jobs completed = %d, want 3", e.Completed)
			}
		}
		close(s.Workers()[0].wake)
		<-out
	})
}

func TestAFullPoolQueuesTheBlockedSubmitAndLetsItInAsAJobEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 2) // a bound of 2 jobs
		offer(t, s, s.Own(), 1)
		offer(t, s, s.Own(), 2)
		if v, _, _ := s.Offer(3, s.Own(), NoWait, 0, nil); v != Full {
			t.Fatalf("TrySubmit's Offer on a full pool = %v, want Full", v)
		}
		if v, _, _ := s.Offer(3, s.Own(), FromJob, 0, nil); v != Full {
			t.Fatalf("a job's own Offer on a full pool = %v, want Full (run it inline)", v)
		}
		v, tk, _ := s.Offer(3, s.Own(), MayWait, 0, nil)
		if v != Waiting {
			t.Fatalf("Submit's Offer on a full pool = %v, want Waiting", v)
		}
		if c := s.Counts(); c.Blocked != 1 || c.Held != 2 {
			t.Fatalf("counts = %+v, want 1 blocked, 2 held", c)
		}
		admitted := make(chan error)
		go func() { admitted <- s.Await(context.Background(), tk) }()
		out := make(chan grant)
		go run(s, s.Workers()[0], out)
		for want := 1; want <= 3; want++ {
			if g := <-out; g.job != want {
				t.Fatalf("got job %d, want %d", g.job, want)
			}
			if want == 1 {
				if err := <-admitted; err != nil { // job 1's end made room
					t.Fatalf("Await = %v, want nil", err)
				}
			}
		}
		synctest.Wait()
		if c := s.Counts(); c.Completed != 3 || c.Held != 0 || c.Blocked != 0 {
			t.Fatalf("counts = %+v, want 3 completed", c)
		}
		close(s.Workers()[0].wake)
		<-out
	})
}

func TestAWithdrawnSubmitTakesNoRoom(t *testing.T) {
	s := newTest(1, 1)
	offer(t, s, s.Own(), 1)
	v, tk, _ := s.Offer(2, s.Own(), MayWait, 0, nil)
	if v != Waiting {
		t.Fatalf("Offer = %v, want Waiting", v)
	}
	if decided, err := s.Withdraw(tk); decided || err != nil {
		t.Fatalf("Withdraw = %v, %v; want not decided", decided, err)
	}
	if c := s.Counts(); c.Blocked != 0 || c.Held != 1 {
		t.Fatalf("counts = %+v, want 1 held, none blocked", c)
	}
}

func TestShutRefusesNewJobsAndClosesOnceTheLastEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 1)
		offer(t, s, s.Own(), 1)
		v, tk, _ := s.Offer(2, s.Own(), MayWait, 0, nil)
		if v != Waiting {
			t.Fatalf("Offer = %v, want Waiting", v)
		}
		closed := errors.New("closed")
		drained := s.Shut(closed)
		if err := s.Await(context.Background(), tk); err != closed {
			t.Fatalf("the blocked Submit got %v, want Shut's error", err)
		}
		if v, _, _ := s.Offer(3, s.Own(), MayWait, 0, nil); v != Shut {
			t.Fatalf("Offer after Shut = %v, want Shut", v)
		}
		// A job's own Submit is let in while a job is held: queued beyond
		// the bound it cannot be, so it runs inline.
		if v, _, _ := s.Offer(4, s.Own(), FromJob, 0, nil); v != Full {
			t.Fatalf("a job's own Offer after Shut = %v, want Full", v)
		}
		select {
		case <-drained:
			t.Fatal("Shut's channel closed while a job is held")
		default:
		}
		out := make(chan grant)
		go run(s, s.Workers()[0], out)
		if g := <-out; g.job != 1 {
			t.Fatalf("got job %d, want 1", g.job)
		}
		synctest.Wait()
		select {
		case <-drained:
		default:
			t.Fatal("Shut's channel still open once no job is held")
		}
		if v, _, _ := s.Offer(5, s.Own(), FromJob, 0, nil); v != Shut {
			t.Fatalf("a job's own Offer once drained = %v, want Shut", v)
		}
		s.Dismiss()
		<-out
	})
}

func TestStopSkipsTheQueuedJobsWithItsCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 10)
		for i := range 3 {
			offer(t, s, s.Own(), i)
		}
		cause := errors.New("the pool's context ended")
		s.Stop(cause)
		if v, _, _ := s.Offer(9, s.Own(), MayWait, 0, nil); v != Stopped {
			t.Fatalf("Offer after Stop = %v, want Stopped", v)
		}
		out := make(chan grant)
		go run(s, s.Workers()[0], out)
		for i := range 3 {
			if g := <-out; g.job != i || !g.skipped || g.cause != cause {
				t.Fatalf("got %+v, want job %d skipped with Stop's cause", g, i)
			}
		}
		synctest.Wait()
		if c := s.Counts(); c.Canceled != 3 || c.Completed != 0 || !s.SkippedOwn() {
			t.Fatalf("counts = %+v, want 3 skipped", c)
		}
		s.Dismiss()
		<-out
	})
}

func TestABatchsStopSkipsItsJobsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 10)
		b := openBatch(s, "batch", 0)
		offer(t, s, b, 1)
		offer(t, s, s.Own(), 2)
		offer(t, s, b, 3)
		cause := errors.New("the batch failed")
		s.StopBatch(b, cause)
		if v, _, _ := s.Offer(4, b, MayWait, 0, nil); v != BatchStopped {
			t.Fatalf("the batch's Offer after StopBatch = %v, want BatchStopped", v)
		}
		out := make(chan grant)
		go run(s, s.Workers()[0], out)
		for _, want := range []grant{{job: 1, skipped: true, cause: cause}, {job: 2}, {job: 3, skipped: true, cause: cause}} {
			if g := <-out; g.job != want.job || g.skipped != want.skipped || g.cause != want.cause {
				t.Fatalf("got %+v, want %+v", g, want)
			}
		}
		synctest.Wait()
		if e := s.WaitBatch(b, errors.New("closed")); e.Canceled != 2 || e.Completed != 0 {
			t.Fatalf("the batch's ends = %+v, want 2 skipped", e)
		}
		if s.SkippedOwn() {
			t.Fatal("the pool's own job counted skipped")
		}
		s.Dismiss()
		<-out
	})
}

func TestFailuresAreCountedWithTheirJobsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 10)
		b := openBatch(s, "batch", 0)
		offer(t, s, b, 1)
		w := s.Workers()[0]
		g, _ := s.Next(w, false, 0, 0, nil)
		if g.Job() != 1 {
			t.Fatalf("got job %d, want 1", g.Job())
		}
		w.Fail(Panicked)
		if c := s.Counts(); c.Failed != 0 {
			t.Fatalf("a failure counted before its job ended: %+v", c)
		}
		s.RanInline(b) // a job run inline that failed
		s.Tally(b, Failed)
		s.RanInline(s.Own())
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Next(w, true, 0, 0, nil) // parks: nothing queued
		}()
		synctest.Wait()
		c := s.Counts()
		if c.Completed != 1 || c.Failed != 2 || c.Panicked != 1 || c.Inline != 2 {
			t.Fatalf("counts = %+v, want 1 completed, 2 inline, 2 failed, 1 panicked", c)
		}
		if bc := s.BatchCounts(b); bc.Completed != 1 || bc.Failed != 2 || bc.Panicked != 1 || bc.Inline != 1 {
			t.Fatalf("the batch's counts = %+v, want 1 completed, 1 inline, 2 failed, 1 panicked", bc)
		}
		s.Dismiss()
		<-done
	})
}

func TestResizeGrowsAndRetires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTest(1, 1)
		first := s.Workers()[0]
		made, resized := s.Resize(3, 0)
		if ws := s.Workers(); !resized || len(made) != 2 || len(ws) != 3 || ws[0] != first || ws[1] != made[0] {
			t.Fatalf("Resize(3) made %d, workers %d; want the one kept, then 2 made", len(made), len(ws))
		}
		// The bound follows the workers: 3 jobs now.
		for i := range 3 {
			offer(t, s, s.Own(), i)
		}
		if v, _, _ := s.Offer(3, s.Own(), NoWait, 0, nil); v != Full {
			t.Fatalf("a fourth Offer = %v, want Full", v)
		}
		outs := make([]chan grant, 3)
		for i, w := range s.Workers() {
			outs[i] = make(chan grant, 3)
			go run(s, w, outs[i])
		}
		synctest.Wait() // the three jobs ran; every worker is idle
		if n := s.Idle(); n != 3 {
			t.Fatalf("idle = %d, want 3", n)
		}
		if made, resized := s.Resize(1, 0); !resized || len(made) != 0 || len(s.Workers()) != 1 {
			t.Fatal("Resize(1) did not leave one worker")
		}
		if made, resized := s.Resize(1, 0); !resized || len(made) != 0 {
			t.Fatal("Resize(1) of one worker made one, or did not say it has one")
		}
		for i := 1; i < 3; i++ {
			for range outs[i] { // a retired worker's Next returns false: run closes its channel
			}
		}
		if n := len(s.Workers()); n != 1 {
			t.Fatalf("workers = %d, want 1", n)
		}
		if c := s.Counts(); c.Completed != 3 || c.Live != 1 {
			t.Fatalf("counts = %+v, want 3 completed, 1 live", c)
		}
		s.Shut(errors.New("closed"))
		if made, resized := s.Resize(2, 0); resized || len(made) != 0 || len(s.Workers()) != 1 {
			t.Fatal("Resize after Shut changed the workers, or said so")
		}
		s.Dismiss()
		for range outs[0] {
		}
	})
}
