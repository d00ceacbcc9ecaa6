package crew

import "math/bits"

// The idle workers: a bit per worker, set while the worker is parked (or
// about to be) with nothing to run, and the choice among them that a pool's
// strategy makes. The dispatcher's lock guards them.

// up reports whether worker i takes jobs. d.mu is held.
func (d *dispatcher[T]) up(i int) bool { return !d.workers[i].dead }

func (d *dispatcher[T]) isIdle(i int) bool { return d.idle[i/64]&(1<<(i%64)) != 0 }

// setIdle marks worker i idle. A worker woken with nothing to take (by
// Resize) may mark itself idle twice: the second time changes nothing.
func (d *dispatcher[T]) setIdle(i int) {
	if !d.isIdle(i) {
		d.idle[i/64] |= 1 << (i % 64)
		d.nidle++
	}
}

func (d *dispatcher[T]) unidle(i int) {
	d.idle[i/64] &^= 1 << (i % 64)
	d.nidle--
}

// takeIdle takes the idle worker the strategy picks: the first idle one
// from where it says to start, wrapping. d.nidle > 0.
func (d *dispatcher[T]) takeIdle() *worker[T] {
	n := len(d.workers)
	start := d.strategy.firstIdle(d.cursor, n) % n
	i := -1
	if b := d.idle[start/64] & (^uint64(0) << (start % 64)); b != 0 {
		i = start/64*64 + bits.TrailingZeros64(b)
	} else {
		for k := 1; k <= len(d.idle); k++ { // the last turn rereads start's word
			word := (start/64 + k) % len(d.idle)
			if b := d.idle[word]; b != 0 {
				i = word*64 + bits.TrailingZeros64(b)
				break
			}
		}
	}
	d.unidle(i)
	if d.cursor = i + 1; d.cursor == n {
		d.cursor = 0
	}
	return d.workers[i]
}
