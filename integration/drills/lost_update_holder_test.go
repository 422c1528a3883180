package drills

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/lease"
	"github.com/lockwatch/lockwatch/sqlfence"
)

// holderEnv carries a holderConfig to a holder process: the drill binary started again, which
// runs holderMain instead of the tests, so that the drill can SIGSTOP a real process.
const holderEnv = "LOCKWATCH_DRILL_HOLDER"

// Where a holder keeps the counter it increments.
const (
	storeBeside   = "beside"   // in the lock's Redis, in the lock's slot: FencedSet
	storeRedis    = "redis"    // in another redis-server: Guard.Claim, Guard.Set
	storePostgres = "postgres" // in PostgreSQL: sqlfence Guard.Claim, Guard.Update
)

// holderConfig is one holder process's work.
type holderConfig struct {
	Name      string
	LockAddr  string
	Store     string
	StoreAddr string // the data redis-server, or PostgreSQL's DSN
	LockKey   string
	DataKey   string // the Redis key, or the PostgreSQL row's key
	Until     time.Time
	// NoClaim skips the claim at acquisition, and beside the lock writes through a Guard rather
	// than FencedSet: weaker guards that lose updates, so the drill can show that it detects the
	// lost updates it counts.
	NoClaim bool
}

// holderTally is what a holder process reports on its last line of output.
type holderTally struct {
	Acquired, Applied, Rejected, ClaimRejected, Errors int
}

// holderPolicy is short, so that pauses of a few hundred milliseconds outlive leases.
var holderPolicy = lease.Policy{TTL: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond,
	RenewTimeout: 80 * time.Millisecond, MaxRenewFailures: 2, AcquireTimeout: 500 * time.Millisecond,
	RetryBackoff: 5 * time.Millisecond, ReleaseTimeout: 300 * time.Millisecond, Fencing: true}

// holderWork bounds the work between a holder's read and its write: long enough that a fault
// often lands inside it and the holder writes after a restart has freed its lock and another
// holder took it (a restart takes tens of milliseconds), yet shorter than the TTL.
const holderWork = 150 * time.Millisecond

// holderMain runs a holder process: until cfg.Until it takes the lock and increments the
// counter by reading it and writing it back plus one, through the store's fencing guard. It
// never looks at its lease's context, as a process resumed after a stop does not, so only the
// guard stands between a stale read and a lost update.
func holderMain(raw string) int {
	var cfg holderConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "holder: bad config:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.LockAddr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	c, err := lease.New(rdb, lease.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		return 1
	}
	defer c.Close()
	ns, err := c.Declare("counter", holderPolicy)
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		return 1
	}
	st, err := openCounterStore(cfg, ns, rdb)
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		return 1
	}
	defer st.close()
	var tl holderTally
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	ctx := context.Background()
	for time.Now().Before(cfg.Until) {
		l, err := ns.Acquire(ctx, cfg.LockKey)
		if err != nil {
			time.Sleep(time.Duration(rng.Int64N(int64(5 * time.Millisecond))))
			continue
		}
		tl.Acquired++
		tl.increment(ctx, st, cfg, l, rng)
		_ = l.Release(ctx)
	}
	out, _ := json.Marshal(tl)
	fmt.Println(string(out))
	return 0
}

// increment is one read-modify-write under lease l.
func (tl *holderTally) increment(ctx context.Context, st *counterStore, cfg holderConfig, l *lease.Lease, rng *rand.Rand) {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if !cfg.NoClaim {
		if err := st.claim(wctx, l.Fence()); err != nil {
			tl.count(err, &tl.ClaimRejected)
			return
		}
	}
	v, err := st.read(wctx)
	if err != nil {
		tl.Errors++
		return
	}
	// The work between the read and the write, where a stop hurts most.
	time.Sleep(time.Duration(rng.Int64N(int64(holderWork))))
	if err := st.write(wctx, l, v+1); err != nil {
		tl.count(err, &tl.Rejected)
		return
	}
	tl.Applied++
}

func (tl *holderTally) count(err error, stale *int) {
	if errors.Is(err, lease.ErrStaleFence) {
		*stale++
	} else {
		tl.Errors++
	}
}

// counterStore is the counter in one of the three stores, behind its fencing guard.
type counterStore struct {
	cfg   holderConfig
	ns    *lease.Namespace
	lock  *redis.Client // the lock's Redis (storeBeside)
	data  *redis.Client // storeRedis
	guard *lease.Guard  // storeRedis
	db    *sql.DB       // storePostgres
	rows  *sqlfence.Guard
}

func openCounterStore(cfg holderConfig, ns *lease.Namespace, lock *redis.Client) (*counterStore, error) {
	st := &counterStore{cfg: cfg, ns: ns, lock: lock}
	switch cfg.Store {
	case storeBeside:
	case storeRedis:
		st.data = redis.NewClient(&redis.Options{Addr: cfg.StoreAddr, ContextTimeoutEnabled: true})
		st.guard = ns.Guard(st.data)
	case storePostgres:
		db, err := sql.Open("pgx", cfg.StoreAddr)
		if err != nil {
			return nil, err
		}
		st.db = db
		st.rows, err = sqlfence.New(counterTable, ns, "counter")
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown store %q", cfg.Store)
	}
	return st, nil
}

// counterTable holds the PostgreSQL counter; counterSchema creates it with a trigger that counts,
// in the same transaction as each guarded UPDATE that lands, the writes applied, so the store
// itself says how many increments it took.
var counterTable = sqlfence.Table{Name: "counters", KeyColumn: "id", FenceColumn: "fence"}

const counterSchema = `
CREATE TABLE counters (id text PRIMARY KEY, counter bigint NOT NULL DEFAULT 0, applied bigint NOT NULL DEFAULT 0,
	fence bigint NOT NULL DEFAULT 0);
CREATE FUNCTION count_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.applied := OLD.applied + 1; RETURN NEW; END $$;
CREATE TRIGGER count_applied BEFORE UPDATE OF counter ON counters FOR EACH ROW EXECUTE FUNCTION count_applied();
`

func (st *counterStore) close() {
	if st.data != nil {
		_ = st.data.Close()
	}
	if st.db != nil {
		_ = st.db.Close()
	}
}

func (st *counterStore) claim(ctx context.Context, fence int64) error {
	switch st.cfg.Store {
	case storeRedis:
		return st.guard.Claim(ctx, fence, st.cfg.DataKey)
	case storePostgres:
		return st.rows.Claim(ctx, st.db, fence, st.cfg.DataKey)
	}
	return nil // beside the lock, the lock's fence key is the claim
}

func (st *counterStore) read(ctx context.Context) (int64, error) {
	switch st.cfg.Store {
	case storePostgres:
		var v int64
		err := st.db.QueryRowContext(ctx, `SELECT counter FROM counters WHERE id = $1`, st.cfg.DataKey).Scan(&v)
		return v, err
	case storeRedis:
		return getInt(ctx, st.data, st.cfg.DataKey)
	}
	return getInt(ctx, st.lock, st.cfg.DataKey)
}

func getInt(ctx context.Context, rdb *redis.Client, key string) (int64, error) {
	s, err := rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func (st *counterStore) write(ctx context.Context, l *lease.Lease, v int64) error {
	switch st.cfg.Store {
	case storeRedis:
		return st.guard.Set(ctx, l.Fence(), st.cfg.DataKey, v, 0)
	case storePostgres:
		return st.rows.Update(ctx, st.db, l.Fence(), st.cfg.DataKey, v)
	}
	if st.cfg.NoClaim {
		// The guard of old: compare with the fence of the last write only.
		return st.ns.Guard(nil).Set(ctx, l.Fence(), st.cfg.DataKey, v, 0)
	}
	return st.ns.FencedSet(ctx, l.Key(), l.Fence(), st.cfg.DataKey, v, 0)
}
