package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// event is one alert as a webhook notification carried it.
type event struct {
	Path        string // the receiver's URL path: which route the alert took
	Receiver    string
	Status      string // firing or resolved
	Labels      map[string]string
	Annotations map[string]string
	At          time.Time
}

// receiver is the webhook endpoint every Alertmanager receiver points at.
type receiver struct {
	addr   string
	server *http.Server
	mu     sync.Mutex
	events []event
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: l.Addr().String()}
	r.server = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.server.Serve(l) }()
	t.Cleanup(func() { _ = r.server.Close() })
	return r
}

// ServeHTTP decodes Alertmanager's webhook payload (version 4).
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var msg struct {
		Receiver string `json:"receiver"`
		Alerts   []struct {
			Status      string            `json:"status"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(req.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range msg.Alerts {
		r.events = append(r.events, event{Path: req.URL.Path, Receiver: msg.Receiver, Status: a.Status,
			Labels: a.Labels, Annotations: a.Annotations, At: time.Now()})
	}
}

// find returns the first event after since matching alertname, status and labels.
func (r *receiver) find(since time.Time, alertname, status string, labels map[string]string) (event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.At.Before(since) || e.Labels["alertname"] != alertname || e.Status != status {
			continue
		}
		ok := true
		for k, v := range labels {
			ok = ok && e.Labels[k] == v
		}
		if ok {
			return e, true
		}
	}
	return event{}, false
}

func (r *receiver) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		fmt.Fprintf(&b, "  %s %s %s %s %v\n", e.At.Format("15:04:05"), e.Path, e.Status, e.Labels["alertname"], e.Labels)
	}
	return b.String()
}
