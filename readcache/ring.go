package readcache

// links are an entry's place in one ring.
type links struct{ prev, next *entry }

// ring is an intrusive doubly linked list of entries, through the links
// at of returns: the cache's and each site's LRU order.
type ring struct {
	head *entry // most recently used; head.prev is the least
	n    int
	at   func(*entry) *links
}

func (r *ring) init(at func(*entry) *links) { r.at = at }

func (r *ring) pushFront(e *entry) {
	l := r.at(e)
	if r.head == nil {
		l.prev, l.next = e, e
	} else {
		last := r.at(r.head).prev
		l.prev, l.next = last, r.head
		r.at(last).next = e
		r.at(r.head).prev = e
	}
	r.head = e
	r.n++
}

func (r *ring) unlink(e *entry) {
	l := r.at(e)
	if l.next == nil {
		return // not in the ring
	}
	if l.next == e {
		r.head = nil
	} else {
		r.at(l.prev).next = l.next
		r.at(l.next).prev = l.prev
		if r.head == e {
			r.head = l.next
		}
	}
	l.prev, l.next = nil, nil
	r.n--
}

func (r *ring) toFront(e *entry) {
	if r.head == e {
		return
	}
	r.unlink(e)
	r.pushFront(e)
}

// back is the least recently used entry, or nil.
func (r *ring) back() *entry {
	if r.head == nil {
		return nil
	}
	return r.at(r.head).prev
}
