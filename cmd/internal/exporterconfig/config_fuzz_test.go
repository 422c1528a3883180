package exporterconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func oneLineErr(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("%s: error %q does not wrap ErrInvalid", what, err)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("%s: error spans lines: %q", what, err)
	}
}

// FuzzLoad feeds arbitrary bytes to the config loader and validation: neither panics, and every
// error is one line that wraps ErrInvalid, which is what the exporter prints before exiting 2.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("namespaces:\n  - name: scheduler\n    pattern: 'cordum:scheduler:job:*'\n    expected_ttl: 60s\n    expected_renew_interval: 20s\n"))
	f.Add([]byte("redis:\n  addr: rediss://user@127.0.0.1:6380/2\n  tls:\n    server_name: redis\nscan:\n  timeout: 5s\nnamespaces: [{name: a, pattern: 'a:*'}]\n"))
	f.Add([]byte("redis:\n  cluster_addrs: [127.0.0.1:7000, 127.0.0.1:7001]\nnamespaces: [{name: a, pattern: '*'}]\n"))
	f.Add([]byte("namespaces:\n  - name: x\n    patern: 'x:*'\n"))
	f.Add([]byte("scan:\n  timeout: 5x\n"))
	f.Add([]byte("scan: {batch_size: -1}\n"))
	f.Add([]byte("namespaces: [{name: a, pattern: '[a'}, {name: a, pattern: 'b'}]\n"))
	f.Add([]byte("redis: [\n"))
	f.Add([]byte("\t- bad indentation\n"))
	f.Add([]byte("redis:\n  addr: redis://:secret@host:6379\n"))
	f.Add([]byte{0xff, 0xfe, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "exporter.yml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path)
		if err != nil {
			oneLineErr(t, "Load", err)
			return
		}
		// Validation reads the files a config names; a fuzzed path could name a device that
		// never ends (/dev/zero), so the fuzzer checks everything but file reads.
		cfg.Redis.PasswordFile, cfg.Redis.SentinelPasswordFile = "", ""
		cfg.Redis.TLS.CAFile, cfg.Redis.TLS.CertFile, cfg.Redis.TLS.KeyFile = "", "", ""
		if err := cfg.Validate(); err != nil {
			oneLineErr(t, "Validate", err)
			return
		}
		for _, ns := range cfg.Namespaces {
			if err := ns.collector().Validate(); err != nil {
				t.Fatalf("valid config holds an invalid namespace %q: %v", ns.Name, err)
			}
		}
	})
}

// FuzzParseNamespace checks --namespace NAME=PATTERN: an accepted value splits at its first
// '=' and puts back together exactly; a refused one gets one line wrapping ErrInvalid.
func FuzzParseNamespace(f *testing.F) {
	for _, s := range []string{"scheduler=cordum:scheduler:job:*", "a=b=c", "noequals", "=*", "x=", "x=[", `x=\`, "é=*", "a\nb=*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseNamespace(s)
		if err != nil {
			oneLineErr(t, "ParseNamespace", err)
			return
		}
		if strings.Contains(ns.Name, "=") || ns.Name+"="+ns.Pattern != s {
			t.Fatalf("ParseNamespace(%q) = name %q, pattern %q", s, ns.Name, ns.Pattern)
		}
	})
}
