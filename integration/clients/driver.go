package clients

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Kind names a lock client.
type Kind string

// The lock clients this package drives.
const (
	RedisPy        Kind = "redis-py"
	Redlock        Kind = "redlock"
	RedisSemaphore Kind = "redis-semaphore"
	Redisson       Kind = "redisson"
)

// Kinds lists every client kind, for tests that run one case per client.
func Kinds() []Kind { return []Kind{RedisPy, Redlock, RedisSemaphore, Redisson} }

// Op is what a step asks the client to do.
type Op string

// The steps a driver takes. Every client has acquire, release and extend; reacquire is
// redis-py's own.
const (
	// OpAcquire tries once, without waiting: a key held by another holder answers Busy.
	OpAcquire Op = "acquire"
	// OpRelease releases the holder's lock.
	OpRelease Op = "release"
	// OpExtend renews the holder's lock the way the client renews: redis-py's extend adds TTL to
	// the remaining time; redlock's extend sets the expiry to TTL; redis-semaphore's refresh and
	// Redisson's watchdog renewal reset it to the lease the lock was acquired with (TTL unused).
	OpExtend Op = "extend"
	// OpReacquire is redis-py's reacquire: the expiry reset to the lock's timeout.
	OpReacquire Op = "reacquire"
)

// Step is one scripted call of a client.
type Step struct {
	Op Op
	// Holder names a lock object inside the driver, with its own token: one driver can play
	// several workers. Holder names are the test's, never the client's token.
	Holder string
	// Key is the name given to the client; redis-semaphore stores it as mutex:<Key>.
	Key string
	// TTL is the lease for OpAcquire (0: redis-py's timeout=None, a key without expiry; Redisson's
	// watchdog lease of 30 s) and the time for OpExtend.
	TTL time.Duration
}

// Result is what the client concluded from one step.
type Result string

// The results a step can have.
const (
	Acquired Result = "acquired"
	// Reentered is a Redisson holder acquiring the lock it holds: its count goes up and its
	// expiry is reset.
	Reentered Result = "reentered"
	Busy      Result = "busy"
	Released  Result = "released"
	// Decremented is a Redisson unlock of a re-entered lock: its count goes down and its expiry
	// is reset, the lock stays held.
	Decremented Result = "decremented"
	Extended    Result = "extended"
	// NotOwned is the client's own verdict that the lock is no longer its holder's: redis-py's
	// LockNotOwnedError, redlock's ExecutionError, redis-semaphore's LostLockError, Redisson's
	// IllegalMonitorStateException or a failed watchdog renewal.
	NotOwned Result = "not_owned"
	// Failed is any other error (ErrorType and Error say which); Unsupported an op the client
	// does not have.
	Failed      Result = "failed"
	Unsupported Result = "unsupported"
)

// Outcome is a step's result as the client reported it.
type Outcome struct {
	Result Result `json:"result"`
	// ErrorType is the class of the client's error (LockNotOwnedError, ExecutionError, …).
	ErrorType string `json:"error_type,omitempty"`
	// Error is the client's error message; clients' messages carry no token.
	Error string `json:"error,omitempty"`
}

func (o Outcome) String() string {
	if o.ErrorType == "" {
		return string(o.Result)
	}
	return fmt.Sprintf("%s (%s: %s)", o.Result, o.ErrorType, o.Error)
}

// Driver is one running lock client.
type Driver interface {
	Kind() Kind
	// Version names the client and its version, e.g. "redlock 5.0.0-beta.2 (ioredis 5.11.1)".
	Version() string
	// Do takes one step and returns what the client concluded. An error means the driver
	// itself failed (it died, or ctx ended); the client's own errors are outcomes.
	Do(ctx context.Context, s Step) (Outcome, error)
	Close() error
}

// ErrClientMissing is returned when a client's package is not installed; its message names the
// package and the command that installs it.
var ErrClientMissing = errors.New("lock client not installed")

// ErrDriver is returned when a driver process misbehaves: exits, or answers out of protocol.
var ErrDriver = errors.New("lock client driver failed")

// Env says where this machine's clients are.
type Env struct {
	// Dir is integration/clients of the checkout: python/ and node/ (with its node_modules).
	Dir string
	// Python is the interpreter that has Debian's python3-redis.
	Python string
	// Node is the node binary.
	Node string
}

// DefaultEnv is the checkout's integration/clients with Debian's /usr/bin/python3 (PATH's
// python3 may be another build without Debian's packages) and node from PATH.
func DefaultEnv() (Env, error) {
	root, err := testkit.FindRepoRoot()
	if err != nil {
		return Env{}, err
	}
	return Env{Dir: filepath.Join(root, "integration", "clients"), Python: "/usr/bin/python3", Node: "node"}, nil
}

// Launch starts a driver of kind against the Redis at addr.
func (e Env) Launch(ctx context.Context, kind Kind, addr string) (Driver, error) {
	switch kind {
	case RedisPy:
		return launchProcess(ctx, kind, redisPyCommand(e, addr))
	case Redlock, RedisSemaphore:
		cmd, err := nodeCommand(e, kind, addr)
		if err != nil {
			return nil, err
		}
		return launchProcess(ctx, kind, cmd)
	case Redisson:
		return newRedissonDriver(ctx, redis.NewClient(&redis.Options{Addr: addr}))
	}
	return nil, fmt.Errorf("unknown lock client kind %q (have %v)", kind, Kinds())
}

// ClusterKinds lists the client kinds this package drives on a Redis Cluster, each through a
// cluster client that follows MOVED and ASK, so a lock stays its holder's while its slot
// migrates.
func ClusterKinds() []Kind { return []Kind{RedisPy, Redisson} }

// ErrNoClusterDriver is returned for a client kind this package does not drive on a Redis
// Cluster (the node clients' cluster mode is not wired up).
var ErrNoClusterDriver = errors.New("lock client not driven on a Redis Cluster")

// LaunchCluster starts a driver of kind against the Redis Cluster whose node is at seed:
// redis-py through its RedisCluster, Redisson's replay through a go-redis ClusterClient. Both
// follow MOVED and ASK redirections, as a cluster client must while slots migrate.
func (e Env) LaunchCluster(ctx context.Context, kind Kind, seed string) (Driver, error) {
	switch kind {
	case RedisPy:
		cmd := redisPyCommand(e, seed)
		cmd.Args = slices.Insert(cmd.Args, len(cmd.Args)-1, "--cluster")
		return launchProcess(ctx, kind, cmd)
	case Redisson:
		return newRedissonDriver(ctx, redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed}}))
	}
	return nil, fmt.Errorf("%w: %s (have %v)", ErrNoClusterDriver, kind, ClusterKinds())
}

// Start launches a driver of kind against addr for the test and closes it when the test ends.
// A client that is not installed fails the test with one line saying what to install.
func Start(tb testing.TB, kind Kind, addr string) Driver {
	tb.Helper()
	return start(tb, kind, func(env Env) (Driver, error) { return env.Launch(tb.Context(), kind, addr) })
}

// StartCluster is Start against the Redis Cluster whose node is at seed (LaunchCluster).
func StartCluster(tb testing.TB, kind Kind, seed string) Driver {
	tb.Helper()
	return start(tb, kind, func(env Env) (Driver, error) { return env.LaunchCluster(tb.Context(), kind, seed) })
}

func start(tb testing.TB, kind Kind, launch func(Env) (Driver, error)) Driver {
	tb.Helper()
	env, err := DefaultEnv()
	if err != nil {
		tb.Fatalf("clients: %v", err)
	}
	d, err := launch(env)
	if err != nil {
		tb.Fatalf("clients: %v", err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("clients: close %s: %v", kind, err)
		}
	})
	return d
}
