package testkit

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
)

// TestPKIHandshake runs TLS handshakes between the PKI's server certificate (requiring client
// certificates from the CA) and clients with and without the PKI's trust and certificate.
func TestPKIHandshake(t *testing.T) {
	p := NewPKI(t)
	serverPair, err := tls.LoadX509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	serverCfg := &tls.Config{
		Certificates: []tls.Certificate{serverPair},
		ClientCAs:    p.Pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	noCert := p.ClientTLS()
	noCert.Certificates = nil
	tests := []struct {
		name       string
		client     *tls.Config
		serverName string
		wantOK     bool
	}{
		{"client certificate, IP address", p.ClientTLS(), "127.0.0.1", true},
		{"client certificate, localhost", p.ClientTLS(), "localhost", true},
		{"no client certificate", noCert, "127.0.0.1", false},
		{"CA not trusted", &tls.Config{Certificates: []tls.Certificate{p.Client}, MinVersion: tls.VersionTLS12}, "127.0.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cConn, sConn := net.Pipe()
			defer cConn.Close()
			defer sConn.Close()
			serverErr := make(chan error, 1)
			go func() {
				s := tls.Server(sConn, serverCfg)
				err := s.Handshake()
				s.Close()
				serverErr <- err
			}()
			cfg := tt.client.Clone()
			cfg.ServerName = tt.serverName
			c := tls.Client(cConn, cfg)
			clientErr := c.Handshake()
			if clientErr == nil {
				// Under TLS 1.3 the server checks the client certificate after the client's
				// handshake returned: read until it has ended its side (EOF) or refused.
				if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
					clientErr = err
				}
			}
			c.Close()
			sErr := <-serverErr
			if ok := clientErr == nil && sErr == nil; ok != tt.wantOK {
				t.Errorf("handshake: client %v, server %v; want success %v", clientErr, sErr, tt.wantOK)
			}
		})
	}
}
