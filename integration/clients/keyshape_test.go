package clients_test

import (
	"regexp"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

var (
	hex32  = regexp.MustCompile(`^[0-9a-f]{32}$`)
	uuid   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	thread = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+$`)
)

// keyShape is what one client leaves in Redis while it holds a lock named name: the docs'
// per-client recipes say the same.
type keyShape struct {
	key    string         // the Redis key
	typ    string         // TYPE
	holder *regexp.Regexp // a string's value, or a hash's one field
	count  string         // a hash field's value: the re-entry count
}

func TestKeyShapes(t *testing.T) {
	const name = "jobs:nightly"
	tests := map[clients.Kind]keyShape{
		clients.RedisPy:        {key: name, typ: "string", holder: hex32},           // uuid1().hex
		clients.Redlock:        {key: name, typ: "string", holder: hex32},           // 16 random bytes, hex
		clients.RedisSemaphore: {key: "mutex:" + name, typ: "string", holder: uuid}, // crypto.randomUUID()
		clients.Redisson:       {key: name, typ: "hash", holder: thread, count: "1"},
	}
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			srv := redistest.Start(t) // an empty keyspace: every key there is the client's
			r := clients.NewRunner(t, srv.Addr)
			a := r.Holder(clients.Start(t, kind, srv.Addr), "A")
			want := tests[kind]
			if got := clients.RedisKey(kind, name); got != want.key {
				t.Errorf("RedisKey = %q, want %q", got, want.key)
			}

			wantResult(t, "A acquires", a.Acquire(name, longLease), clients.Acquired)
			if keys := r.Redis().Keys(t.Context(), "*").Val(); len(keys) != 1 || keys[0] != want.key {
				t.Fatalf("keys in Redis = %q, want only %q", keys, want.key)
			}
			if typ := r.Redis().Type(t.Context(), want.key).Val(); typ != want.typ {
				t.Errorf("TYPE = %s, want %s", typ, want.typ)
			}
			if pttl := r.Redis().PTTL(t.Context(), want.key).Val(); pttl <= 0 || pttl > longLease {
				t.Errorf("PTTL = %v, want within (0, %v]", pttl, longLease)
			}
			checkHolder(t, r.Redis(), want)
		})
	}
}

// checkHolder matches the lock's holder against its shape without printing it: a holder is a
// capability.
func checkHolder(t *testing.T, rdb *redis.Client, want keyShape) {
	t.Helper()
	if want.typ == "string" {
		if v := rdb.Get(t.Context(), want.key).Val(); !want.holder.MatchString(v) {
			t.Errorf("value (%d bytes) does not match %s", len(v), want.holder)
		}
		return
	}
	fields := rdb.HGetAll(t.Context(), want.key).Val()
	if len(fields) != 1 {
		t.Fatalf("hash has %d fields, want 1", len(fields))
	}
	for field, count := range fields {
		if !want.holder.MatchString(field) {
			t.Errorf("field (%d bytes) does not match %s", len(field), want.holder)
		}
		if count != want.count {
			t.Errorf("field value = %q, want %q", count, want.count)
		}
	}
}
