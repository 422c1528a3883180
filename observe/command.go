package observe

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Args is one command's arguments as a client sends them, the command name first. Adapters for
// other clients (see the rueidisobserve module) implement it over their own command type.
type Args interface {
	Len() int
	Arg(i int) string
}

// StringArgs are arguments already held as strings (rueidis' Completed.Commands(), say).
type StringArgs []string

// Len implements Args.
func (a StringArgs) Len() int { return len(a) }

// Arg implements Args.
func (a StringArgs) Arg(i int) string { return a[i] }

// Call is a recognised lock command on its way to the server. Its lock value is kept only as a
// seeded hash, which tells one holder's commands from another's and cannot be turned back into
// the value.
type Call struct {
	o  *Observer
	op opKind
	ns *namespace
	// key is the one key of a single-key lock; more holds all the keys when there are
	// several. No field points into the Call itself, so that a hook's Call stays on its
	// stack (see keys).
	key      [1]string
	more     []string
	name     string // the lock's name: its key, or for a lock of parts the key without its index
	token    uint64
	server   uint32 // the hook (client, so server) it was sent through; 0 for Begin's callers
	start    time.Time
	ttl      ttlKind
	ttlValue int64
	pooled   bool // taken from callPool, and returned to it by Done
}

// Begin recognises a command before it is sent. It returns nil for anything that is not a lock
// command on a declared namespace; such commands must pass through uncounted. The caller sends
// the command and then calls Call.Done with its reply.
func (o *Observer) Begin(args Args) *Call { return begin(o, anyArgs{args}, nil) }

// BeginStrings is Begin for arguments held as strings (rueidis' Completed.Commands()),
// without boxing them.
func (o *Observer) BeginStrings(args []string) *Call { return begin(o, StringArgs(args), nil) }

// BeginStringsOn is BeginStrings reading the command into c, a Call the caller holds (a
// variable on its stack, say), instead of one taken from the Observer's pool: an adapter's
// hook then touches no shared pool per lock command. It returns c, or nil when the command is
// not a lock command. c is overwritten; end it with Finish, not Done (Done returns pooled
// Calls to the pool, which would move the caller's variable to the heap).
//
// It is not inlined, for the reason beginGoRedis is not: inlined into the adapter's package,
// the generic begin would carry no escape facts there and c would move to the heap.
//
//go:noinline
func (o *Observer) BeginStringsOn(c *Call, args []string) *Call {
	return begin(o, StringArgs(args), c)
}

// argReader is what begin reads commands through: Args, and integers read without formatting
// them first (go-redis passes counts and expiries as Go integers, which Arg would format into
// a new string on every read).
type argReader interface {
	Args
	intArg(i int) (int64, bool)
}

// intArg implements argReader.
func (a StringArgs) intArg(i int) (int64, bool) { return parseInt(a[i]) }

// anyArgs reads the Args of Begin's callers.
type anyArgs struct{ Args }

func (a anyArgs) intArg(i int) (int64, bool) { return parseInt(a.Arg(i)) }

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// command is a command name begin tells apart.
type command uint8

const (
	cmdOther  command = iota
	cmdDelete         // DEL, UNLINK
	cmdSet
	cmdEval
	cmdEvalSHA
	cmdDelIfEq
	cmdDelEx
	cmdScript
	cmdFlush // FLUSHDB, FLUSHALL
)

// commandOf names a command by its first argument, comparing each name only with the names
// of its length: most commands a client sends are not lock commands, and are told so in one
// or two comparisons.
func commandOf(name string) command {
	switch len(name) {
	case 3:
		switch {
		case strings.EqualFold(name, "set"):
			return cmdSet
		case strings.EqualFold(name, "del"):
			return cmdDelete
		}
	case 4:
		if strings.EqualFold(name, "eval") {
			return cmdEval
		}
	case 5:
		if strings.EqualFold(name, "delex") {
			return cmdDelEx
		}
	case 6:
		switch {
		case strings.EqualFold(name, "unlink"):
			return cmdDelete
		case strings.EqualFold(name, "script"):
			return cmdScript
		}
	case 7:
		switch {
		case strings.EqualFold(name, "evalsha"):
			return cmdEvalSHA
		case strings.EqualFold(name, "delifeq"):
			return cmdDelIfEq
		case strings.EqualFold(name, "flushdb"):
			return cmdFlush
		}
	case 8:
		if strings.EqualFold(name, "flushall") {
			return cmdFlush
		}
	}
	return cmdOther
}

// begin is Begin for any argument type: generic so that the hooks pass their own slices
// without boxing them in an interface, which would cost an allocation on every command,
// lock command or not. A recognised command is read into into when it is not nil (a hook's
// own Call, on its stack), or into a Call from the pool.
func begin[A argReader](o *Observer, args A, into *Call) *Call {
	if args.Len() < 2 {
		if args.Len() == 1 && commandOf(args.Arg(0)) == cmdFlush {
			return newCall(o, opFlush, nil, into)
		}
		return nil
	}
	cmd := commandOf(args.Arg(0))
	switch cmd {
	case cmdDelete:
		return beginDelete(o, args, into)
	case cmdFlush: // FLUSHDB ASYNC, FLUSHALL SYNC
		return newCall(o, opFlush, nil, into)
	}
	if cmd == cmdOther || args.Len() < 3 {
		return nil
	}
	switch cmd {
	case cmdSet:
		return beginSet(o, args, into)
	case cmdEvalSHA:
		info, ok := o.scripts.bySHA(args.Arg(1))
		if !ok {
			countUnknownScript(o, args)
			return nil
		}
		return beginScript(o, args, info, into)
	case cmdEval:
		info := o.scripts.byBody(args.Arg(1))
		if info.op == opNone {
			return nil
		}
		return beginScript(o, args, info, into)
	case cmdDelIfEq:
		if args.Len() == 3 {
			// Valkey's compare-and-delete: DELIFEQ key value, answered 1 (deleted) or 0.
			return beginCompareDelete(o, args.Arg(1), args.Arg(2), into)
		}
	case cmdDelEx:
		if args.Len() == 4 && strings.EqualFold(args.Arg(2), "ifeq") {
			// Redis 8.4's compare-and-delete: DELEX key IFEQ value, answered 1 or 0.
			return beginCompareDelete(o, args.Arg(1), args.Arg(3), into)
		}
	case cmdScript:
		if strings.EqualFold(args.Arg(1), "load") {
			// Learning the SHA is all there is to do: the EVALSHA calls that follow are the
			// operations.
			o.scripts.byBody(args.Arg(2))
		}
	}
	return nil
}

// keys are the call's lock keys.
func (c *Call) keys() []string {
	if c.more != nil {
		return c.more
	}
	return c.key[:]
}

// countUnknownScript counts an EVALSHA that could not be classified when its first key is in a
// declared namespace: a lock library whose scripts changed (and whose bodies this process never
// saw, because the server had them cached) would otherwise go silently unobserved.
func countUnknownScript[A argReader](o *Observer, args A) {
	if args.Len() < 4 {
		return
	}
	if n, ok := args.intArg(2); !ok || n < 1 {
		return
	}
	if o.namespaceOf(args.Arg(3)) != nil {
		o.unknownSHA.Inc()
	}
}

// beginDelete recognises DEL or UNLINK of keys of which at least one is in a declared
// namespace: a cleanup job or a test's teardown removing held locks, which ends their holds
// but is no release. Only the namespaced keys are kept; one costs no allocation.
func beginDelete[A argReader](o *Observer, args A, into *Call) *Call {
	var c *Call
	for i := 1; i < args.Len(); i++ {
		k := args.Arg(i)
		if o.namespaceOf(k) == nil {
			continue
		}
		switch {
		case c == nil:
			c = newCall(o, opDelete, nil, into)
			c.key[0] = k
		case c.more == nil:
			c.more = []string{c.key[0], k}
		default:
			c.more = append(c.more, k)
		}
	}
	return c
}

// beginCompareDelete is a release of key by value sent as one command rather than a script.
func beginCompareDelete(o *Observer, key, value string, into *Call) *Call {
	ns := o.namespaceOf(key)
	if ns == nil {
		return nil
	}
	c := newCall(o, opRelease, ns, into)
	c.token = o.hashToken(value)
	c.key[0] = key
	c.name = key
	return c
}

// beginSet recognises SET key value NX with PX, EX, PXAT or EXAT in any order, the acquire
// attempt redsync (and many hand-made locks) send, and Redis 8.4's compare-and-set with the
// same value, SET key value IFEQ value PX ms, which extends a lock its holder still owns
// (answered OK, or nil when not owned). SET without NX or IFEQ, with XX, GET or KEEPTTL, with
// IFEQ of another value (a hand-over, not a renew), or without an expiry is neither.
func beginSet[A argReader](o *Observer, args A, into *Call) *Call {
	if args.Len() < 6 {
		return nil
	}
	ns := o.namespaceOf(args.Arg(1))
	if ns == nil {
		return nil
	}
	nx, ifeq, kind, value := false, false, ttlUnknown, int64(0)
	for i := 3; i < args.Len(); i++ {
		opt := args.Arg(i)
		switch {
		case strings.EqualFold(opt, "nx"):
			nx = true
		case strings.EqualFold(opt, "ifeq"):
			if i+1 >= args.Len() || args.Arg(i+1) != args.Arg(2) {
				return nil
			}
			ifeq = true
			i++
		case strings.EqualFold(opt, "px"), strings.EqualFold(opt, "ex"),
			strings.EqualFold(opt, "pxat"), strings.EqualFold(opt, "exat"):
			if i+1 >= args.Len() {
				return nil
			}
			kind = setTTLKind(opt)
			v, ok := args.intArg(i + 1)
			if !ok {
				return nil
			}
			value = v
			i++
		default:
			return nil
		}
	}
	if nx == ifeq || kind == ttlUnknown {
		return nil
	}
	op := opAcquire
	if ifeq {
		op = opRefresh
	}
	c := newCall(o, op, ns, into)
	c.token, c.ttl, c.ttlValue = o.hashToken(args.Arg(2)), kind, value
	c.key[0] = args.Arg(1)
	c.name = c.key[0]
	return c
}

// setTTLKind reads one of SET's expiry options, in any case.
func setTTLKind(opt string) ttlKind {
	switch {
	case strings.EqualFold(opt, "px"):
		return ttlRelMillis
	case strings.EqualFold(opt, "ex"):
		return ttlRelSeconds
	case strings.EqualFold(opt, "pxat"):
		return ttlAbsMillis
	default:
		return ttlAbsSeconds
	}
}

// beginScript reads EVAL/EVALSHA body-or-sha numkeys key... arg...: the lock keys are KEYS,
// the value ARGV[1], the expiry the script's own ARGV.
func beginScript[A argReader](o *Observer, args A, info scriptInfo, into *Call) *Call {
	n, ok := args.intArg(2)
	if !ok || n < 1 || n >= int64(args.Len()-3) {
		return nil
	}
	numKeys := int(n)
	ns := o.namespaceOf(args.Arg(3))
	if ns == nil {
		return nil
	}
	c := newCall(o, info.op, ns, into)
	if numKeys == 1 {
		c.key[0] = args.Arg(3)
	} else {
		c.more = make([]string, numKeys)
		for i := range numKeys {
			c.more[i] = args.Arg(3 + i)
		}
	}
	c.name = c.keys()[0]
	if info.parts {
		c.name = o.partNames.of(c.name)
	}
	argv := 3 + numKeys // index of ARGV[1]
	c.token = o.hashToken(args.Arg(argv))
	if info.ttlArg > 0 && argv+info.ttlArg-1 < args.Len() {
		if v, ok := args.intArg(argv + info.ttlArg - 1); ok {
			c.ttl, c.ttlValue = info.ttl, v
		}
	}
	return c
}

// callPool recycles Calls: one is taken per lock command and returned by Done.
var callPool = sync.Pool{New: func() any { return new(Call) }}

func newCall(o *Observer, op opKind, ns *namespace, into *Call) *Call {
	c := into
	if c == nil {
		c = callPool.Get().(*Call)
		c.pooled = true
	} else {
		// A caller's Call may have served an earlier command (BeginStringsOn).
		*c = Call{}
	}
	c.o, c.op, c.ns = o, op, ns
	if op == opAcquire {
		// Only an acquire's start is ever read (its wait and hold begin there); a renew or
		// release is dated by its reply. The clock is read as rarely as that allows.
		c.start = o.now()
	}
	return c
}

// recycle returns a finished Call to the pool, dropping what it references.
func (c *Call) recycle() {
	*c = Call{}
	callPool.Put(c)
}

func (o *Observer) hashToken(value string) uint64 { return maphash.String(o.seed, value) }

// deadline is when the lock this call writes expires, by the client's clock at the reply.
// Unknown expiries fall back to unknownTTL so that the state is still evicted.
func (c *Call) deadline(end time.Time) time.Time {
	switch c.ttl {
	case ttlRelMillis:
		return end.Add(time.Duration(c.ttlValue) * time.Millisecond)
	case ttlRelSeconds:
		return end.Add(time.Duration(c.ttlValue) * time.Second)
	case ttlAbsMillis:
		return time.UnixMilli(c.ttlValue)
	case ttlAbsSeconds:
		return time.Unix(c.ttlValue, 0)
	}
	return end.Add(unknownTTL)
}

// unknownTTL bounds the state of a lock whose script's expiry argument was not found.
const unknownTTL = time.Minute
