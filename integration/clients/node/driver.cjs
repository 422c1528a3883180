// A driver for node's Redis lock clients, run by lockwatch's Go test harness (integration/clients).
//
//   node driver.cjs redlock|redis-semaphore HOST:PORT
//
// It prints one hello line naming the client and its version (or a "missing" line and exit 3),
// then reads one JSON step per stdin line and prints one JSON outcome per step, in order. A step
// names a holder: each holder is its own lock object with its own token, so one process can play
// several workers on one key. Outcomes carry what the CLIENT concluded (its return value or its
// error class), never the lock's value: tokens are capabilities and stay in this process.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");

const EXIT_MISSING = 3;

// requirePinned loads a package from this directory's node_modules and checks that the installed
// version is the one package.json pins, so a stale node_modules fails as loudly as a missing one.
function requirePinned(name) {
  const pins = require(path.join(__dirname, "package.json")).dependencies;
  let installed;
  try {
    // Read from the file: packages with an "exports" map (redlock) do not export package.json.
    const manifest = path.join(__dirname, "node_modules", name, "package.json");
    installed = JSON.parse(fs.readFileSync(manifest, "utf8")).version.replace(/^v/, "");
  } catch (err) {
    missing(name, `${name} is not installed in ${__dirname}/node_modules`);
  }
  if (installed !== pins[name]) {
    missing(name, `${name} ${installed} is installed where package.json pins ${pins[name]}`);
  }
  return { module: require(name), version: installed };
}

function missing(name, detail) {
  process.stdout.write(JSON.stringify({ missing: name, detail }) + "\n");
  process.exit(EXIT_MISSING);
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

// errorType is the error's class: its name, or its constructor's where the class leaves name
// as Error (redis-semaphore's LostLockError).
function errorType(err) {
  if (err.name && err.name !== "Error") return err.name;
  return (err.constructor && err.constructor.name) || "Error";
}

function errorOutcome(result, err) {
  return { result, error_type: errorType(err), error: String(err.message || err) };
}

// redlockVerdict says what redlock's ExecutionError means: every vote against was a
// ResourceLockedError (the key holds another value, or none) or the lock had expired by the
// client's own clock before it asked Redis (no attempts): the lock is not this holder's.
async function redlockVerdict(err) {
  if (err.name !== "ExecutionError") return "failed";
  const attempts = await Promise.all(err.attempts || []);
  if (attempts.length === 0) return "not_owned";
  const against = attempts.flatMap((a) => [...a.votesAgainst.values()]);
  const locked = against.length > 0 && against.every((e) => e.name === "ResourceLockedError");
  return locked ? "not_owned" : "failed";
}

function redlockClient(redis) {
  const { module: redlock, version } = requirePinned("redlock");
  const Redlock = redlock.default || redlock;
  // retryCount 0: one attempt per step, so a busy key answers at once and the test decides
  // the order of events instead of redlock's retry timer.
  const rl = new Redlock([redis], { retryCount: 0 });
  const locks = new Map();
  return {
    version,
    async acquire(id, key, ttl) {
      try {
        locks.set(id, await rl.acquire([key], ttl));
        return { result: "acquired" };
      } catch (err) {
        const verdict = await redlockVerdict(err);
        return verdict === "not_owned" ? { result: "busy" } : errorOutcome("failed", err);
      }
    },
    async release(id) {
      const lock = locks.get(id);
      if (!lock) return noLock();
      try {
        await lock.release();
        return { result: "released" };
      } catch (err) {
        return errorOutcome(await redlockVerdict(err), err);
      }
    },
    async extend(id, key, ttl) {
      const lock = locks.get(id);
      if (!lock) return noLock();
      try {
        // extend returns a new Lock and invalidates the old one; the holder keeps the new one.
        locks.set(id, await lock.extend(ttl));
        return { result: "extended" };
      } catch (err) {
        return errorOutcome(await redlockVerdict(err), err);
      }
    },
  };
}

function semaphoreClient(redis) {
  const { module: semaphore, version } = requirePinned("redis-semaphore");
  const mutexes = new Map();
  return {
    version,
    async acquire(id, key, ttl) {
      const holder = { lost: null };
      // refreshInterval 0: no refresh timer; the test runs the refresh as an extend step.
      holder.mutex = new semaphore.Mutex(redis, key, {
        lockTimeout: ttl,
        acquireAttemptsLimit: 1,
        refreshInterval: 0,
        onLockLost: (err) => {
          holder.lost = err;
        },
      });
      if (!(await holder.mutex.tryAcquire())) return { result: "busy" };
      mutexes.set(id, holder);
      return { result: "acquired" };
    },
    async release(id) {
      const holder = mutexes.get(id);
      if (!holder) return noLock();
      // redis-semaphore's release resolves whether or not the key still held its identifier.
      await holder.mutex.release();
      return { result: "released" };
    },
    async extend(id) {
      const holder = mutexes.get(id);
      if (!holder) return noLock();
      if (holder.lost) return errorOutcome("not_owned", holder.lost);
      if (!holder.mutex.isAcquired) return noLock();
      // _processRefresh is the function redis-semaphore's refresh timer runs: it re-sets the
      // key's expiry to lockTimeout while the identifier matches, and else calls onLockLost with
      // a LostLockError. Running it here puts the refresh at a scripted point.
      await holder.mutex._processRefresh();
      if (holder.lost) return errorOutcome("not_owned", holder.lost);
      return { result: "extended" };
    },
  };
}

function noLock() {
  return { result: "failed", error_type: "DriverError", error: "this holder holds no lock on this key (never acquired, or released)" };
}

const clients = { redlock: redlockClient, "redis-semaphore": semaphoreClient };

async function connect(addr) {
  const { module: ioredis, version } = requirePinned("ioredis");
  const Redis = ioredis.default || ioredis;
  const [host, port] = [addr.slice(0, addr.lastIndexOf(":")), Number(addr.slice(addr.lastIndexOf(":") + 1))];
  // No reconnecting: a driver that loses Redis fails its test instead of retrying behind it.
  const redis = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  // Unheard, ioredis' error events end node; each failed command reports its own error, and the
  // last event says why a connection failed.
  let lastError;
  redis.on("error", (err) => {
    lastError = err;
  });
  try {
    await redis.connect();
  } catch (err) {
    throw new Error(`cannot reach Redis at ${addr}: ${(lastError || err).message}`);
  }
  return { redis, version };
}

async function step(client, s) {
  const id = `${s.holder}\u0000${s.key}`;
  let out;
  switch (s.op) {
    case "acquire":
      out = await client.acquire(id, s.key, s.ttl_ms);
      break;
    case "release":
      out = await client.release(id);
      break;
    case "extend":
      out = await client.extend(id, s.key, s.ttl_ms);
      break;
    default:
      out = { result: "unsupported", error_type: "DriverError", error: `op ${JSON.stringify(s.op)} is not one this client has` };
  }
  return { seq: s.seq, ...out };
}

async function main() {
  const [kind, addr] = process.argv.slice(2);
  if (!clients[kind] || !addr) {
    process.stderr.write("usage: node driver.cjs redlock|redis-semaphore HOST:PORT\n");
    process.exit(2);
  }
  const { redis, version: ioredisVersion } = await connect(addr);
  const client = clients[kind](redis);
  emit({ hello: { client: kind, version: client.version, via: `ioredis ${ioredisVersion}` } });
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let s = {};
    try {
      s = JSON.parse(line);
      emit(await step(client, s));
    } catch (err) {
      emit({ seq: s.seq, ...errorOutcome("failed", err) });
    }
  }
  redis.disconnect();
}

main().catch((err) => {
  process.stderr.write(`driver.cjs: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
});
