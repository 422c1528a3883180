package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
)

// typeHintScanCount is the COUNT of the SCAN that looks for keys of the types a namespace does not
// count.
const typeHintScanCount = 1000

// otherTypeKeys runs when a namespace counted no key: it counts the keys its pattern matches
// whose type the namespace does not count (a Redisson hash lock under a namespace that counts
// strings), with SCAN MATCH pattern TYPE t on every master, within companionTimeout. A user who
// sees "0 live keys" then learns the locks are there but of another type. typ is "" when none
// was found (or the look-up failed: a hint is not worth an error of its own).
func otherTypeKeys(ctx context.Context, client redis.UniversalClient, ns collectors.Namespace) (typ string, n int64) {
	ctx, cancel := context.WithTimeout(ctx, companionTimeout)
	defer cancel()
	for _, t := range []string{collectors.TypeString, collectors.TypeHash} {
		if slices.Contains(ns.Types, t) || (len(ns.Types) == 0 && t == collectors.TypeString) {
			continue
		}
		var count atomic.Int64
		scan := func(ctx context.Context, c *redis.Client) error {
			var cursor uint64
			for {
				keys, next, err := c.ScanType(ctx, cursor, ns.Pattern, typeHintScanCount, t).Result()
				if err != nil {
					return err
				}
				count.Add(int64(len(keys)))
				if cursor = next; cursor == 0 {
					return nil
				}
			}
		}
		var err error
		switch c := client.(type) {
		case *redis.ClusterClient:
			err = c.ForEachMaster(ctx, scan)
		case *redis.Client:
			err = scan(ctx, c)
		default:
			err = errors.ErrUnsupported
		}
		if err == nil && count.Load() > 0 {
			return t, count.Load()
		}
	}
	return "", 0
}

// typeHint is the note inspect prints for otherTypeKeys' finding.
func typeHint(ns collectors.Namespace, typ string, n int64) string {
	return fmt.Sprintf("note: pattern %q matches %d %s %s, which namespace %q does not count: declare --type %s (types: [%s] in the config file)",
		ns.Pattern, n, typ, plural(n, "key", "keys"), ns.Name, typ, typ)
}
