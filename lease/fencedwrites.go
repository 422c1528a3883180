package lease

// RecordFencedWrite counts one write through a fencing guard kept outside this package (the
// SQL guard in package sqlfence, or a store of your own) in lock_fenced_writes_total, as
// applied or rejected, under the namespace's lock_namespace label. FencedSet counts its own
// writes. It does nothing when the Client has no Registerer (or n is nil).
func (n *Namespace) RecordFencedWrite(applied bool) {
	if n != nil {
		n.m.fencedWrite(applied)
	}
}
