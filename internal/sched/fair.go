package sched

import (
	"time"

	"github.com/crewlib/crew/internal/queue"
)

// A share is a set of flows that a pool with fair shares serves as one:
// the pool's own jobs, a batch's, or the batches of one tenant. Its place
// in the fair order is vt, the worker time it received per unit of weight
// while it was backlogged. The scheduler's lock guards it.
type share[T, B any] struct {
	flows   order[T, B]                          // its runnable flows, by their oldest job
	waiting queue.List[queue.Waiter[task[T, B]]] // its Submits blocked on a full pool, oldest first
	vt      float64                              // its virtual time: run time (ns) charged per unit of weight
	since   uint64                               // the number of the moment it last became backlogged: breaks ties of vt
	weight  int64                                // WithWeight
	mean    int64                                // its jobs' recent mean run time (ns): what a job is charged as it starts
	queued  int                                  // its jobs waiting in its flows
	running int                                  // its jobs charged and not settled: dispatched, not ended
	untimed int                                  // its jobs charged their estimate alone since its last timed one (see charge)
	at      int                                  // 1 + its index in fairness.runnable, or 0
	turns   int64                                // admissions left in its turn among the blocked shares
	links   queue.Links[share[T, B]]             // in fairness.blocked, while it has a blocked Submit
	tenant  string                               // its key in fairness.tenants, or "" for a batch's share of its own
	batches int                                  // a tenant's batches not finished
}

func newShare[T, B any](weight int) *share[T, B] {
	s := &share[T, B]{flows: newOrder[T, B](), weight: int64(weight)}
	s.links.Init(s)
	return s
}

// idle reports whether the share has no job: none running, none waiting
// in its flows or in a blocked Submit.
func (s *share[T, B]) idle() bool { return s.running == 0 && s.queued == 0 && s.waiting.Len() == 0 }

// before orders shares: the one that received the least service per
// weight first, then the one backlogged first.
func (s *share[T, B]) before(o *share[T, B]) bool {
	return s.vt < o.vt || s.vt == o.vt && s.since < o.since
}

// A fairness is the order of a pool with fair shares: start-time fair
// queuing between shares, with a job's run time as its cost. A freed
// worker takes the oldest runnable job of the share with the least vt. A
// job's run time is not known when it starts, so its share is charged its
// recent mean run time then (so that a share whose jobs run never looks
// cheaper than a newcomer) and the difference once the job ended and its
// run time is known. A share that had no job and gets one starts from the
// least vt of the runnable shares at the least (from now, the vt of the
// last share served, if none is runnable): it banks no credit for the time
// it was idle, and takes none from those that were not. The scheduler's
// lock guards it.
//
// The room a job's end frees goes to the shares with a blocked Submit in
// turn, weight Submits at a time (weighted round robin): that the pool
// admits a job does not make it run, and a share with jobs admitted but
// behind others in the fair order holds no worker. Admission by vt instead
// would favour the shares that have run least, and so starve a request's
// later Submits as new requests keep coming: it doubled the p99 of small
// requests in the bench program's tenants scenario.
type fairness[T, B any] struct {
	runnable heap[*share[T, B]]      // the shares with a runnable flow
	blocked  queue.List[share[T, B]] // the shares with a blocked Submit, in their turns
	tenants  map[string]*share[T, B] // the tenants' shares with a batch not finished
	now      float64                 // the vt of the share last charged for a job
	mean     int64                   // the recent mean run time (ns) of the pool's jobs: a new share's first estimate
}

func newFairness[T, B any](own *flow[T, B]) *fairness[T, B] {
	fq := &fairness[T, B]{
		runnable: heap[*share[T, B]]{less: (*share[T, B]).before, at: func(s *share[T, B]) *int { return &s.at }},
		tenants:  make(map[string]*share[T, B]),
	}
	own.share = newShare[T, B](1) // the pool's own jobs
	return fq
}

// join puts the flow of a new batch in a share: s, a share of its own, or
// with a tenant, the tenant's share, which s becomes if the tenant has
// none. The tenant's share takes s's weight, the latest batch's.
func (fq *fairness[T, B]) join(f *flow[T, B], s *share[T, B], tenant string) {
	if tenant != "" {
		if ts := fq.tenants[tenant]; ts != nil {
			ts.weight, s = s.weight, ts
		} else {
			s.tenant = tenant
			fq.tenants[tenant] = s
		}
		s.batches++
	}
	f.share = s
}

// leave takes a finished batch's flow, which holds no job, out of its
// share: a tenant is forgotten with its last batch.
func (fq *fairness[T, B]) leave(f *flow[T, B]) {
	if s := f.share; s.tenant != "" {
		if s.batches--; s.batches == 0 {
			delete(fq.tenants, s.tenant)
		}
	}
}

// first returns the flow whose job is dispatched next, or nil if none is
// runnable.
func (fq *fairness[T, B]) first() *flow[T, B] {
	if s := fq.runnable.first(); s != nil {
		return s.flows.first()
	}
	return nil
}

// fix puts flow f, whose jobs or running count changed, and its share
// where they belong.
func (fq *fairness[T, B]) fix(f *flow[T, B]) {
	s := f.share
	s.flows.fix(f)
	fq.runnable.fix(s, s.flows.len() > 0)
}

// fixShare puts s where it belongs once its vt changed.
func (fq *fairness[T, B]) fixShare(s *share[T, B]) {
	if s.at > 0 {
		fq.runnable.fix(s, true)
	}
}

// wake is called as share s gets a job, numbered seq, to queue, to hand
// to an idle worker, or to block on a full pool: if s had none, it becomes
// backlogged, behind the others.
func (fq *fairness[T, B]) wake(s *share[T, B], seq uint64) {
	if s.idle() {
		s.vt = max(s.vt, fq.floor())
		s.since = seq
		fq.fixShare(s)
	}
}

// floor returns the least vt of the runnable shares, or now if none is.
func (fq *fairness[T, B]) floor() float64 {
	if r := fq.runnable.first(); r != nil {
		return r.vt
	}
	return fq.now
}

// Reading the clock costs tens of nanoseconds, as much as a quick job's
// dispatch: a job whose share's jobs take timeAllFrom or more is timed,
// and of the quicker ones, one in timeOneIn, the others charged their
// share's mean alone. A share whose quick jobs turn slow has its mean
// corrected by the next timed one, at most timeOneIn jobs later.
const (
	timeAllFrom = int64(4 * time.Microsecond)
	timeOneIn   = 16
)

// charge charges share s for a job of its that starts, and returns what
// it added to s's vt, and whether the job is to be timed (see settle). The
// caller fixes the place of the flow the job came from, and so of s among
// the runnable shares.
func (fq *fairness[T, B]) charge(s *share[T, B]) (charged float64, timed bool) {
	fq.now = s.vt
	charged = perWeight(fq.estimate(s), s.weight)
	s.vt += charged
	s.running++
	if s.mean >= timeAllFrom || s.untimed == timeOneIn-1 || s.mean == 0 {
		s.untimed = 0
		return charged, true
	}
	s.untimed++
	return charged, false
}

// estimate returns the run time (ns) a job of s is expected to take: its
// share's recent mean, or the pool's for a share with none yet.
func (fq *fairness[T, B]) estimate(s *share[T, B]) int64 {
	if s.mean != 0 {
		return s.mean
	}
	return fq.mean
}

// settle corrects the charge of share s for a job that ended, and returns
// the job's run time: charged was added to s's vt as it started, and if it
// was timed, it ran for ran ns; if not, it is taken to have run for its
// share's mean. The correction counts the weight s has now: a tenant's
// weight that changed while the job ran applies to all of it.
func (fq *fairness[T, B]) settle(s *share[T, B], charged float64, ran int64, timed bool) int64 {
	s.running--
	if timed {
		s.vt += perWeight(ran, s.weight) - charged
		s.mean = ewma(s.mean, ran)
		fq.mean = ewma(fq.mean, ran)
	} else {
		ran = fq.estimate(s)
	}
	fq.fixShare(s)
	return ran
}

// refund takes back the charge of a job of share s that never started.
func (fq *fairness[T, B]) refund(s *share[T, B], charged float64) {
	s.running--
	s.vt -= charged
	fq.fixShare(s)
}

// perWeight divides the run time t (ns) by weight w. A float64 holds a
// share's vt however long the pool lives: it loses precision (16 ns after
// three years of run time per unit of weight), never wraps.
func perWeight(t, w int64) float64 { return float64(t) / float64(w) }

// ewma moves the running mean m an eighth of the way towards x, or to x if
// m is 0 (no job measured yet).
func ewma(m, x int64) int64 {
	if m == 0 {
		return x
	}
	return m + (x-m)/8
}

// block puts w, a Submit blocked on a full pool, in line: its share joins
// the blocked ones, last, if it was not among them.
func (fq *fairness[T, B]) block(w *queue.Waiter[task[T, B]], seq uint64) {
	s := w.Msg.f.share
	fq.wake(s, seq)
	if s.waiting.Len() == 0 {
		s.turns = s.weight
		fq.blocked.PushBack(&s.links)
	}
	s.waiting.PushBack(&w.Links)
}

// nextBlocked returns the blocked Submit that the room a job frees goes to
// next, or nil if there is none: the oldest of the share whose turn it is.
func (fq *fairness[T, B]) nextBlocked() *queue.Waiter[task[T, B]] {
	if s := fq.blocked.Front(); s != nil {
		return s.waiting.Front()
	}
	return nil
}

// admitted takes w, the Submit nextBlocked returned, out of its share's
// line: its share's turn ends after weight of them.
func (fq *fairness[T, B]) admitted(w *queue.Waiter[task[T, B]]) {
	s := w.Msg.f.share
	s.waiting.Remove(&w.Links)
	switch s.turns--; {
	case s.waiting.Len() == 0:
		fq.blocked.Remove(&s.links)
	case s.turns == 0:
		s.turns = s.weight
		fq.blocked.Remove(&s.links)
		fq.blocked.PushBack(&s.links)
	}
}

// unblock takes w, a Submit that gave up, out of its share's line.
func (fq *fairness[T, B]) unblock(w *queue.Waiter[task[T, B]]) {
	s := w.Msg.f.share
	s.waiting.Remove(&w.Links)
	if s.waiting.Len() == 0 {
		fq.blocked.Remove(&s.links)
	}
}

// extract takes the blocked Submits of flow f out of its share's line and
// returns them.
func (fq *fairness[T, B]) extract(f *flow[T, B]) queue.Chain[queue.Waiter[task[T, B]]] {
	s := f.share
	c := s.waiting.Extract(func(w *queue.Waiter[task[T, B]]) bool { return w.Msg.f == f })
	if s.waiting.Len() == 0 && s.links.In(&fq.blocked) {
		fq.blocked.Remove(&s.links)
	}
	return c
}

// detach takes every blocked Submit out of line, and returns them. It
// costs O(Submits blocked): the pool is closing.
func (fq *fairness[T, B]) detach() queue.Chain[queue.Waiter[task[T, B]]] {
	var all queue.Chain[queue.Waiter[task[T, B]]]
	for s := fq.blocked.Front(); s != nil; s = fq.blocked.Front() {
		c := s.waiting.TakeAll()
		all.Append(&c)
		fq.blocked.Remove(&s.links)
	}
	return all
}
