package main

import (
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestInspectNamesATLSMismatch: the two ways a first --redis.addr gets TLS wrong end in a line
// that says so. A plain redis:// address to a TLS-only Redis read "cannot read Redis (…): EOF";
// a rediss:// address to a Redis without TLS "did not answer within --scan.timeout", after
// waiting it out. Both stay exit 1.
func TestInspectNamesATLSMismatch(t *testing.T) {
	pki := testkit.NewPKI(t)
	tlsOnly := redistest.Start(t, redistest.WithTLS(pki.ServerCert, pki.ServerKey, pki.CAFile), redistest.WithArgs("--tls-auth-clients", "no"))
	plain := redistest.Start(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"plain address, TLS-only Redis", []string{"--redis.addr", tlsOnly.Addr}, "if it serves TLS, use a rediss:// address"},
		{"rediss address, Redis without TLS", []string{"--redis.addr", "rediss://" + plain.Addr, "--redis.tls-ca-file", pki.CAFile, "--scan.timeout", "1s"},
			"a Redis without TLS on that port does not answer a TLS handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, nil, append([]string{"inspect", "--namespace", "jobs=jobs:*"}, tt.args...)...)
			if code != exitFailure {
				t.Errorf("exit %d, want %d (%s)", code, exitFailure, stderr)
			}
			if !strings.HasPrefix(stderr, "lock-exporter inspect: ") || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line saying %q", stderr, tt.want)
			}
		})
	}
}
