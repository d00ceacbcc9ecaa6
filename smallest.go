package crew

import (
	"math/rand/v2"
	"sync/atomic"
)

// SmallestMailbox returns a Strategy that sends each message to the least
// loaded routee, Akka's smallest-mailbox routing with the fixes its users
// asked for. A routee's score is its queued messages, plus 1 while it is busy:
//
//   - an idle routee with an empty mailbox (score 0) wins at once;
//   - otherwise the lowest score wins; the scan starts at an offset that
//     moves with every message, so ties rotate instead of always going to
//     the first routee;
//   - stopped routees are skipped, and so are full bounded ones; if every
//     live routee is full, it falls back to round robin over them, so the
//     message meets that routee's overflow policy (its error, its drop, or
//     its backpressure);
//   - a routee whose depth is unknown (a custom Routee whose Len is
//     negative) ranks after every routee whose depth is known, instead of
//     winning with a score of 0 as in Akka.
//
// Selection reads three atomic words per *Ref routee, the two counters its
// mailbox already keeps (messages in and out; a Fair, Priority or Chan
// mailbox is asked for its Len instead) and its busy flag, so that neither
// Tell nor the actor writes anything per message for the router's sake. It
// allocates nothing and takes no lock but a Chan's read lock in its Len:
// O(n) for n routees, 5-8 ns each when none is idle (BenchmarkPick), and it
// stops at the first idle routee. For large pools, SmallestOfTwo costs O(1).
func SmallestMailbox() Strategy { return &smallest{} }

type smallest struct{ next atomic.Uint64 }

func (*smallest) firstIdle(next, _ int) int { return next }

func (s *smallest) pick(slots []slot) int {
	n := len(slots)
	if n == 0 {
		return -1
	}
	start := int((s.next.Add(1) - 1) % uint64(n))
	best, bestScore := -1, int(^uint(0)>>1)
	for i := range n {
		j := start + i
		if j >= n {
			j -= n
		}
		sc := slots[j].score()
		if sc >= bestScore {
			continue
		}
		// Only a routee that would win is checked for stopped or full.
		if slots[j].isStopped() || slots[j].isFull() {
			continue
		}
		best, bestScore = j, sc
		if sc == 0 {
			break // an idle routee with an empty mailbox: none can beat it
		}
	}
	if best < 0 {
		return nextLive(slots, start) // all full (or stopped): round robin
	}
	return best
}

// SmallestOfTwo returns a Strategy that samples two distinct routees at
// random and sends the message to the less loaded one, scored as in
// SmallestMailbox ("the power of two choices"). Its cost per message is
// constant, whatever the number of routees, and it keeps queues nearly as
// even as a full scan; prefer it to SmallestMailbox for pools of many dozens
// of routees. If neither sample can take the message (stopped or full), it
// falls back to a full SmallestMailbox scan.
func SmallestOfTwo() Strategy { return &smallestOfTwo{} }

type smallestOfTwo struct{ scan smallest }

func (*smallestOfTwo) firstIdle(_, n int) int { return rand.IntN(n) }

func (s *smallestOfTwo) pick(slots []slot) int {
	n := len(slots)
	if n <= 2 {
		return s.scan.pick(slots)
	}
	a := rand.IntN(n)
	b := a + 1 + rand.IntN(n-1)
	if b >= n {
		b -= n
	}
	sa, sb := slots[a].score(), slots[b].score()
	if sb < sa {
		a, b, sa = b, a, sb
	}
	if !slots[a].isStopped() && !slots[a].isFull() {
		return a
	}
	if !slots[b].isStopped() && !slots[b].isFull() {
		return b
	}
	return s.scan.pick(slots)
}
