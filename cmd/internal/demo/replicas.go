package demo

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/lease"
)

// replica is one simulated worker process: its own connection pool behind its own link, and
// its own lease.Client (so local mutexes and renewers are per process, as in production).
type replica struct {
	name  string
	link  *link
	rdb   *redis.Client
	locks map[string]*lease.Namespace
	// freezeNext, when positive, is a pause the replica's next critical section suffers.
	freezeNext atomic.Int64
}

// addReplicas connects two replicas, -a and -b, of each service.
func (w *Workload) addReplicas() error {
	for _, service := range []string{"scheduler", "workflow", "approval", "reconciler", "snapshot"} {
		for _, suffix := range []string{"-a", "-b"} {
			if err := w.addReplica(service + suffix); err != nil {
				return err
			}
		}
	}
	return nil
}

// addReplica connects one replica behind its own link and declares every namespace on its own
// lease.Client.
func (w *Workload) addReplica(name string) error {
	ro := *w.redisOpts
	r := &replica{name: name, link: &link{}, locks: map[string]*lease.Namespace{}}
	r.rdb = redis.NewClient(&ro)
	r.rdb.AddHook(r.link)
	w.replicas[name] = r
	// Each replica names itself as the holder, so inspect's HOLDER column and the exporter's
	// lock_key_holder_info show which replica holds a stale lock.
	holder := fmt.Sprintf("%s pid %d", name, os.Getpid())
	c, err := lease.New(r.rdb, lease.Options{Registerer: w.reg, Logger: w.opts.Logger.With("replica", name), Holder: holder})
	if err != nil {
		return err
	}
	for _, ns := range w.namespaces {
		if ns.client != leaseClient {
			continue
		}
		policy := ns.policy
		policy.RecordHolder = true
		l, err := c.Declare(ns.Name, policy)
		if err != nil {
			return fmt.Errorf("demo: namespace %s: %w", ns.Name, err)
		}
		r.locks[ns.Name] = l
	}
	return nil
}

// redisOptions accepts host:port or a redis:// or rediss:// URL.
func redisOptions(addr, password string) (*redis.Options, error) {
	ro := &redis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		var err error
		if ro, err = redis.ParseURL(addr); err != nil {
			return nil, fmt.Errorf("demo: Redis URL: %v", err)
		}
	}
	// Without it go-redis ignores context deadlines on the wire, and renew timeouts would not
	// bound anything (see the lease package).
	ro.ContextTimeoutEnabled = true
	if password != "" && ro.Password == "" {
		ro.Password = password
	}
	// A failed command is reported as it failed: retries would blur the injected faults.
	ro.MaxRetries = -1
	return ro, nil
}
