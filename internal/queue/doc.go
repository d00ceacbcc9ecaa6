// Package queue holds the data structures under crew's mailboxes and its
// scheduler: a growable FIFO ring whose buffers are recycled process-wide
// (Ring, Slabs), an intrusive doubly linked list (List, Links), and the
// Waiter of a sender blocked until a queue has room. None is safe for
// concurrent use: its owner guards it with a lock of its own.
package queue
