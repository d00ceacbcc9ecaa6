package sched

// Credit for quiet shares, with a window (see fairness and place): what a
// share is owed, the credit it holds, the bank new shares draw on, and
// the tenants the pool remembers between their batches.

// restingTenants is how many tenants with no batch a pool with a window
// remembers at most (see leave).
const restingTenants = 1024

// forget forgets the tenants that rested longest while more than
// restingTenants rest.
func (fq *fairness[T, B]) forget() {
	for s := fq.resting.Front(); s != nil && fq.resting.Len() > restingTenants; s = fq.resting.Front() {
		fq.resting.Remove(&s.links)
		delete(fq.tenants, s.tenant)
	}
}

// place puts share s, which gets a job and has none waiting, in the fair
// order, with a window. The pool's virtual clock is the greatest vt a
// share was charged from: the run time per unit of weight that a share
// backlogged all along would have received. A share is owed the run time
// it left unused since its vt last caught up with the clock (a new share,
// since the pool began), up to the window per unit of its weight; it is
// credited what it is owed beyond the credit it holds, and its vt moves up
// to the clock. A share holding credit runs its jobs ahead of the shares
// that hold none, the one backlogged first first, and spends its credit on
// them, by their estimated run time, until it has used it, and then
// resumes at the clock: so a request that used less than its part lately
// runs about as soon as alone, beside a share with a deep backlog. While
// a share that holds no credit has a job waiting, the credit pays for the
// job's run time, which costs the share's vt nothing; while none has, the
// job took nothing from one: it costs the share's vt, as any job, and the
// credit goes to the bank. A share that runs out of jobs gives the credit
// it holds to the bank (see idled).
//
// The bounds. The shares hold at most the window times the workers of
// credit at once (lent). A share the pool knew is credited from what it
// left unused, which a share backlogged all along received in its place:
// over any span, such a share runs at most its weight's part of the run
// time plus the credit it held at the start. A new share is credited from
// the bank too, which holds at most the window times the workers and
// fills as the clock moves by what a share of weight 1 receives, and by
// the credit given back: new shares together run at most what one more
// share of weight 1 would, plus the bank. So a share backlogged all along
// keeps, over any span, at least its weight's fraction of the run time the
// pool gave in it (counting in the fraction's whole the weights of the
// shares with jobs in the span, and 1), less twice the window times the
// workers and about a job per share.
func (fq *fairness[T, B]) place(s *share[T, B]) {
	owed := fq.owed(s)
	if owed > s.credit {
		take := max(0, min(owed-s.credit, fq.bankCap-fq.lent))
		if !s.known {
			take = min(take, fq.bank)
			fq.bank -= take
		}
		fq.setCredit(s, s.credit+take)
	}
	s.known, s.vt = true, max(s.vt, fq.clock)
}

// owed returns the credit share s, which has no job waiting, is owed: the
// run time it left unused since its vt last caught up with the clock (for
// a new share, since the pool began), up to the window per unit of its
// weight.
func (fq *fairness[T, B]) owed(s *share[T, B]) float64 {
	return min(fq.window*float64(s.weight), max(0, (fq.clock-s.vt)*float64(s.weight)))
}

// idled is called as share s may have run out of jobs: a share with no job
// holds no credit, which it gives back (to the bank, for new shares).
func (fq *fairness[T, B]) idled(s *share[T, B]) {
	if s.credit > 0 && s.idle() {
		fq.refund(s, s.credit)
	}
}

// refund takes c of the credit share s holds back, and gives it to the
// bank.
func (fq *fairness[T, B]) refund(s *share[T, B], c float64) {
	fq.setCredit(s, s.credit-c)
	fq.deposit(c)
}

// deposit gives unused credit back to the bank.
func (fq *fairness[T, B]) deposit(credit float64) {
	fq.bank = min(fq.bankCap, fq.bank+credit)
}

// setCredit sets the credit share s holds to c, and counts the credit
// lent, the shares holding credit and the runnable ones holding none.
func (fq *fairness[T, B]) setCredit(s *share[T, B], c float64) {
	fq.lent += c - s.credit
	if had, has := s.credit > 0, c > 0; had != has {
		d := 1
		if had {
			d = -1
		}
		fq.holders += d
		if s.at > 0 {
			fq.plain -= d
		}
	}
	s.credit = c
}
