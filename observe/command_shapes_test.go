package observe

import (
	"testing"
	"time"
)

// Redis 8.4's DELEX … IFEQ and SET … IFEQ and Valkey's DELIFEQ are not in this machine's
// redis-server: their shapes are recognised and their replies read, on synthetic replies.
func TestCompareCommandsOfNewerServers(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{})
	const v = "token-of-the-holder"
	rtt := time.Millisecond
	// Acquire, extend with SET IFEQ, release with DELEX IFEQ.
	do(o, clock, rtt, ok, "set", "jobs:1", v, "nx", "px", "10000")
	if !do(o, clock, rtt, ok, "SET", "jobs:1", v, "IFEQ", v, "PX", "10000") {
		t.Fatal("SET … IFEQ <own value> PX not recognised as a renew")
	}
	do(o, clock, rtt, nilReply, "set", "jobs:1", v, "ifeq", v, "px", "10000") // lost it meanwhile
	if !do(o, clock, rtt, one, "DELEX", "jobs:1", "IFEQ", v) {
		t.Fatal("DELEX … IFEQ not recognised as a release")
	}
	// Valkey: acquire, a stale DELIFEQ (0), the owner's DELIFEQ (1).
	do(o, clock, rtt, ok, "set", "jobs:2", v, "nx", "px", "10000")
	if !do(o, clock, rtt, zero, "DELIFEQ", "jobs:2", "someone-else") {
		t.Fatal("DELIFEQ not recognised as a release")
	}
	do(o, clock, rtt, one, "delifeq", "jobs:2", v)
	checkJobs(t, reg,
		jobsValue{"lock_renewals_total", "ok", 1},
		jobsValue{"lock_renewals_total", "not_owned", 1},
		jobsValue{"lock_releases_total", "ok", 2},
		jobsValue{"lock_releases_total", "not_owned", 1},
		jobsValue{"lock_held", "", 0},
	)
	// Shapes that are not lock operations pass uncounted.
	for _, args := range [][]string{
		{"set", "jobs:3", v, "ifeq", "another-value", "px", "1000"}, // a hand-over, not a renew
		{"set", "jobs:3", v, "ifeq", v},                             // drops the expiry
		{"set", "jobs:3", v, "nx", "ifeq", v, "px", "1000"},         // not a valid SET
		{"delex", "jobs:3"},                                         // a plain delete
		{"delex", "jobs:3", "ifne", v},
		{"delifeq", "cache:1", v}, // outside every namespace
	} {
		if c := o.Begin(StringArgs(args)); c != nil {
			t.Errorf("%v recognised as op %d", args, c.op)
		}
	}
}

// An EVALSHA whose script was never seen cannot be classified; on a declared namespace's key it
// is counted, so that a library whose scripts changed does not go silently unobserved. An
// EVALSHA on other keys, or of a known script, is not.
func TestUnknownScriptsAreCounted(t *testing.T) {
	o, reg, _ := newTestObserver(t, Options{})
	unknown := "0123456789abcdef0123456789abcdef01234567"
	for _, args := range [][]string{
		{"evalsha", unknown, "1", "jobs:1", "v"},
		{"EVALSHA", unknown, "2", "approval:1", "jobs:2", "v"},
		{"evalsha", unknown, "1", "cache:1", "v"},                                           // not a lock key
		{"evalsha", unknown, "0", "v"},                                                      // no key
		{"evalsha", "d75bb8b5bd13532ddedd17762e772346e39b321e", "1", "jobs:1", "v", "8000"}, // redsync's touch
	} {
		o.Begin(StringArgs(args)).Done(ok)
	}
	if got := value(t, reg, "lock_observe_unclassified_scripts_total", "", ""); got != 2 {
		t.Errorf("lock_observe_unclassified_scripts_total = %v, want 2", got)
	}
}
