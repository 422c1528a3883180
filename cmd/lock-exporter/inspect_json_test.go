package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// inspectJSONFields is the contract docs/exporter.md documents for inspect --output json: each
// field and the JSON types it may take ("null" where a value can be absent or unreadable).
var inspectJSONFields = map[string][]string{
	"namespace": {"string"}, "pattern": {"string"}, "keys": {"number"}, "keys_without_ttl": {"number"},
	"fence_keys": {"number"}, "min_ttl_seconds": {"number", "null"}, "scan_seconds": {"number"},
	"complete": {"bool"}, "truncated": {"bool"}, "partial": {"bool"}, "error": {"string", "null"},
	"fence_error": {"string", "null"}, "holder_error": {"string", "null"}, "keys_listed": {"array"},
}

var inspectJSONKeyFields = map[string][]string{
	"key": {"string"}, "ttl_seconds": {"number", "null"}, "idle_seconds": {"number", "null"},
	"fence": {"number", "null"}, "holder": {"string", "null"},
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	}
	return "object"
}

// checkJSONContract fails when the report has a field the contract does not list, lacks one, or
// gives one a type the contract does not allow.
func checkJSONContract(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var rep map[string]any
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, out)
	}
	check := func(where string, obj map[string]any, fields map[string][]string) {
		for name, types := range fields {
			v, ok := obj[name]
			if !ok {
				t.Errorf("%s: field %q missing", where, name)
				continue
			}
			if got := jsonType(v); !strings.Contains(strings.Join(types, " "), got) {
				t.Errorf("%s: field %q is %s (%v), want %v", where, name, got, v, types)
			}
		}
		for name := range obj {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s: field %q is not in the documented contract", where, name)
			}
		}
	}
	check("report", rep, inspectJSONFields)
	listed, _ := rep["keys_listed"].([]any)
	for _, k := range listed {
		obj, _ := k.(map[string]any)
		check("keys_listed", obj, inspectJSONKeyFields)
	}
	return rep
}

// TestInspectJSONContract checks the values scripts read: a fence is a number, a missing fence
// or holder is null (never "-"), and so is the error of a complete scan.
func TestInspectJSONContract(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedLocks(t, c, map[string]seed{"jobs:fenced": {ttl: time.Minute, idle: 100}, "jobs:plain": {ttl: time.Minute, idle: 50}})
	if err := c.Set(context.Background(), lockkeys.Fence("jobs:fenced"), "1795680971775416", 0).Err(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}, "inspect", "--namespace", "jobs=jobs:*", "--output", "json")
	if code != exitOK {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	rep := checkJSONContract(t, stdout)
	if rep["error"] != nil || rep["fence_error"] != nil || rep["holder_error"] != nil {
		t.Errorf("errors of a clean scan: %v, %v, %v; want null", rep["error"], rep["fence_error"], rep["holder_error"])
	}
	if rep["fence_keys"] != json.Number("1") {
		t.Errorf("fence_keys = %v, want 1", rep["fence_keys"])
	}
	listed := rep["keys_listed"].([]any)
	if len(listed) != 2 {
		t.Fatalf("%d keys listed, want 2", len(listed))
	}
	fenced, plain := listed[0].(map[string]any), listed[1].(map[string]any)
	if fenced["key"] != "jobs:fenced" || fenced["fence"] != json.Number("1795680971775416") || fenced["holder"] != nil {
		t.Errorf("fenced row %v, want fence 1795680971775416 as a number and holder null", fenced)
	}
	if plain["key"] != "jobs:plain" || plain["fence"] != nil || plain["holder"] != nil {
		t.Errorf("plain row %v, want fence and holder null", plain)
	}
}
