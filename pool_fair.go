package crew

import (
	"strconv"
	"time"
)

// WithFairShare makes a long-lived pool (NewPool, NewGroup, WithContext)
// share its workers fairly between its batches, by the time they run,
// rather than first come, first served. Each batch is a share, the
// batches made WithTenant(key) form one share per key, and the pool's own
// jobs form one share. A freed worker takes the oldest job of the share
// that has received the least worker time per unit of weight (WithWeight)
// while it was backlogged. While the pool is full, the room a job's end
// frees goes to the shares with a blocked Submit in turn, w Submits per
// turn for a share of weight w, so that a batch whose Submits block from
// many goroutines cannot hold the others out. So a batch that queues
// 2,000 jobs gets its share of the workers, not all of them, and a small
// batch submitted after it overtakes it. A job's cost is its run
// time: its share is charged its recent mean as the job starts, then the
// job's measured run time once it ends, so a share whose jobs are running
// never looks cheaper than a newcomer, and a share of slow jobs gets fewer
// jobs, not less time. A share that was idle banks no credit: it
// re-enters at the pool's current virtual time. Within a share, jobs are
// dispatched in submission order (and blocked Submits served in arrival
// order); WithLimit, first-error cancellation, skips, dead letters, Wait
// and Stats keep their meaning. The pool reads the clock as a job starts
// and ends, for every job of a share whose jobs take 4 µs or more, and for
// one in 16 of the quicker ones, which are charged their share's mean run
// time (BatchStats.RunTime reports a batch's service).
//
// A pool with WithKey, WithConsistentHash or WithMailbox takes no batches:
// its constructor panics if given WithFairShare too.
func WithFairShare() Option {
	return func(o *options) { o.set |= optFairShare; o.fairShare = true }
}

// WithTenant puts a batch (Pool.NewBatch, MapBatch) of a pool WithFairShare
// in the share of tenant key: the batches of one tenant share its part of
// the workers, as one. A tenant's share lasts while one of its batches has
// not been waited for, so memory grows with the tenants active at once, not
// with every tenant ever seen. Without it, or with an empty key, a batch
// is a share of its own.
func WithTenant(key string) Option {
	return func(o *options) { o.set |= optTenant; o.tenant = key }
}

// WithWeight sets the weight of a batch's share, in a pool WithFairShare:
// among backlogged shares, each receives worker time in proportion to its
// weight (1 by default). For a batch made WithTenant, it sets its tenant's
// share's weight: the weight of the tenant's latest batch applies, 1 if
// it was given none. It panics if w is less than 1.
func WithWeight(w int) Option {
	if w < 1 {
		panic("crew: WithWeight: w must be at least 1, got " + strconv.Itoa(w))
	}
	return func(o *options) { o.set |= optWeight; o.weight = w }
}

// A share is a set of flows that a pool WithFairShare serves as one: the
// pool's own jobs, a batch's, or the batches of one tenant (WithTenant).
// Its place in the fair order is vt, the worker time it received per unit
// of weight while it was backlogged. The dispatcher's lock guards it.
type share[T any] struct {
	flows   order[T]          // its runnable flows, by their oldest job
	waiting waitList[task[T]] // its Submits blocked on a full pool, oldest first
	vt      float64           // its virtual time: run time (ns) charged per unit of weight
	since   uint64            // the number of the moment it last became backlogged: breaks ties of vt
	weight  int64             // WithWeight
	mean    int64             // its jobs' recent mean run time (ns): what a job is charged as it starts
	queued  int               // its jobs waiting in its flows
	running int               // its jobs charged and not settled: dispatched, not ended
	untimed int               // its jobs charged their estimate alone since its last timed one (see charge)
	at      int               // 1 + its index in fairness.runnable, or 0
	turns   int64             // admissions left in its turn among the blocked shares
	prev    *share[T]         // in fairness.blocked, while it has a blocked Submit
	next    *share[T]
	tenant  string // its key in fairness.tenants, or "" for a batch's share of its own
	batches int    // a tenant's batches not waited for
}

// idle reports whether the share has no job: none running, none waiting
// in its flows or in a blocked Submit.
func (s *share[T]) idle() bool { return s.running == 0 && s.queued == 0 && s.waiting.first == nil }

// before orders shares: the one that received the least service per
// weight first, then the one backlogged first.
func (s *share[T]) before(o *share[T]) bool {
	return s.vt < o.vt || s.vt == o.vt && s.since < o.since
}

// A fairness is the order of a pool WithFairShare: start-time fair queuing
// between shares, with a job's run time as its cost. A freed worker takes
// the oldest runnable job of the share with the least vt. A job's run time
// is not known when it starts, so its share is charged its recent mean run
// time then (so that a share whose jobs run never looks cheaper than a
// newcomer) and the difference once the job ended and its run time is
// known. A share that had no job and gets one starts from the least vt of
// the runnable shares at the least (from now, the vt of the last share
// served, if none is runnable): it banks no credit for the time it was
// idle, and takes none from those that were not. The dispatcher's lock
// guards it.
//
// The room a job's end frees goes to the shares with a blocked Submit in
// turn, weight Submits at a time (weighted round robin): that the pool
// admits a job does not make it run, and a share with jobs admitted but
// behind others in the fair order holds no worker. Admission by vt instead
// would favour the shares that have run least, and so starve a request's
// later Submits as new requests keep coming: it doubled the p99 of small
// requests in the bench program's tenants scenario.
type fairness[T any] struct {
	runnable heapOf[*share[T]]    // the shares with a runnable flow
	blocked  shareRing[T]         // the shares with a blocked Submit, in their turns
	tenants  map[string]*share[T] // the tenants' shares with a batch not waited for
	now      float64              // the vt of the share last charged for a job
	mean     int64                // the recent mean run time (ns) of the pool's jobs: a new share's first estimate
}

func newFairness[T any](own *flow[T]) *fairness[T] {
	fq := &fairness[T]{
		runnable: heapOf[*share[T]]{less: (*share[T]).before, at: func(s *share[T]) *int { return &s.at }},
		tenants:  make(map[string]*share[T]),
	}
	own.share = newShare[T](1) // the pool's own jobs
	return fq
}

func newShare[T any](weight int) *share[T] {
	return &share[T]{flows: newOrder[T](), weight: int64(weight)}
}

// join puts the flow of a new batch in a share: s, a share of its own, or
// with a tenant, the tenant's share, which s becomes if the tenant has
// none. The share takes weight.
func (fq *fairness[T]) join(f *flow[T], s *share[T], tenant string, weight int) {
	if tenant != "" {
		if ts := fq.tenants[tenant]; ts != nil {
			s = ts
		} else {
			s.tenant = tenant
			fq.tenants[tenant] = s
		}
		s.batches++
	}
	s.weight = int64(weight)
	f.share = s
}

// leave takes a waited-for batch's flow, which holds no job, out of its
// share: a tenant is forgotten with its last batch.
func (fq *fairness[T]) leave(f *flow[T]) {
	if s := f.share; s.tenant != "" {
		if s.batches--; s.batches == 0 {
			delete(fq.tenants, s.tenant)
		}
	}
}

// first returns the flow whose job is dispatched next, or nil if none is
// runnable.
func (fq *fairness[T]) first() *flow[T] {
	if s := fq.runnable.first(); s != nil {
		return s.flows.first()
	}
	return nil
}

// fix puts flow f, whose jobs or running count changed, and its share
// where they belong.
func (fq *fairness[T]) fix(f *flow[T]) {
	s := f.share
	s.flows.fix(f)
	fq.runnable.fix(s, s.flows.len() > 0)
}

// fixShare puts s where it belongs once its vt changed.
func (fq *fairness[T]) fixShare(s *share[T]) {
	if s.at > 0 {
		fq.runnable.fix(s, true)
	}
}

// wake is called as share s gets a job, numbered seq, to queue, to hand
// to an idle worker, or to block on a full pool: if s had none, it becomes
// backlogged, behind the others.
func (fq *fairness[T]) wake(s *share[T], seq uint64) {
	if s.idle() {
		s.vt = max(s.vt, fq.floor())
		s.since = seq
		fq.fixShare(s)
	}
}

// floor returns the least vt of the runnable shares, or now if none is.
func (fq *fairness[T]) floor() float64 {
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
func (fq *fairness[T]) charge(s *share[T]) (charged float64, timed bool) {
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
func (fq *fairness[T]) estimate(s *share[T]) int64 {
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
func (fq *fairness[T]) settle(s *share[T], charged float64, ran int64, timed bool) int64 {
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
func (fq *fairness[T]) refund(s *share[T], charged float64) {
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

// block queues w, a Submit blocked on a full pool: its share joins the
// blocked ones, last, if it was not among them.
func (fq *fairness[T]) block(w *waiter[task[T]], seq uint64) {
	s := w.msg.f.share
	fq.wake(s, seq)
	if s.waiting.first == nil {
		s.turns = s.weight
		fq.blocked.push(s)
	}
	s.waiting.push(w)
}

// nextBlocked returns the blocked Submit that the room a job frees goes to
// next, or nil if there is none: the oldest of the share whose turn it is.
func (fq *fairness[T]) nextBlocked() *waiter[task[T]] {
	if s := fq.blocked.first; s != nil {
		return s.waiting.first
	}
	return nil
}

// admitted takes w, the Submit nextBlocked returned, off its share's
// blocked Submits: its share's turn ends after weight of them.
func (fq *fairness[T]) admitted(w *waiter[task[T]]) {
	s := w.msg.f.share
	s.waiting.remove(w)
	switch s.turns--; {
	case s.waiting.first == nil:
		fq.blocked.remove(s)
	case s.turns == 0:
		s.turns = s.weight
		fq.blocked.remove(s)
		fq.blocked.push(s)
	}
}

// unblock takes w, a Submit that gave up, off its share's blocked Submits.
func (fq *fairness[T]) unblock(w *waiter[task[T]]) {
	s := w.msg.f.share
	s.waiting.remove(w)
	if s.waiting.first == nil {
		fq.blocked.remove(s)
	}
}

// extract takes the blocked Submits of flow f off its share's and returns
// them.
func (fq *fairness[T]) extract(f *flow[T]) *waiter[task[T]] {
	s := f.share
	list := s.waiting.extract(func(w *waiter[task[T]]) bool { return w.msg.f == f })
	if s.waiting.first == nil && fq.blocked.has(s) {
		fq.blocked.remove(s)
	}
	return list
}

// detach takes every blocked Submit off, and returns them linked in a
// list. It costs O(Submits blocked): the pool is closing.
func (fq *fairness[T]) detach() *waiter[task[T]] {
	var all waitList[task[T]]
	for s := fq.blocked.first; s != nil; s = fq.blocked.first {
		for w := s.waiting.first; w != nil; w = s.waiting.first {
			s.waiting.remove(w)
			all.push(w)
		}
		fq.blocked.remove(s)
	}
	return all.detach()
}

// A shareRing is a FIFO of shares, linked through them.
type shareRing[T any] struct{ first, last *share[T] }

func (r *shareRing[T]) push(s *share[T]) {
	s.prev, s.next = r.last, nil
	if r.last == nil {
		r.first = s
	} else {
		r.last.next = s
	}
	r.last = s
}

// has reports whether s is in the ring.
func (r *shareRing[T]) has(s *share[T]) bool { return s.prev != nil || r.first == s }

// remove takes s, which is in the ring, out.
func (r *shareRing[T]) remove(s *share[T]) {
	if s.prev == nil {
		r.first = s.next
	} else {
		s.prev.next = s.next
	}
	if s.next == nil {
		r.last = s.prev
	} else {
		s.next.prev = s.prev
	}
	s.prev, s.next = nil, nil
}
