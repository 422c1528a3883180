package observe

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func prometheusRegistry() *prometheus.Registry { return prometheus.NewRegistry() }

// Scripts in the shapes lock libraries use, written for these tests.
const (
	testRelease = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
	testRefresh = "local v = redis.call(\"get\", KEYS[1])\nif v == ARGV[1] then return redis.call(\"pexpire\", KEYS[1], ARGV[2]) end\nreturn 0"
	testAcquire = `return redis.call("SET", KEYS[1], ARGV[1], "NX", "EX", ARGV[2])`
	testMulti   = `if redis.call("msetnx", unpack(KEYS)) == 1 then for _, k in ipairs(KEYS) do redis.call("pexpire", k, ARGV[2]) end return 1 end return 0`
	testOther   = `return redis.call("INCR", KEYS[1])`
)

func TestClassifyBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want scriptInfo
	}{
		{"compare and delete", testRelease, scriptInfo{op: opRelease}},
		{"compare and pexpire", testRefresh, scriptInfo{op: opRefresh, ttlArg: 2, ttl: ttlRelMillis}},
		{"set nx ex", testAcquire, scriptInfo{op: opAcquire, ttlArg: 2, ttl: ttlRelSeconds}},
		{"msetnx, expiry in a loop over KEYS", testMulti, scriptInfo{op: opAcquire, ttlArg: 2, ttl: ttlRelMillis}},
		{"mget compare and delete", "local vs = redis.call('MGET', KEYS[1], KEYS[2]) if vs[1] == ARGV[1] then return redis.call('DEL', KEYS[1], KEYS[2]) end", scriptInfo{op: opRelease}},
		{"incr is not a lock", testOther, scriptInfo{}},
		{"delete without compare is not a release", `return redis.call("DEL", KEYS[1])`, scriptInfo{}},
		{"pexpireat", `if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("PEXPIREAT",KEYS[1],ARGV[2]) end return 0`, scriptInfo{op: opRefresh, ttlArg: 2, ttl: ttlAbsMillis}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyBody(tt.body); got != tt.want {
				t.Fatalf("classifyBody = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBeginRecognises(t *testing.T) {
	tests := []struct {
		name string
		args []string
		op   opKind // opNone: not recognised
		keys int
	}{
		{"set nx px", []string{"set", "jobs:1", "v", "NX", "PX", "1000"}, opAcquire, 1},
		{"set px nx (go-redis SetNX order)", []string{"set", "jobs:1", "v", "px", "1000", "nx"}, opAcquire, 1},
		{"set nx ex", []string{"SET", "jobs:1", "v", "nx", "ex", "10"}, opAcquire, 1},
		{"set nx pxat", []string{"set", "jobs:1", "v", "nx", "pxat", "1700000001000"}, opAcquire, 1},
		{"set without nx", []string{"set", "jobs:1", "v", "px", "1000"}, opNone, 0},
		{"set nx without expiry", []string{"set", "jobs:1", "v", "nx"}, opNone, 0},
		{"set nx get", []string{"set", "jobs:1", "v", "nx", "px", "10", "get"}, opNone, 0},
		{"set xx", []string{"set", "jobs:1", "v", "xx", "px", "10"}, opNone, 0},
		{"set nx px with a bad number", []string{"set", "jobs:1", "v", "nx", "px", "ten"}, opNone, 0},
		{"set nx px dangling", []string{"set", "jobs:1", "v", "nx", "ex"}, opNone, 0},
		{"key outside every namespace", []string{"set", "cache:1", "v", "nx", "px", "1000"}, opNone, 0},
		{"eval release", []string{"eval", testRelease, "1", "jobs:1", "v"}, opRelease, 1},
		{"eval multi-key acquire", []string{"eval", testMulti, "2", "jobs:1", "jobs:2", "v", "1000"}, opAcquire, 2},
		{"eval unrelated script", []string{"eval", testOther, "1", "jobs:1"}, opNone, 0},
		{"eval without argv", []string{"eval", testRelease, "1", "jobs:1"}, opNone, 0},
		{"eval with a bad numkeys", []string{"eval", testRelease, "x", "jobs:1", "v"}, opNone, 0},
		{"evalsha of redsync's touch", []string{"evalsha", "d75bb8b5bd13532ddedd17762e772346e39b321e", "1", "jobs:1", "v", "8000"}, opRefresh, 1},
		{"evalsha upper case", []string{"EVALSHA", "D75BB8B5BD13532DDEDD17762E772346E39B321E", "1", "jobs:1", "v", "8000"}, opRefresh, 1},
		{"evalsha unknown", []string{"evalsha", "0000000000000000000000000000000000000000", "1", "jobs:1", "v"}, opNone, 0},
		{"get", []string{"get", "jobs:1", "x"}, opNone, 0},
		{"too short", []string{"set"}, opNone, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, _ := newTestObserver(t, Options{})
			c := o.Begin(StringArgs(tt.args))
			if tt.op == opNone {
				if c != nil {
					t.Fatalf("recognised %v as op %d", tt.args, c.op)
				}
				return
			}
			if c == nil || c.op != tt.op || len(c.keys()) != tt.keys {
				t.Fatalf("Begin(%v) = %+v, want op %d with %d keys", tt.args, c, tt.op, tt.keys)
			}
		})
	}
}

func TestScriptShasAreLearned(t *testing.T) {
	sha := func(body string) string { s := sha1.Sum([]byte(body)); return hex.EncodeToString(s[:]) }
	tests := []struct {
		name  string
		learn []string
	}{
		{"from SCRIPT LOAD", []string{"script", "load", testRelease}},
		{"from EVAL", []string{"eval", testRelease, "1", "jobs:1", "v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, _ := newTestObserver(t, Options{})
			evalsha := StringArgs{"evalsha", sha(testRelease), "1", "jobs:1", "v"}
			if o.Begin(evalsha) != nil {
				t.Fatal("an unknown script's sha was recognised before its body passed")
			}
			o.Begin(StringArgs(tt.learn))
			if c := o.Begin(evalsha); c == nil || c.op != opRelease {
				t.Fatalf("evalsha after the body passed = %+v, want a release", c)
			}
			if o.Begin(StringArgs{"evalsha", sha(testOther), "1", "jobs:1", "v"}) != nil {
				t.Fatal("a non-lock script's sha was learned")
			}
		})
	}
}

func TestLearnedScriptsAreBounded(t *testing.T) {
	o, _, _ := newTestObserver(t, Options{})
	for i := range 3 * maxLearned {
		o.Begin(StringArgs{"script", "load", testRelease + " -- " + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i), byte(i >> 8)})})
	}
	if n := len(o.scripts.learned); n > maxLearned {
		t.Fatalf("learned %d scripts, cap %d", n, maxLearned)
	}
	if n := len(o.scripts.bodies); n > maxLearned {
		t.Fatalf("cached %d bodies, cap %d", n, maxLearned)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"no namespaces", Options{}, ErrNoNamespace},
		{"empty name", Options{Namespaces: []Namespace{{Pattern: "x:*"}}}, ErrBadNamespace},
		{"empty pattern", Options{Namespaces: []Namespace{{Name: "x"}}}, ErrBadNamespace},
		{"duplicate", Options{Namespaces: []Namespace{{Name: "x", Pattern: "a"}, {Name: "x", Pattern: "b"}}}, ErrBadNamespace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Registerer = prometheusRegistry()
			if _, err := New(tt.opts); !errors.Is(err, tt.want) {
				t.Fatalf("New = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := New(Options{Namespaces: []Namespace{{Name: "x", Pattern: "x"}}}); !errors.Is(err, ErrNoRegisterer) {
		t.Fatalf("New without a registerer = %v", err)
	}
}
