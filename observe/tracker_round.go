package observe

// round is one renew or release of a held lock as it answers part by part. A Redlock (redsync
// over several servers) sends each renew and release to every server; one Observer on all its
// clients sees one reply per server. The lock's holder goes by the quorum, and so do the
// metrics: a round counts once, ok when more than half of the parts it began with answered ok,
// otherwise not owned or failed, whichever more parts answered. A reply from a server that
// holds no part of the lock (the minority its acquire missed) is no part of the round and is
// not counted. A single-key lock on one server has one part, so each reply is its own round. A
// renew that answers while the release is still answering was sent before it: it is no round.
type round struct {
	op                            opKind // opNone: no round open
	parts                         int    // the lock's parts when the round began
	answered, ok, rejected, fails int
	counted                       bool
}

// answer adds c's reply to the lock's current round, opening a new one when c is another kind
// of operation or a part that already answered asks again, and counts the round once its
// outcome is settled. It reports whether c touched a part of the lock.
func (t *tracker) answer(e *entry, c *Call, op opKind, res result) bool {
	m := c.ns.m
	matched, again := 0, false
	for _, k := range c.keys() {
		if i := e.find(k, c.server); i >= 0 {
			matched++
			again = again || e.parts[i].replied
		}
	}
	if matched == 0 {
		return false
	}
	if op == opRefresh && e.round.op == opRelease && e.round.answered < e.round.parts {
		// A renew answering while the lock's release still is: it was sent before the release
		// (a holder does not renew what it lets go), and only answers late. rueidislock
		// extends each key on its own goroutine: an extend the server answered before a delete
		// can reach the hook after it. It belongs to the renew round the release closed, not to
		// a round of its own; closing the release round for it would count the release by its
		// first reply, then again by the replies of the other parts.
		return true
	}
	if e.round.op != op || again {
		e.closeRound(m)
		e.round = round{op: op, parts: len(e.parts)}
		for i := range e.parts {
			e.parts[i].replied = false
		}
	}
	for _, k := range c.keys() {
		if i := e.find(k, c.server); i >= 0 {
			e.parts[i].replied = true
		}
	}
	r := &e.round
	r.answered += matched
	switch res {
	case resultSuccess:
		r.ok += matched
	case resultRejected:
		r.rejected += matched
	default:
		r.fails += matched
	}
	if r.counted {
		return true
	}
	// Settled: a majority answered ok, or so many did not that ok cannot reach one.
	if r.ok*2 > r.parts {
		r.counted = true
		countRound(m, op, resultSuccess)
	} else if (r.parts-r.rejected-r.fails)*2 <= r.parts {
		r.counted = true
		countRound(m, op, r.failure())
	}
	return true
}

// closeRound counts a round that never settled (some parts never answered: a call called off)
// by the replies it had, and closes it.
func (e *entry) closeRound(m *nsMetrics) {
	r := &e.round
	if r.op != opNone && !r.counted && r.answered > 0 {
		if r.ok*2 > r.answered {
			countRound(m, r.op, resultSuccess)
		} else {
			countRound(m, r.op, r.failure())
		}
	}
	*r = round{}
}

func (r *round) failure() result {
	if r.rejected >= r.fails {
		return resultRejected
	}
	return resultError
}

// countRound counts one renew or release by its outcome.
func countRound(m *nsMetrics, op opKind, res result) {
	switch {
	case op == opRefresh && res == resultSuccess:
		m.RenewOK.Inc()
	case op == opRefresh && res == resultRejected:
		m.RenewNotOwned.Inc()
	case op == opRefresh:
		m.RenewFailed.Inc()
	case res == resultSuccess:
		m.RelOK.Inc()
	case res == resultRejected:
		m.RelNotOwned.Inc()
	default:
		m.RelError.Inc()
	}
}
