package testkit

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TrackingClientID is the CLIENT ID of the one connection with client tracking on (flag t in
// CLIENT LIST) of the server behind c: the exporter's change feed, for a test to CLIENT KILL.
func TrackingClientID(tb testing.TB, c *redis.Client) string {
	tb.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(list, "\n") {
		fields := map[string]string{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if strings.Contains(fields["flags"], "t") {
			return fields["id"]
		}
	}
	tb.Fatalf("no tracking client in CLIENT LIST:\n%s", list)
	return ""
}
