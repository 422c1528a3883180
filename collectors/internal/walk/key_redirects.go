package walk

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// While a Redis Cluster slot migrates, its keys move one batch at a time by MIGRATE from the
// source master (slot MIGRATING) to the target (slot IMPORTING), and each key is on one of the
// two at any moment. A walk lists each master's own keys with SCAN, and counts each key once as
// far as any walk of a changing keyspace does, but reading a listed key can be redirected:
//   - on the source, ASK: the key left between SCAN and the read (it is on the target now, like
//     a key deleted under the walk: gone);
//   - on the target, MOVED: the key is here, but the slot is not yet this master's, and Redis
//     serves it only to a command that follows ASKING. It is read again so.
// Before, either reply failed the key's namespaces, so every scrape during a reshard of a slot
// holding lock keys failed them (TestClusterWalkDuringSlotMove).

// settleRedirects marks keys whose read was answered ASK as gone, and reads again, with ASKING,
// the keys answered MOVED, replacing their replies.
func (in *Inspector) settleRedirects(ctx context.Context, keys []string, replies []KeyReply, withType bool) {
	var moved []int
	for j := range replies {
		switch r := &replies[j]; {
		case isAsk(r.Err):
			r.Err, r.Gone, r.Migrating = nil, true, true
		case isMoved(r.Err) && !in.asking:
			moved = append(moved, j)
		case isMoved(r.Err):
			r.Err = fmt.Errorf("%w (this master imports the key's slot: reading it takes ASKING; grant +asking)", r.Err)
		}
	}
	if len(moved) == 0 {
		return
	}
	again := make([]string, len(moved))
	for i, j := range moved {
		again[i] = keys[j]
	}
	imported := Inspector{c: in.c, noIdle: in.noIdle, expireTime: in.expireTime, expiryAlone: in.expiryAlone, fenceExpiry: in.fenceExpiry, readHolder: in.readHolder,
		holderValue: in.holderValue, hashHolder: in.hashHolder, asking: true}
	read, _ := imported.Inspect(ctx, again, withType)
	for i, j := range moved {
		replies[j] = read[i]
		replies[j].Migrating = true
	}
}

// ask queues ASKING when the inspector reads imported keys: it lets the next command read a
// key of a slot this master is importing.
func (in *Inspector) ask(ctx context.Context, pipe redis.Pipeliner) {
	if in.asking {
		pipe.Do(ctx, "asking")
	}
}

// IsRedirect reports whether err is a cluster redirection (MOVED or ASK): the key's slot is
// served, or being migrated, elsewhere.
func IsRedirect(err error) bool { return isMoved(err) || isAsk(err) }

func isMoved(err error) bool {
	_, ok := redis.IsMovedError(err)
	return ok
}

func isAsk(err error) bool {
	_, ok := redis.IsAskError(err)
	return ok
}
