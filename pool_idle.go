package crew

import "math/bits"

// An idleSet holds the workers waiting for a job: a bit per worker, set
// while the worker is parked (or about to be) with nothing to run. The
// dispatcher's lock guards it.
type idleSet struct {
	bits     []uint64
	n        int      // workers in the set
	cursor   int      // the worker after the one last taken from the set
	strategy Strategy // picks the idle worker that gets a job
}

func (s *idleSet) has(i int) bool { return s.bits[i/64]&(1<<(i%64)) != 0 }

func (s *idleSet) add(i int) {
	s.bits[i/64] |= 1 << (i % 64)
	s.n++
}

func (s *idleSet) remove(i int) {
	s.bits[i/64] &^= 1 << (i % 64)
	s.n--
}

// take removes and returns the idle worker that the strategy picks among n
// workers: the first idle one from where it says to start, wrapping. It
// costs O(n/64) at most. s.n > 0.
func (s *idleSet) take(n int) int {
	start := s.strategy.firstIdle(s.cursor, n) % n
	i := -1
	if b := s.bits[start/64] & (^uint64(0) << (start % 64)); b != 0 {
		i = start/64*64 + bits.TrailingZeros64(b)
	} else {
		for k := 1; k <= len(s.bits); k++ { // the last turn rereads start's word
			word := (start/64 + k) % len(s.bits)
			if b := s.bits[word]; b != 0 {
				i = word*64 + bits.TrailingZeros64(b)
				break
			}
		}
	}
	s.remove(i)
	if s.cursor = i + 1; s.cursor == n {
		s.cursor = 0
	}
	return i
}
