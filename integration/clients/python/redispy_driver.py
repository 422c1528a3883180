"""A driver for redis-py's redis.lock.Lock, run by lockwatch's Go test harness (integration/clients).

    /usr/bin/python3 redispy_driver.py [--cluster] HOST:PORT

With --cluster the locks are taken through redis-py's RedisCluster seeded at HOST:PORT, which
follows the cluster's MOVED and ASK redirections (a slot migrating under a held lock).

Run it with Debian's interpreter: redis-py comes from Debian's python3-redis package. It prints one
hello line naming redis-py's version (or a "missing" line and exit 3), then reads one JSON step
per stdin line and prints one JSON outcome per step, in order. A step names a holder: each holder
is its own Lock object with its own token, so one process can play several workers on one key.
Outcomes carry what the CLIENT concluded (its return value or its exception class), never the
lock's token: tokens are capabilities and stay in this process.
"""

import json
import sys

EXIT_MISSING = 3

try:
    import redis
    from redis.exceptions import LockError, LockNotOwnedError
except ImportError as err:
    print(json.dumps({"missing": "python3-redis", "detail": f"{sys.executable}: {err}"}), flush=True)
    sys.exit(EXIT_MISSING)


def emit(obj):
    print(json.dumps(obj), flush=True)


def error_outcome(result, err):
    return {"result": result, "error_type": type(err).__name__, "error": str(err)}


class Driver:
    def __init__(self, client):
        self.client = client
        self.locks = {}

    def acquire(self, holder, key, ttl_ms):
        # ttl_ms 0 is redis-py's default timeout=None: a key without expiry.
        timeout = ttl_ms / 1000 if ttl_ms else None
        lock = self.client.lock(key, timeout=timeout)
        if not lock.acquire(blocking=False):
            return {"result": "busy"}
        self.locks[(holder, key)] = lock
        return {"result": "acquired"}

    def release(self, holder, key, _ttl_ms):
        return self._call(holder, key, lambda lock: lock.release(), "released")

    def extend(self, holder, key, ttl_ms):
        # extend's default adds the time to the key's remaining TTL.
        return self._call(holder, key, lambda lock: lock.extend(ttl_ms / 1000), "extended")

    def reacquire(self, holder, key, _ttl_ms):
        # reacquire resets the TTL to the lock's timeout: a renewal too.
        return self._call(holder, key, lambda lock: lock.reacquire(), "extended")

    def _call(self, holder, key, fn, ok):
        lock = self.locks.get((holder, key))
        if lock is None:
            return {"result": "failed", "error_type": "DriverError",
                    "error": "this holder has acquired no lock on this key"}
        try:
            fn(lock)
        except LockNotOwnedError as err:
            return error_outcome("not_owned", err)
        except LockError as err:
            return error_outcome("failed", err)
        return {"result": ok}


OPS = ("acquire", "release", "extend", "reacquire")


def step(driver, line):
    s = json.loads(line)
    if s.get("op") not in OPS:
        out = {"result": "unsupported", "error_type": "DriverError",
               "error": f"op {s.get('op')!r} is not one this client has"}
    else:
        try:
            out = getattr(driver, s["op"])(s["holder"], s["key"], s.get("ttl_ms", 0))
        except redis.RedisError as err:
            out = error_outcome("failed", err)
    return {"seq": s.get("seq"), **out}


def connect(args):
    """The client the arguments name: redis.Redis at HOST:PORT, or a RedisCluster seeded there."""
    cluster = args[:1] == ["--cluster"]
    if cluster:
        args = args[1:]
    if len(args) != 1:
        print("usage: /usr/bin/python3 redispy_driver.py [--cluster] HOST:PORT", file=sys.stderr)
        sys.exit(2)
    host, _, port = args[0].rpartition(":")
    if cluster:
        from redis.cluster import RedisCluster
        return RedisCluster(host=host, port=int(port))
    return redis.Redis(host=host, port=int(port))


def main():
    client = connect(sys.argv[1:])
    try:
        client.ping()
    except redis.RedisError as err:
        print(f"redispy_driver: cannot reach Redis at {sys.argv[-1]}: {err}", file=sys.stderr)
        sys.exit(1)
    emit({"hello": {"client": "redis-py", "version": redis.__version__, "via": redis.__file__}})
    driver = Driver(client)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            emit(step(driver, line))
        except (ValueError, KeyError) as err:
            emit(error_outcome("failed", err))


if __name__ == "__main__":
    main()
