package keys

// A Table is an Index with a record of the caller's for each slot (a key's
// queue and counts), made when the slot is first handed out and kept when
// it is released, for the next key given that slot: a key costs an
// allocation only when the table grows. Like an Index, it is not safe for
// concurrent use.
type Table[T, R any] struct {
	index Index[T]
	recs  []*R // by slot
	fresh func(slot int) *R
}

// NewTable returns an empty Table over index, whose records fresh makes,
// each told its slot.
func NewTable[T, R any](index Index[T], fresh func(slot int) *R) *Table[T, R] {
	return &Table[T, R]{index: index, fresh: fresh}
}

// Get returns the record of job's key, giving the key a slot if it has
// none. It panics, taking nothing, as Index.Slot does.
func (t *Table[T, R]) Get(job T) *R {
	slot, _ := t.index.Slot(job)
	if slot == len(t.recs) { // never handed out before (Slot numbers slots from 0, in order)
		t.recs = append(t.recs, t.fresh(slot))
	}
	return t.recs[slot]
}

// Release frees slot and forgets its key; its record stays, for the next
// key given the slot.
func (t *Table[T, R]) Release(slot int) { t.index.Release(slot) }

// Each calls visit with the record of each key with a slot; visit may
// release it.
func (t *Table[T, R]) Each(visit func(*R)) {
	t.index.Each(func(slot int) { visit(t.recs[slot]) })
}

// Len reports the keys with a slot.
func (t *Table[T, R]) Len() int { return t.index.Len() }
