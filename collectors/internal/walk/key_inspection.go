package walk

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/redis/go-redis/v9"
)

// lfuIdleError is the start of the error Redis returns for OBJECT IDLETIME when the
// maxmemory-policy is an LFU policy (idle time is not tracked then).
const lfuIdleError = "ERR An LFU maxmemory policy is selected"

// InspectWorkers is how many PTTL/OBJECT IDLETIME pipelines are in flight on a node at once,
// each on its own connection. While one pipeline's replies are decoded here, Redis executes
// another's commands and the next SCAN, so neither side waits for the other. Three kept Redis
// busier than two (BenchmarkScrape; the measured speed-up is in docs/performance.md, "Exporter:
// heap and linearity"); beyond that, a single-threaded Redis gains nothing from more connections.
const InspectWorkers = 3

// KeyReply is what the inspection of one key found.
type KeyReply struct {
	Info KeyInfo
	// Type is the key's Redis type: TYPE's reply, or TypeString when SCAN filtered by type.
	Type string
	Gone bool  // expired or deleted since SCAN returned it
	Err  error // the first command error on the key
	// ExpireAt is PEXPIRETIME (Unix milliseconds on the server's clock, -1 for no expiry), read
	// only by an inspector with expireTime set (the index's reads on Redis 7 and later).
	ExpireAt int64
	// AcquiredAt is the acquisition time in the lock's holder record (Unix milliseconds on the
	// server's clock), read for namespaces that declare ExpectedMaxHold; 0 when none was read.
	// The index keeps it, so that a hold age is exact at any later scrape.
	AcquiredAt int64
	// Fence marks the reply of a fence key read for its expiry alone (inspector.fenceExpiry):
	// Info.TTL is NoTTL for a key without expiry, otherwise ExpireAt (PEXPIRETIME) or Info.TTL
	// (PTTL) holds the expiry; nothing else is read.
	Fence bool
	// HolderHash is the hash of the lock's holder (holder_value.go), read by the index's
	// re-reads where granted; 0 when not read. HolderErr is that read's error.
	HolderHash uint64
	HolderErr  error
	// Migrating marks a reply settleRedirects settled: the key's slot is migrating between
	// this master and another, and the key left (ASK) or arrived (MOVED) by MIGRATE.
	Migrating bool
}

// Inspector pipelines PTTL, OBJECT IDLETIME and, where needed, TYPE for batches of keys, for
// one worker. Its slices are reused from batch to batch: at a thousand keys a batch they were a
// large share of a scan's allocations, and the garbage collector's work competed with Redis for
// the CPU.
type Inspector struct {
	c      NodeClient
	noIdle *atomic.Bool // shared by the node's workers: set once the node refused OBJECT IDLETIME
	// expireTime reads PEXPIRETIME (Redis 7 and later) in place of PTTL, for the index: an
	// absolute expiry keeps a key's TTL exact between reads, where read time + PTTL carries the
	// pipeline's round trip as its error.
	expireTime bool
	// expiryAlone, with expireTime, leaves out the batch's TIME and each reply's TTL (0 where the
	// key has an expiry), for the index's re-reads: the index keeps a key's expiry time alone,
	// and only a walk's aggregates take TTLs.
	expiryAlone bool
	// fenceExpiry reads a fence key's expiry alone (PEXPIRETIME with expireTime, else PTTL),
	// for the index: a fence key is counted, never inspected further, and the index must know
	// when it expires, as Redis may reclaim it long after.
	fenceExpiry bool
	// asking sends ASKING before each command on a key: the re-read of keys whose slot this
	// Cluster master is importing (see settleRedirects).
	asking bool
	// The commands queued per key, nil where a key has none (a fence key's, see fenceExpiry).
	expires []*redis.DurationCmd
	ttls    []*redis.DurationCmd
	idles   []*redis.DurationCmd
	types   []*redis.StatusCmd
	fences  []bool
	replies []KeyReply
	// readHolder picks the keys whose holder record is read for their hold age (see
	// classifier.holderReader); nil reads none. holders has a GET per key (nil where none was
	// queued). now is the server's TIME for the batch in flight, queued where expiry times or
	// holder records are read, else nil.
	readHolder func(key string) bool
	holders    []*redis.StringCmd
	now        *redis.TimeCmd
	// holderValue picks the keys whose holder is read, as a string and/or as a hash, for the
	// lock lifecycle (holder_value.go), and hashHolder hashes what was read; nil reads none.
	// values and fields hold the reads per key (nil where none was queued).
	holderValue func(key string) (str, hash bool)
	hashHolder  func(parts ...string) uint64
	values      []*redis.StringCmd
	fields      []*redis.ScanCmd
}

// InspectOptions are what an inspector reads besides a key's expiry, idle time and type (see
// Inspector's fields of the same names): the index's re-reads set them.
type InspectOptions struct {
	ExpireTime, ExpiryAlone, FenceExpiry bool
	ReadHolder                           func(key string) bool
	HolderValue                          func(key string) (str, hash bool)
	HashHolder                           func(parts ...string) uint64
}

// NewInspector returns an inspector of c's keys; noIdle is shared by the inspectors of one node.
func NewInspector(c NodeClient, noIdle *atomic.Bool, o InspectOptions) *Inspector {
	return &Inspector{c: c, noIdle: noIdle, expireTime: o.ExpireTime, expiryAlone: o.ExpiryAlone, fenceExpiry: o.FenceExpiry, readHolder: o.ReadHolder,
		holderValue: o.HolderValue, hashHolder: o.HashHolder}
}

// LFURefused reports whether err is OBJECT IDLETIME refused because the maxmemory-policy is an
// LFU policy.
func LFURefused(err error) bool { return err != nil && strings.HasPrefix(err.Error(), lfuIdleError) }

// Inspect pipelines the commands for keys and returns one reply per key, valid until the next
// call. None of the commands touches the key, so the scan does not disturb the idle time it
// measures, and none reads the value (the owner's token), except the holder read of the index's
// re-reads (holderValue), which follows a write to the key and keeps only a hash of it.
func (in *Inspector) Inspect(ctx context.Context, keys []string, withType bool) (replies []KeyReply, idleKnown bool) {
	wantIdle := !in.noIdle.Load()
	pipe := in.c.Pipeline()
	in.ttls, in.idles, in.types, in.expires, in.fences = in.ttls[:0], in.idles[:0], in.types[:0], in.expires[:0], in.fences[:0]
	in.now = nil
	if in.expireTime && !in.expiryAlone {
		// The batch's TTLs are its expiry times less this one TIME, queued before them: each is
		// what PTTL would have answered at that instant, for one command a batch instead of one
		// a key.
		in.now = pipe.Time(ctx)
	}
	for _, k := range keys {
		in.queueKey(ctx, pipe, k, wantIdle, withType)
	}
	in.queueHolders(ctx, pipe, keys)
	in.queueHolderValues(ctx, pipe, keys)
	// Exec's error is the first failed command's; each command is judged on its own below,
	// because a vanished key (nil reply) is not a failure and an error on one key (NOPERM, say)
	// concerns only that key's namespaces.
	_, _ = pipe.Exec(ctx)

	idleKnown = wantIdle
	if wantIdle {
		for _, cmd := range in.idles {
			if cmd == nil {
				continue
			}
			if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), lfuIdleError) {
				in.noIdle.Store(true)
				idleKnown = false
				break
			}
		}
	}
	replies = in.replies[:0]
	for j, k := range keys {
		replies = append(replies, in.reply(j, k, idleKnown, withType))
	}
	in.replies = replies
	in.settleRedirects(ctx, keys, replies, withType)
	return replies, idleKnown
}

// queueKey adds key's commands to pipe, and to the inspector's lists a command or nil each.
func (in *Inspector) queueKey(ctx context.Context, pipe redis.Pipeliner, key string, wantIdle, withType bool) {
	fence := in.fenceExpiry && isFenceKey(key)
	var ttl, expire, idle *redis.DurationCmd
	var typ *redis.StatusCmd
	in.ask(ctx, pipe)
	if in.expireTime {
		expire = pipe.PExpireTime(ctx, key)
	} else {
		ttl = pipe.PTTL(ctx, key)
	}
	if wantIdle && !fence {
		in.ask(ctx, pipe)
		idle = pipe.ObjectIdleTime(ctx, key)
	}
	if withType && !fence {
		in.ask(ctx, pipe)
		typ = pipe.Type(ctx, key)
	}
	in.fences = append(in.fences, fence)
	in.ttls, in.expires = append(in.ttls, ttl), append(in.expires, expire)
	in.idles, in.types = append(in.idles, idle), append(in.types, typ)
}

// reply is key j's reply from its pipelined commands, read in the order they were queued; the
// first error or sign that the key is gone ends it.
func (in *Inspector) reply(j int, key string, idleKnown, withType bool) KeyReply {
	if in.fences[j] {
		return in.fenceReply(j, key)
	}
	r := KeyReply{Info: KeyInfo{Key: key}, Type: TypeString}
	if !in.replyExpiry(j, &r) {
		return r
	}
	if withType && !in.replyType(j, &r) {
		return r
	}
	if idleKnown && !in.replyIdle(j, &r) {
		return r
	}
	in.heldFor(j, &r)
	in.holderOf(j, &r)
	return r
}

// replyExpiry sets r's TTL and, when the inspector reads it, its expiry time (PEXPIRETIME), of
// which the TTL is then derived. It reports false when r is complete: an error, or the key gone.
func (in *Inspector) replyExpiry(j int, r *KeyReply) bool {
	if in.expireTime {
		return in.replyExpireTime(j, r)
	}
	ttl, err := in.ttls[j].Result()
	if err != nil {
		r.Err = err
		return false
	}
	// go-redis returns PTTL's -2 (no such key) and -1 (no expiry) as raw -2ns and -1ns, not
	// scaled to milliseconds like real TTLs.
	switch ttl {
	case -2:
		r.Gone = true
		return false
	case -1:
		ttl = NoTTL
	}
	r.Info.TTL = ttl
	r.ExpireAt = -1
	return true
}

// replyExpireTime sets r's expiry time from PEXPIRETIME and its TTL as of the batch's TIME,
// clamped at 0 as PTTL's. It reports false when r is complete: an error, or the key gone.
func (in *Inspector) replyExpireTime(j int, r *KeyReply) bool {
	// go-redis scales PEXPIRETIME's reply as milliseconds, keeping -1 and -2 raw like PTTL's.
	at, err := in.expires[j].Result()
	if err != nil {
		r.Err = err
		return false
	}
	switch at {
	case -2:
		r.Gone = true
		return false
	case -1:
		r.Info.TTL, r.ExpireAt = NoTTL, -1
		return true
	}
	r.ExpireAt = at.Milliseconds()
	if in.expiryAlone {
		return true
	}
	now, err := in.now.Result()
	if err != nil {
		r.Err = err
		return false
	}
	r.Info.TTL = max(0, time.Duration(r.ExpireAt-now.UnixMilli())*time.Millisecond)
	return true
}

// replyType sets r's type from TYPE. It reports false when r is complete: an error, or the key
// gone.
func (in *Inspector) replyType(j int, r *KeyReply) bool {
	typ, err := in.types[j].Result()
	if err != nil {
		r.Err = err
		return false
	}
	if typ == "none" {
		r.Gone = true
		return false
	}
	r.Type = typ
	return true
}

// replyIdle sets r's idle time from OBJECT IDLETIME. It reports false when r is complete: an
// error, or the key gone.
func (in *Inspector) replyIdle(j int, r *KeyReply) bool {
	idle, err := in.idles[j].Result()
	if errors.Is(err, redis.Nil) {
		r.Gone = true // expired or deleted between the commands
		return false
	}
	if err != nil {
		r.Err = err
		return false
	}
	r.Info.Idle = idle
	return true
}

// fenceReply is fence key j's reply from its one expiry command: PEXPIRETIME when the inspector
// reads it, else PTTL. go-redis keeps either's -1 (no expiry) and -2 (no key) raw.
func (in *Inspector) fenceReply(j int, key string) KeyReply {
	r := KeyReply{Info: KeyInfo{Key: key, TTL: NoTTL}, ExpireAt: -1, Fence: true}
	cmd := in.ttls[j]
	if in.expireTime {
		cmd = in.expires[j]
	}
	v, err := cmd.Result()
	switch {
	case err != nil:
		r.Err = err
	case v == -2:
		r.Gone = true
	case v == -1: // no expiry: NoTTL
	case in.expireTime:
		r.ExpireAt, r.Info.TTL = v.Milliseconds(), 0
	default:
		r.Info.TTL = v
	}
	return r
}

// isFenceKey reports whether key is counted apart as a fence key, read for its expiry alone.
func isFenceKey(key string) bool { return lockkeys.KindOf(key) == lockkeys.FenceCompanion }
