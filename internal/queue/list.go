package queue

// Links join an element of type E to a List: an element embeds a Links[E]
// for each list it can be in, and names itself to it once, with Init.
type Links[E any] struct {
	prev, next *Links[E]
	list       *List[E] // the list it is in, or nil (also in a Chain)
	elem       *E
}

// Init makes x the links of e. Call it once, before x is in any list.
func (x *Links[E]) Init(e *E) { x.elem = e }

// Listed reports whether x is in a List (a Chain does not count).
func (x *Links[E]) Listed() bool { return x.list != nil }

// In reports whether x is in l.
func (x *Links[E]) In(l *List[E]) bool { return x.list == l }

// A List is a doubly linked list of elements, linked through their Links:
// no allocation, O(1) to push, remove or find the first. The zero value is
// an empty list.
type List[E any] struct {
	first, last *Links[E]
	n           int
}

// Len reports the elements in l.
func (l *List[E]) Len() int { return l.n }

// Front returns the first element, or nil if l is empty.
func (l *List[E]) Front() *E {
	if l.first == nil {
		return nil
	}
	return l.first.elem
}

// PushBack puts x, which is in no list, last.
func (l *List[E]) PushBack(x *Links[E]) {
	x.prev, x.next, x.list = l.last, nil, l
	if l.last == nil {
		l.first = x
	} else {
		l.last.next = x
	}
	l.last = x
	l.n++
}

// Remove takes x, which is in l, out.
func (l *List[E]) Remove(x *Links[E]) {
	if x.prev == nil {
		l.first = x.next
	} else {
		x.prev.next = x.next
	}
	if x.next == nil {
		l.last = x.prev
	} else {
		x.next.prev = x.prev
	}
	x.prev, x.next, x.list = nil, nil, nil
	l.n--
}

// Each calls visit with each element, first to last. visit must not
// change l.
func (l *List[E]) Each(visit func(*E)) {
	for x := l.first; x != nil; x = x.next {
		visit(x.elem)
	}
}

// TakeAll takes every element out of l, and returns them as a Chain, in
// their order. It costs O(elements).
func (l *List[E]) TakeAll() Chain[E] {
	c := Chain[E]{first: l.first, last: l.last}
	for x := l.first; x != nil; x = x.next {
		x.prev, x.list = nil, nil
	}
	l.first, l.last, l.n = nil, nil, 0
	return c
}

// Extract takes the elements that match out of l, and returns them as a
// Chain, in their order.
func (l *List[E]) Extract(match func(*E) bool) Chain[E] {
	var c Chain[E]
	for x := l.first; x != nil; {
		next := x.next
		if match(x.elem) {
			l.Remove(x)
			c.Push(x)
		}
		x = next
	}
	return c
}

// A Chain is a singly linked FIFO of elements that are in no List: what a
// list's owner took out under its lock, to answer once it is released. The
// zero value is an empty chain.
type Chain[E any] struct{ first, last *Links[E] }

// Push puts x, which is in no list, last.
func (c *Chain[E]) Push(x *Links[E]) {
	x.prev, x.next, x.list = nil, nil, nil
	if c.last == nil {
		c.first = x
	} else {
		c.last.next = x
	}
	c.last = x
}

// Pop takes the first element out, or returns nil if there is none.
func (c *Chain[E]) Pop() *E {
	x := c.first
	if x == nil {
		return nil
	}
	if c.first = x.next; c.first == nil {
		c.last = nil
	}
	x.next = nil
	return x.elem
}

// Append puts the elements of o after c's, emptying o.
func (c *Chain[E]) Append(o *Chain[E]) {
	if o.first == nil {
		return
	}
	if c.last == nil {
		c.first = o.first
	} else {
		c.last.next = o.first
	}
	c.last = o.last
	o.first, o.last = nil, nil
}

// Len reports the elements in c, in O(elements).
func (c *Chain[E]) Len() int {
	n := 0
	for x := c.first; x != nil; x = x.next {
		n++
	}
	return n
}

// Empty reports whether c has no element.
func (c *Chain[E]) Empty() bool { return c.first == nil }
