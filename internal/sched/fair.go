package sched

import (
	"math"
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
	credit  float64                              // the run time (ns) it was credited and has not used yet (see place)
	known   bool                                 // it was placed once: its vt tells the run time it left unused since
	since   uint64                               // the number of the moment it last became backlogged: orders the credited shares, breaks ties of vt
	weight  int64                                // WithWeight
	mean    int64                                // its jobs' recent mean run time (ns): what a job is charged as it starts
	queued  int                                  // its jobs waiting in its flows
	running int                                  // its jobs charged and not settled: dispatched, not ended
	untimed int                                  // its jobs charged their estimate alone since its last timed one (see charge)
	at      int                                  // 1 + its index in fairness.runnable, or 0
	turns   int64                                // admissions left in its turn among the blocked shares
	links   queue.Links[share[T, B]]             // in fairness.blocked or fairness.ahead, while it has a blocked Submit; in fairness.resting, while it rests
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

// before orders shares: those holding credit first, the one backlogged
// first first; then the one that received the least service per weight,
// then the one backlogged first.
func (s *share[T, B]) before(o *share[T, B]) bool {
	if sc, oc := s.credit > 0, o.credit > 0; sc || oc {
		return sc && (!oc || s.since < o.since)
	}
	return s.vt < o.vt || s.vt == o.vt && s.since < o.since
}

// A cost is what a job was charged as it started: vt added to its share's
// virtual time, and credit taken from its share's credit (ns). A float64
// holds a share's vt however long the pool lives: it loses precision (16
// ns after three years of run time per unit of weight), never wraps.
type cost struct {
	vt     float64
	credit float64
	free   bool // the credit paid for the run time it covers: the job ran ahead of a share that holds none
}

// A fairness is the order of a pool with fair shares: start-time fair
// queuing between shares, with a job's run time as its cost. A freed
// worker takes the oldest runnable job of the share with the least vt. A
// job's run time is not known when it starts, so its share is charged its
// recent mean run time then (so that a share whose jobs run never looks
// cheaper than a newcomer) and the difference once the job ended and its
// run time is known. The scheduler's lock guards it.
//
// A share that gets a job while it has none waiting is placed by place:
// with a window, a share that used less than its part of the workers
// lately is credited the run time it left unused, within bounds, and its
// jobs go ahead of the others' until it has used it (see place); with
// none, it starts from the least vt of the runnable shares at the least
// (from now, the vt of the last share served, if none is runnable): it
// banks no credit for the time it was idle, and takes none from those
// that were not.
//
// The room a job's end frees goes to the shares with a blocked Submit in
// turn, weight Submits at a time (weighted round robin): that the pool
// admits a job does not make it run, and a share with jobs admitted but
// behind others in the fair order holds no worker. A share holding credit
// for more than its admitted jobs' estimated run time takes its turns
// ahead of the others (ahead), until it has admitted that much. Admission
// by vt instead would favour the shares that have run least, and so starve
// a request's later Submits as new requests keep coming: it doubled the
// p99 of small requests in the bench program's tenants scenario. Credit is
// bounded in total, and so are the turns it buys.
type fairness[T, B any] struct {
	runnable heap[*share[T, B]]      // the shares with a runnable flow
	blocked  queue.List[share[T, B]] // the shares with a blocked Submit, in their turns
	ahead    queue.List[share[T, B]] // the same, for light shares (see light): their turns come first
	workers  int                     // the pool's workers: a share holding fewer jobs is light
	most     int                     // the most jobs the pool holds: its bound and a job per worker (see Scheduler.fairFull), or 0 for no bound
	tenants  map[string]*share[T, B] // the tenants' shares with a batch not finished, or resting
	resting  queue.List[share[T, B]] // the tenants' shares with no batch that the pool remembers, oldest first (see leave)
	plain    int                     // the runnable shares that hold no credit
	holders  int                     // the shares that hold credit
	now      float64                 // the vt of the share last charged for a job
	mean     int64                   // the recent mean run time (ns) of the pool's jobs: a new share's first estimate

	// With a window (see place).
	window  float64 // the most a share is credited, in run time (ns) per unit of weight; 0: no credit
	clock   float64 // the pool's virtual clock: the greatest vt a share was charged from
	lent    float64 // the credit (ns) the shares hold
	bank    float64 // the credit (ns) that new shares may be given now
	bankCap float64 // the most credit the shares hold at once, and the bank holds: window × workers
}

func newFairness[T, B any](own *flow[T, B], window int64, workers, limit int) *fairness[T, B] {
	fq := &fairness[T, B]{
		runnable: heap[*share[T, B]]{less: (*share[T, B]).before, at: func(s *share[T, B]) *int { return &s.at }},
		tenants:  make(map[string]*share[T, B]),
		window:   float64(window),
	}
	fq.resize(workers, limit)
	fq.bank = fq.bankCap
	own.share = newShare[T, B](1) // the pool's own jobs
	return fq
}

// resize sets the cap on credit and the room beside the bound for a pool
// of n workers and the bound limit (0 for none).
func (fq *fairness[T, B]) resize(n, limit int) {
	fq.workers = n
	fq.most = 0
	if limit > 0 {
		fq.most = limit + min(n, math.MaxInt-limit)
	}
	fq.bankCap = fq.window * float64(n)
	fq.bank = min(fq.bank, fq.bankCap)
	var moved []*share[T, B] // the blocked shares that a new count of workers put in the other line
	fq.eachBlocked(func(s *share[T, B]) {
		if fq.lineOf(s) != fq.line(s) {
			moved = append(moved, s)
		}
	})
	for _, s := range moved {
		fq.requeue(s, fq.lineOf(s))
	}
}

// join puts the flow of a new batch in a share: s, a share of its own, or
// with a tenant, the tenant's share, which s becomes if the tenant has
// none. The tenant's share takes s's weight, the latest batch's.
func (fq *fairness[T, B]) join(f *flow[T, B], s *share[T, B], tenant string) {
	if tenant != "" {
		if ts := fq.tenants[tenant]; ts != nil {
			if ts.batches == 0 { // resting: it wakes
				fq.resting.Remove(&ts.links)
			}
			ts.weight, s = s.weight, ts
			if most := fq.window * float64(s.weight); s.credit > most {
				fq.refund(s, s.credit-most) // a lighter weight holds less
			}
		} else {
			s.tenant = tenant
			fq.tenants[tenant] = s
		}
		s.batches++
	}
	f.share = s
}

// leave takes a finished batch's flow, which holds no job, out of its
// share. A batch's share of its own is forgotten. A tenant's share is
// forgotten with its last batch too, but with a window it rests first:
// the pool remembers the restingTenants tenants that rested last, so
// that a tenant that sends requests back to back is not taken for a new
// one, and one that was quiet is credited from its own unused run time
// rather than from the bank. A share with no job holds no credit (see
// idled).
func (fq *fairness[T, B]) leave(f *flow[T, B]) {
	s := f.share
	fq.idled(s)
	if s.tenant != "" {
		if s.batches--; s.batches > 0 {
			return
		}
		if fq.window > 0 {
			fq.resting.PushBack(&s.links)
			fq.forget()
			return
		}
		delete(fq.tenants, s.tenant)
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
	was, on := s.at > 0, s.flows.len() > 0
	fq.runnable.fix(s, on)
	if was != on && s.credit == 0 {
		if on {
			fq.plain++
		} else {
			fq.plain--
		}
	}
	if !on {
		fq.idled(s) // its last job may have been skipped or lost
	}
}

// fixShare puts s where it belongs once its vt changed.
func (fq *fairness[T, B]) fixShare(s *share[T, B]) {
	if s.at > 0 {
		fq.runnable.fix(s, true)
	}
}

// wake is called as share s gets a job, numbered seq, to queue, to hand
// to an idle worker, or to block on a full pool. If s had no job (none
// running either), it becomes backlogged, behind the others. Without a
// window, it starts from the floor; with one, place puts s where its
// recent use of the workers says whenever it had no job waiting.
func (fq *fairness[T, B]) wake(s *share[T, B], seq uint64) {
	if fq.window > 0 {
		if s.queued > 0 || s.waiting.Len() > 0 {
			return
		}
		if s.running == 0 {
			s.since = seq
		}
		fq.place(s)
		fq.fixShare(s)
		return
	}
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
// it charged, and whether the job is to be timed (see settle): its
// estimated run time, from s's credit as far as it goes, the rest added to
// s's vt. The caller fixes the place of the flow the job came from, and so
// of s among the runnable shares.
func (fq *fairness[T, B]) charge(s *share[T, B]) (c cost, timed bool) {
	fq.now = s.vt
	if s.vt > fq.clock {
		// The clock moves: the bank fills by what a share of weight 1
		// backlogged all along received.
		fq.deposit(s.vt - fq.clock)
		fq.clock = s.vt
	}
	est := float64(fq.estimate(s))
	paid := 0.0 // the run time the credit pays for
	if s.credit > 0 {
		c.credit = min(s.credit, est)
		if c.free = fq.plain > 0; c.free {
			paid = c.credit
		} else {
			// Ahead of no share that holds no credit, the job takes
			// nothing from one: it costs s its vt, as any job, and the
			// bank gets the credit back. s spends it all the same, so
			// that it holds credit for a while only.
			fq.deposit(c.credit)
		}
		if fq.setCredit(s, s.credit-c.credit); s.credit == 0 {
			s.vt = max(s.vt, fq.clock) // used up: s resumes at the clock
		}
	}
	c.vt = (est - paid) / float64(s.weight)
	s.vt += c.vt
	s.running++
	if s.mean >= timeAllFrom || s.untimed == timeOneIn-1 || s.mean == 0 {
		s.untimed = 0
		return c, true
	}
	s.untimed++
	return c, false
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
// the job's run time: c is what it was charged as it started, and if it
// was timed, it ran for ran ns; if not, it is taken to have run for its
// share's mean. What it ran beyond the credit it took is charged to s's
// vt; credit it took and did not use is spent all the same. The
// correction counts the weight s has now: a tenant's weight that changed
// while the job ran applies to all of it.
func (fq *fairness[T, B]) settle(s *share[T, B], c cost, ran int64, timed bool) int64 {
	s.running--
	if timed {
		paid := 0.0
		if c.free {
			paid = c.credit
		}
		s.vt += max(0, float64(ran)-paid)/float64(s.weight) - c.vt
		s.mean = ewma(s.mean, ran)
		fq.mean = ewma(fq.mean, ran)
	} else {
		ran = fq.estimate(s)
	}
	fq.idled(s)
	fq.fixShare(s)
	return ran
}

// ewma moves the running mean m an eighth of the way towards x, or to x if
// m is 0 (no job measured yet).
func ewma(m, x int64) int64 {
	if m == 0 {
		return x
	}
	return m + (x-m)/8
}
