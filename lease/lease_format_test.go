package lease

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A lease printed or logged as a whole, as a user may do while debugging (fmt with any verb,
// slog.Any with the text or JSON handler), shows its namespace, key and fence, never its owner
// token.
func TestLeasePrintsWithoutToken(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ns := e.namespace(t, "printed", Policy{TTL: time.Second, Fencing: true})
	key := uniqueKey(t)
	l, err := ns.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("held", "lease", l)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("held", "lease", l)
	printed := map[string]string{
		"%v": fmt.Sprintf("%v", l), "%+v": fmt.Sprintf("%+v", l), "%#v": fmt.Sprintf("%#v", l),
		"Sprint": fmt.Sprint(l), "in a struct": fmt.Sprintf("%+v", struct{ L *Lease }{l}),
		"slog": logs.String(),
	}
	for how, s := range printed {
		if strings.Contains(s, l.token) {
			t.Errorf("%s prints the token: %s", how, s)
		}
		if !strings.Contains(s, key) {
			t.Errorf("%s does not name the key: %s", how, s)
		}
	}
	if s := fmt.Sprint(&Lease{}, (*Lease)(nil)); s != `lease{namespace: "", key: "", fence: 0} <nil>` {
		t.Errorf("zero and nil Lease print %q", s)
	}
}
