package observe

import (
	"crypto/sha1"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// opKind is what a recognised command does to a lock.
type opKind uint8

const (
	opNone    opKind = iota
	opAcquire        // set-if-absent with an expiry (or a forced set, by rueidislock's Force)
	opRelease        // compare-and-delete
	opRefresh        // compare-and-pexpire
	opDelete         // a plain DEL or UNLINK: ends the holds of its keys, counts no release
	opFlush          // FLUSHDB or FLUSHALL: ends every hold on its server, counts no release
)

// ttlKind says how a command's expiry argument reads.
type ttlKind uint8

const (
	ttlUnknown ttlKind = iota
	ttlRelMillis
	ttlRelSeconds
	ttlAbsMillis // unix milliseconds (PXAT, PEXPIREAT)
	ttlAbsSeconds
)

// scriptInfo is what a lock script does and where its expiry is. Every recognised script
// takes the lock keys as KEYS and the lock value as ARGV[1].
type scriptInfo struct {
	op     opKind
	ttlArg int // 1-based ARGV index of the expiry; 0 when the script has none or it was not found
	ttl    ttlKind
	// parts: the script's keys are parts of one lock whose name is the key without its part
	// index (rueidislock's PREFIX:i:NAME, one key per part under one value).
	parts bool
}

// knownScripts are the SHA1s of the lock scripts the supported libraries ship, at the releases
// named, so that an EVALSHA is recognised even when this process never saw the script's body
// (the server already had it cached). The hashes were computed from the libraries' sources; the
// peer tests check them against what the libraries really send.
var knownScripts = map[string]scriptInfo{
	// bsm/redislock v0.9.4: obtain (SET NX PX ARGV[3]), refresh (PEXPIRE ARGV[2]), release.
	"80a1b5f2cfccec3b7119ba7721d2127682b691a7": {opAcquire, 3, ttlRelMillis, false},
	"a7aba3bc5d6e99b3003da8b9d80a63b9f4092ecf": {opRefresh, 2, ttlRelMillis, false},
	"cf0e94b2e9ffc7e04395cf88f7583fc309985910": {opRelease, 0, ttlUnknown, false},
	// bsm/redislock main at 76760bd (unreleased; multi-key): obtain (MSETNX, PEXPIRE ARGV[3]
	// through a helper), refresh (PEXPIRE ARGV[2]), release, each an MGET compared with ~=.
	// classifyBody reads the same from their bodies.
	"eb0c00d98f6f33b4262419a509002884540f30be": {op: opAcquire, ttlArg: 3, ttl: ttlRelMillis},
	"5a22d7e8431313862816d4416b5e46dd70fc340d": {op: opRefresh, ttlArg: 2, ttl: ttlRelMillis},
	"9470c810040e272ee6c579d8d4331aaf6332a7b1": {op: opRelease},
	// go-redsync/redsync v4.18.1: touch, touch with SET NX fallback (both PEXPIRE ARGV[2]),
	// delete. Its acquire is a plain SET NX PX.
	"d75bb8b5bd13532ddedd17762e772346e39b321e": {opRefresh, 2, ttlRelMillis, false},
	"b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79": {opRefresh, 2, ttlRelMillis, false},
	"e950836ed1e694540c503ef9972b8de518044d3b": {opRelease, 0, ttlUnknown, false},
	// rueidislock (github.com/redis/rueidis v1.0.79): acquire by PXAT or PX, forced acquire
	// by PXAT or PX, extend (PEXPIREAT ARGV[2]), delete.
	"3875d208d9e377969d2022550302cc83ad17b584": {opAcquire, 2, ttlAbsMillis, true},
	"fa3d1aaa7e4145457755016a3d5daf72fa7a11bf": {opAcquire, 2, ttlRelMillis, true},
	"c10e8119872659b926e8e28002d9b7fccbf15617": {opAcquire, 2, ttlAbsMillis, true},
	"4384ed08baff4dd7071b6c78c516a2fded4ee3e7": {opAcquire, 2, ttlRelMillis, true},
	"852ba6ec6104340ced36643283c856d4698569e4": {opRefresh, 2, ttlAbsMillis, true},
	"9eb62214c9af87ae5f9a9f12bb4520281c0d2ae1": {opRelease, 0, ttlUnknown, true},
}

// maxLearned bounds the scripts learned from EVAL and SCRIPT LOAD bodies (and the bodies seen),
// so an application that generates scripts cannot grow the table without bound.
const maxLearned = 256

// scriptTable resolves EVALSHA hashes and EVAL bodies to what they do.
type scriptTable struct {
	// recent are SHA strings bySHA recognised, read first: see recentSHA.
	recent  [recentSHAs]atomic.Pointer[recentSHA]
	next    atomic.Uint32 // recent's slots claimed so far
	mu      sync.RWMutex
	learned map[string]scriptInfo // sha1 hex -> info, lock scripts only
	bodies  map[string]scriptInfo // body -> info, lock scripts and not (opNone)
}

func newScriptTable() *scriptTable {
	return &scriptTable{learned: map[string]scriptInfo{}, bodies: map[string]scriptInfo{}}
}

// recentSHA is a SHA string bySHA recognised, with what it names. A lock library passes the
// same string on every EVALSHA (go-redis' Script and rueidis' Lua keep the hash they computed
// once), so it is recognised again by where its bytes are, without hashing the 40 bytes and
// probing a map whose lines a real lock cycle finds cold. Holding the string keeps its bytes
// alive, and Go strings are immutable (unsafe.String's contract forbids changing the bytes
// while the string exists), so the same address and length are the same hash.
type recentSHA struct {
	sha  string
	info scriptInfo
}

// recentSHAs is how many SHA strings are remembered, the first lock scripts' seen (a library
// sends two to four), one cache line of pointers. They are never replaced, so that a process
// sending more lock scripts than that, or building each call's SHA string anew, costs no
// allocation per call: their other strings take the map, as before.
const recentSHAs = 8

// bySHA looks up an EVALSHA hash.
func (t *scriptTable) bySHA(sha string) (scriptInfo, bool) {
	for i := range t.recent {
		// A slot claimed but not stored yet reads nil for a moment: skipped, not an end.
		if r := t.recent[i].Load(); r != nil && len(r.sha) == len(sha) && unsafe.StringData(r.sha) == unsafe.StringData(sha) {
			return r.info, true
		}
	}
	info, ok := t.lookupSHA(sha)
	if ok && t.next.Load() < recentSHAs && !t.remembers(sha) {
		if i := t.next.Add(1) - 1; i < recentSHAs {
			t.recent[i].Store(&recentSHA{sha: sha, info: info})
		}
	}
	return info, ok
}

// remembers reports whether recent holds sha's value, under any address: a caller that
// passes a new string each time must not fill the table with copies of one hash.
func (t *scriptTable) remembers(sha string) bool {
	for i := range t.recent {
		if r := t.recent[i].Load(); r != nil && r.sha == sha {
			return true
		}
	}
	return false
}

// lookupSHA is bySHA by the hash's value.
func (t *scriptTable) lookupSHA(sha string) (scriptInfo, bool) {
	if len(sha) != 40 {
		return scriptInfo{}, false
	}
	if info, ok := knownScripts[sha]; ok {
		return info, true
	}
	if info, ok := knownScripts[strings.ToLower(sha)]; ok {
		return info, true
	}
	t.mu.RLock()
	info, ok := t.learned[strings.ToLower(sha)]
	t.mu.RUnlock()
	return info, ok
}

// byBody classifies an EVAL or SCRIPT LOAD body, and learns its SHA1 when it is a lock script
// so that the EVALSHA calls that follow are recognised.
func (t *scriptTable) byBody(body string) scriptInfo {
	t.mu.RLock()
	info, ok := t.bodies[body]
	t.mu.RUnlock()
	if ok {
		return info
	}
	sum := sha1.Sum([]byte(body))
	sha := hex.EncodeToString(sum[:])
	if known, ok := knownScripts[sha]; ok {
		info = known // a supported library's script sent by body: keep what the table says
	} else {
		info = classifyBody(body)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.bodies) < maxLearned {
		t.bodies[body] = info
	}
	if info.op != opNone && len(t.learned) < maxLearned {
		t.learned[sha] = info
	}
	return info
}

// ttlArgPattern finds the ARGV an expiry option or command takes, in a normalised body: after
// the key, which is KEYS[n] or a loop variable over KEYS ("for _, key in ipairs(KEYS)").
var ttlArgPattern = regexp.MustCompile(`"(px|pxat|ex|exat|pexpire|pexpireat|expire)",(?:keys\[\d+\],|[a-z_][a-z0-9_]*,)?argv\[(\d+)\]`)

// helperPattern finds a one-parameter local function, for scripts that set the expiry through
// a helper (bsm/redislock's obtain.lua: local function pexpire(ttl) … pexpire(ARGV[3])).
var helperPattern = regexp.MustCompile(`localfunction([a-z_][a-z0-9_]*)\(([a-z_][a-z0-9_]*)\)`)

// comparesValue reports whether a normalised body compares a value it read with GET or MGET
// against the lock value ARGV[1], either way round and with == or ~=: "if get(k) == ARGV[1]
// then act" and "if values[i] ~= ARGV[1] then return false end; act" are the same check.
func comparesValue(b string) bool {
	if !calls(b, "get") && !calls(b, "mget") {
		return false
	}
	return strings.Contains(b, "==argv[1]") || strings.Contains(b, "~=argv[1]") ||
		strings.Contains(b, "argv[1]==") || strings.Contains(b, "argv[1]~=")
}

// classifyBody recognises a lock script by what it does, not by one spelling: a compare of the
// lock value ARGV[1] with what GET or MGET read, followed by DEL or UNLINK, is a release;
// followed by an expiry command, a refresh; a SET NX or MSETNX is an acquire. Anything else is
// not a lock script.
func classifyBody(body string) scriptInfo {
	b := normaliseBody(body)
	compares := comparesValue(b)
	var info scriptInfo
	switch {
	case compares && (calls(b, "del") || calls(b, "unlink")):
		return scriptInfo{op: opRelease}
	case compares && (calls(b, "pexpire") || calls(b, "pexpireat") || calls(b, "expire")):
		info.op = opRefresh
	case calls(b, "msetnx") || (calls(b, "set") && strings.Contains(b, `"nx"`)):
		info.op = opAcquire
	default:
		return scriptInfo{}
	}
	if m := ttlArgPattern.FindStringSubmatch(b); m != nil {
		info.ttlArg, _ = strconv.Atoi(m[2])
		info.ttl = expiryKinds[m[1]]
	} else {
		info.ttlArg, info.ttl = helperExpiry(b)
	}
	return info
}

var expiryKinds = map[string]ttlKind{
	"px": ttlRelMillis, "pexpire": ttlRelMillis, "ex": ttlRelSeconds, "expire": ttlRelSeconds,
	"pxat": ttlAbsMillis, "pexpireat": ttlAbsMillis, "exat": ttlAbsSeconds,
}

// helperExpiry finds an expiry set through a local helper: a function whose parameter is the
// expiry argument of an expiry command, called with ARGV[n]. (The body has no whitespace left,
// so the call is found by its name alone.)
func helperExpiry(b string) (int, ttlKind) {
	for _, def := range helperPattern.FindAllStringSubmatch(b, -1) {
		name, param := def[1], def[2]
		use := regexp.MustCompile(`"(px|pxat|ex|exat|pexpire|pexpireat|expire)",(?:keys\[\d+\],|[a-z_][a-z0-9_]*,)?` + param + `\)`)
		kind := use.FindStringSubmatch(b)
		if kind == nil {
			continue
		}
		if call := regexp.MustCompile(name + `\(argv\[(\d+)\]\)`).FindStringSubmatch(b); call != nil {
			n, _ := strconv.Atoi(call[1])
			return n, expiryKinds[kind[1]]
		}
	}
	return 0, ttlUnknown
}

// normaliseBody lowercases a script, drops its whitespace and makes every quote a double one.
func normaliseBody(body string) string {
	var sb strings.Builder
	sb.Grow(len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '\'':
			sb.WriteByte('"')
		case 'A' <= c && c <= 'Z':
			sb.WriteByte(c + 'a' - 'A')
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// calls reports whether a normalised body calls the Redis command name.
func calls(b, name string) bool {
	return strings.Contains(b, `call("`+name+`"`)
}
