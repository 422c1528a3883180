package cli

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
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
	fs.Var(new(exporterconfig.Duration), "duration", "")
	err := ParseWithEnv(fs, nil, func(k string) string { return vars[k] })
	if want := `LOCK_EXPORTER_DURATION="soon": invalid duration "soon" (want e.g. 10s, 1m30s)`; err == nil || err.Error() != want {
		t.Errorf("bad variable: %v, want %s", err, want)
	}
}

// TestFlagErrors checks every kind of bad flag gets one line in this package's words, from the
// command line and from the environment alike.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"not a number", []string{"--batch", "x"}, nil, `--batch "x": not a number`},
		{"exponent", []string{"--batch", "1e30"}, nil, `--batch "1e30": not a number`},
		{"integer overflow", []string{"--batch", "99999999999999999999"}, nil, `--batch "99999999999999999999": number out of range`},
		{"not a bool", []string{"--insecure=maybe"}, nil, `--insecure "maybe": want true or false`},
		{"bad level", []string{"--log.level", "loud"}, nil, `--log.level "loud": want debug, info, warn or error`},
		{"bad format", []string{"--log.format=xml"}, nil, `--log.format "xml": want logfmt or json`},
		{"unknown flag", []string{"--batchsize", "1"}, nil, "unknown flag: --batchsize"},
		{"unknown shorthand", []string{"-x"}, nil, "unknown flag: -x"},
		{"missing value", []string{"--batch"}, nil, "--batch: needs a value"},
		{"not a number from the environment", nil, map[string]string{"LOCK_EXPORTER_BATCH": "lots"}, `LOCK_EXPORTER_BATCH="lots": not a number`},
		{"not a bool from the environment", nil, map[string]string{"LOCK_EXPORTER_INSECURE": "maybe"}, `LOCK_EXPORTER_INSECURE="maybe": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFlagSet("test")
			var batch int
			var insecure bool
			IntVar(fs, &batch, "batch", 1, "")
			BoolVar(fs, &insecure, "insecure", false, "")
			AddLogFlags(fs, "info")
			err := ParseWithEnv(fs, tt.args, func(k string) string { return tt.vars[k] })
			if err == nil || UsageMessage(err) != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFlagValues checks the flag values parse what pflag's own types do.
func TestFlagValues(t *testing.T) {
	fs := NewFlagSet("test")
	var batch int
	var insecure bool
	IntVar(fs, &batch, "batch", 1, "")
	BoolVar(fs, &insecure, "insecure", false, "")
	logs := AddLogFlags(fs, "warn")
	if err := ParseWithEnv(fs, []string{"--batch", "0x10", "--insecure", "--log.format", "json"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if batch != 16 || !insecure || logs.Level.String() != "warn" || logs.Format.String() != "json" {
		t.Errorf("batch %d, insecure %v, level %s, format %s; want 16, true, warn, json", batch, insecure, logs.Level, logs.Format)
	}
}

func TestStringListVar(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
		want []string
	}{
		{"default kept", nil, "", []string{"d:1"}},
		{"first use replaces the default", []string{"--addr", "a:1"}, "", []string{"a:1"}},
		{"uses add up", []string{"--addr", "a:1,b:1", "--addr", "c:1"}, "", []string{"a:1", "b:1", "c:1"}},
		{"quotes are kept, not parsed", []string{"--addr", `"a:1,b:1"`}, "", []string{`"a:1`, `b:1"`}},
		{"empty items are kept for validation", []string{"--addr", "a:1,,"}, "", []string{"a:1", "", ""}},
		{"empty value is an empty list", []string{"--addr", ""}, "", nil},
		{"environment list", nil, "e:1,f:1", []string{"e:1", "f:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFlagSet("test")
			var addrs []string
			StringListVar(fs, &addrs, "addr", []string{"d:1"}, "")
			getenv := func(name string) string {
				if name == EnvName("addr") {
					return tt.env
				}
				return ""
			}
			if err := ParseWithEnv(fs, tt.args, getenv); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", addrs) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("addrs = %q, want %q", addrs, tt.want)
			}
		})
	}
}

func TestUsageMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: no namespace configured", errors.New("kind")), "kind: no namespace configured"},
		{errors.New("two\n  lines"), "two lines"},
		{errors.New(`--redis.addr "redis://u:secret@x:1": bad`), `--redis.addr "redis://u:xxxxx@x:1": bad`},
	}
	for _, tt := range tests {
		if got := UsageMessage(tt.err); got != tt.want {
			t.Errorf("UsageMessage(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
