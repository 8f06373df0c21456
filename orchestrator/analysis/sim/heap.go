package sim

// heapItems is the storage half of container/heap's Interface, shared by
// the event and task queues; each adds its own Less. The run itself goes
// through the queues' own methods (push, pop, add, head), never these.
type heapItems[T any] struct {
	items []T
}

func (h *heapItems[T]) Len() int      { return len(h.items) }
func (h *heapItems[T]) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }

// Push is heap.Interface's.
func (h *heapItems[T]) Push(x any) { h.items = append(h.items, x.(T)) }

// Pop is heap.Interface's.
func (h *heapItems[T]) Pop() any {
	n := len(h.items) - 1
	e := h.items[n]
	h.items = h.items[:n]
	return e
}
