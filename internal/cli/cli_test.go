package cli

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/exporterconfig"
)

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{
		"redis.addr":         "LOCK_EXPORTER_REDIS_ADDR",
		"web.listen-address": "LOCK_EXPORTER_WEB_LISTEN_ADDRESS",
		"duration":           "LOCK_EXPORTER_DURATION",
	} {
		if got := EnvName(flag); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", flag, got, want)
		}
	}
}

// TestParseWithEnv checks the precedence both commands rely on: a flag given wins over its
// variable, a variable fills a flag not given, and a bad variable names itself.
func TestParseWithEnv(t *testing.T) {
	vars := map[string]string{"LOCK_EXPORTER_REDIS_ADDR": "env:1", "LOCK_EXPORTER_DURATION": "3s"}
	fs := NewFlagSet("test")
	addr := fs.String("redis.addr", "", "")
	d := fs.Duration("duration", 0, "")
	if err := ParseWithEnv(fs, []string{"--redis.addr", "flag:1"}, func(k string) string { return vars[k] }); err != nil {
		t.Fatal(err)
	}
	if *addr != "flag:1" || *d != 3*time.Second {
		t.Errorf("redis.addr %q, duration %v: want flag:1 (flag) and 3s (environment)", *addr, *d)
	}

	vars["LOCK_EXPORTER_DURATION"] = "soon"
	fs = NewFlagSet("test")
	fs.Duration("duration", 0, "")
	err := ParseWithEnv(fs, nil, func(k string) string { return vars[k] })
	if err == nil || UsageMessage(err) != `LOCK_EXPORTER_DURATION="soon": invalid argument "soon" for "--duration" flag: time: invalid duration "soon"` {
		t.Errorf("bad variable: %v", err)
	}
}

func TestUsageMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errors.New(`invalid argument "x" for "--scan.batch-size" flag: strconv.ParseInt: parsing "x": invalid syntax`), `--scan.batch-size "x": not a number`},
		{errors.New(`invalid argument "1e30" for "--scan.max-keys" flag: strconv.ParseInt: parsing "1e30": value out of range`), `--scan.max-keys "1e30": number out of range`},
		{fmt.Errorf("%w: no namespace configured", exporterconfig.ErrInvalid), "no namespace configured"},
		{errors.New("two\n  lines"), "two lines"},
	}
	for _, tt := range tests {
		if got := UsageMessage(tt.err); got != tt.want {
			t.Errorf("UsageMessage(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	if _, err := NewLogger(nil, "loud", "logfmt"); err == nil || err.Error() != `--log.level "loud": want debug, info, warn or error` {
		t.Errorf("bad level: %v", err)
	}
	if _, err := NewLogger(nil, "info", "xml"); err == nil || err.Error() != `--log.format "xml": want logfmt or json` {
		t.Errorf("bad format: %v", err)
	}
}
