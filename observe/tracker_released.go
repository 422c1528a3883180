package observe

import (
	"hash/maphash"
	"time"
)

// releasedLocks remembers, for releaseLinger, which servers each recently released lock had
// parts on, so that a late release reply from a server that never held a part (the minority a
// Redlock's acquire missed, answering after the quorum's replies ended the hold) is not counted
// as a release of its own (see released). It lives outside tracker.entries so that a released
// lock's entry is dropped and recycled at once: peer libraries write a new value every cycle,
// and keeping each released entry in the map for a second meant thousands of entries inserted,
// swept and recycled per second, the largest share of the hook's cost (docs/performance.md).
//
// It is a fixed table of two-slot buckets indexed by a hash of the lock: recording costs a hash
// and one bucket, never an allocation or a sweep. A record pushed out by two newer releases in
// its bucket within the second is forgotten early; its late minority reply is then counted as
// a release, the same answer as once the second has passed. Only an Observer with several
// hooks records: with one, every reply comes from the server that held the lock.
type releasedLocks struct {
	slots []releasedSlot // releasedSlots long once the first record is made; nil before
	seed  maphash.Seed
}

// releasedSlots is the table's size: 4096 slots of 40 bytes (160 KiB per Observer with several
// hooks). At 10,000 releases per second a record outlives the few milliseconds a late reply
// takes with near certainty.
const releasedSlots = 4096

type releasedSlot struct {
	ns      *namespace
	token   uint64
	name    uint64 // seeded hash of the lock's name
	servers uint64 // server bits of the parts the lock had (serverBit)
	ended   int64  // UnixNano of the release that ended the hold; 0: empty slot
}

// key is the lock's name hash and the index of its bucket's first slot.
func (r *releasedLocks) key(id lockID) (name uint64, at int) {
	name = maphash.String(r.seed, id.name)
	h := name ^ id.token*0x9e3779b97f4a7c15
	return name, int(h>>32) & (releasedSlots - 1) &^ 1
}

// record remembers that the lock's hold on servers ended at end, replacing the lock's older
// record or the older of its bucket's two slots.
func (r *releasedLocks) record(id lockID, servers uint64, end time.Time) {
	if r.slots == nil {
		r.slots = make([]releasedSlot, releasedSlots)
		r.seed = maphash.MakeSeed()
	}
	name, at := r.key(id)
	b := r.slots[at : at+2]
	i := 0
	switch {
	case b[0].is(id, name):
	case b[1].is(id, name) || b[1].ended < b[0].ended:
		i = 1
	}
	b[i] = releasedSlot{ns: id.ns, token: id.token, name: name, servers: servers, ended: end.UnixNano()}
}

// forget drops the lock's record: it is held again, and its next release is its own.
func (r *releasedLocks) forget(id lockID) {
	if r.slots == nil {
		return
	}
	name, at := r.key(id)
	for i := at; i < at+2; i++ {
		if r.slots[i].is(id, name) {
			r.slots[i] = releasedSlot{}
		}
	}
}

// lateMinority reports whether a release reply from server at end belongs to a lock released
// within releaseLinger on servers that did not include server.
func (r *releasedLocks) lateMinority(id lockID, server uint32, end time.Time) bool {
	if r.slots == nil {
		return false
	}
	name, at := r.key(id)
	for i := at; i < at+2; i++ {
		s := &r.slots[i]
		if s.is(id, name) {
			return end.UnixNano()-s.ended <= int64(releaseLinger) && s.servers&serverBit(server) == 0
		}
	}
	return false
}

func (s *releasedSlot) is(id lockID, name uint64) bool {
	return s.ended != 0 && s.ns == id.ns && s.token == id.token && s.name == name
}
