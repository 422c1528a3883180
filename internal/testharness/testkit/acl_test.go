package testkit

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestDocumentedACLOnServer applies the documented rules to a real server: the user logs in with
// the given password, may SCAN, and may not read or delete a key.
func TestDocumentedACLOnServer(t *testing.T) {
	const password = "testkit-acl-password"
	rules := DocumentedACL(t, password)
	if slices.Contains(rules, ">CHANGE-ME") || !slices.Contains(rules, ">"+password) {
		t.Fatalf("DocumentedACL(%q) = %v: want the placeholder replaced", password, rules)
	}
	srv := redistest.Start(t)
	SetACL(t, srv, rules)
	ctx := context.Background()
	user := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: ACLUser, Password: password, DisableIdentity: true, MaxRetries: -1})
	defer user.Close()
	tests := []struct {
		cmd        []any
		wantNoPerm bool
	}{
		{[]any{"SCAN", "0"}, false},
		{[]any{"GET", "jobs:1"}, true},
		{[]any{"DEL", "jobs:1"}, true},
	}
	for _, tt := range tests {
		err := user.Do(ctx, tt.cmd...).Err()
		if err == redis.Nil {
			err = nil
		}
		if noPerm := err != nil && strings.HasPrefix(err.Error(), "NOPERM"); noPerm != tt.wantNoPerm || (!tt.wantNoPerm && err != nil) {
			t.Errorf("%v as %s: %v, want NOPERM %v", tt.cmd, ACLUser, err, tt.wantNoPerm)
		}
	}
}
