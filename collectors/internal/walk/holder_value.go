package walk

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/companions"
)

// Lock holders, for the lifecycle's classification (internal/index/node_lifecycle.go): a string lock's value
// (redis-py's, redlock's, lease's token) or a hash lock's field names (Redisson's
// "<client uuid>:<thread id>"; its re-entry count, the field's value, is not the holder). A
// holder is a capability: it is hashed as soon as it is read and only the hash is kept, never
// exported or logged. Reading it is an optional grant (GETRANGE, HSCAN on the lock keys): a node
// refused it stops reading holders, and the lifecycle is coarser (see docs/exporter.md).

// holderFields bounds the field names one HSCAN call returns for a hash lock's holder: a
// Redisson lock has one field; a hash with more than one call returns has no holder read.
const holderFields = 16

// queueHolderValues adds, for each key that holderValue selects, a bounded read of its holder:
// the first companions.MaxValueBytes bytes of a string, one HSCAN call of a hash.
func (in *Inspector) queueHolderValues(ctx context.Context, pipe redis.Pipeliner, keys []string) {
	in.values, in.fields = in.values[:0], in.fields[:0]
	if in.holderValue == nil {
		return
	}
	for j, k := range keys {
		var value *redis.StringCmd
		var fields *redis.ScanCmd
		if !in.fences[j] {
			str, hash := in.holderValue(k)
			if str {
				in.ask(ctx, pipe)
				value = pipe.GetRange(ctx, k, 0, companions.MaxValueBytes-1)
			}
			if hash {
				in.ask(ctx, pipe)
				fields = pipe.HScan(ctx, k, 0, "", holderFields)
			}
		}
		in.values, in.fields = append(in.values, value), append(in.fields, fields)
	}
}

// holderOf sets r's holder hash from key j's read of the type r found; a refused read sets
// HolderErr. A key of another type (WRONGTYPE), or a hash with more fields than one call
// returns, leaves the holder unknown (0).
func (in *Inspector) holderOf(j int, r *KeyReply) {
	if in.holderValue == nil || j >= len(in.values) {
		return
	}
	switch {
	case r.Type == TypeString && in.values[j] != nil:
		v, err := in.values[j].Result()
		if err != nil {
			r.HolderErr = err
			return
		}
		r.HolderHash = in.hashHolder(v)
	case r.Type == TypeHash && in.fields[j] != nil:
		kv, cursor, err := in.fields[j].Result()
		if err != nil {
			r.HolderErr = err
			return
		}
		if cursor != 0 {
			return
		}
		names := make([]string, 0, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			names = append(names, kv[i])
		}
		slices.Sort(names)
		r.HolderHash = in.hashHolder(names...)
	}
}

// IsNoPerm reports whether err is an ACL refusal, of the command or of the key.
func IsNoPerm(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "NOPERM ")
}
