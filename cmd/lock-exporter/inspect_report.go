package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/duration"
)

// inspectReport is what inspect prints, as a table or as JSON. The JSON is a contract that
// docs/exporter.md documents field by field: numbers are JSON numbers, and a value that is absent
// or could not be read is null, never a placeholder string.
type inspectReport struct {
	Namespace      string      `json:"namespace"`
	Pattern        string      `json:"pattern"`
	Keys           int64       `json:"keys"`
	KeysWithoutTTL int64       `json:"keys_without_ttl"`
	FenceKeys      int64       `json:"fence_keys"`
	MinTTLSeconds  *float64    `json:"min_ttl_seconds"`
	ScanSeconds    float64     `json:"scan_seconds"`
	Complete       bool        `json:"complete"`
	Truncated      bool        `json:"truncated"`
	Error          *string     `json:"error"`
	FenceError     *string     `json:"fence_error"`
	HolderError    *string     `json:"holder_error"`
	Partial        bool        `json:"partial"`
	Listed         []inspected `json:"keys_listed"`

	maxKeys       int
	idleAvailable bool
	duration      time.Duration
}

// inspected is one listed key. Key is the whole name, escaped as redis-cli reads it inside double
// quotes; TTLSeconds is null for a key without expiry, IdleSeconds null when idle time is
// unavailable; Fence is the fence counter, null when the lock has none or it could not be read
// (the report's fence_error says which); Holder is null when the lock has no holder key (taken
// without RecordHolder, or by another library) or it could not be read (holder_error), escaped
// like Key otherwise.
type inspected struct {
	Key         string   `json:"key"`
	TTLSeconds  *float64 `json:"ttl_seconds"`
	IdleSeconds *float64 `json:"idle_seconds"`
	Fence       *int64   `json:"fence"`
	Holder      *string  `json:"holder"`

	label       string
	fenceLabel  string
	holderLabel string
	ttl         time.Duration
	idle        time.Duration
}

// optional is s as a JSON value: null when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newInspectReport(nr collectors.NamespaceResult, idleAvailable bool, rows []collectors.KeyInfo, comp companions, maxKeys int) *inspectReport {
	r := &inspectReport{
		Namespace:      nr.Namespace.Name,
		Pattern:        nr.Namespace.Pattern,
		Keys:           nr.Keys,
		KeysWithoutTTL: nr.KeysWithoutTTL,
		FenceKeys:      nr.FenceKeys,
		ScanSeconds:    duration.Seconds(nr.Duration),
		Complete:       nr.Complete,
		Truncated:      nr.Truncated,
		Partial:        !nr.Complete || nr.Truncated || nr.Err != nil,
		Listed:         []inspected{},
		maxKeys:        maxKeys,
		idleAvailable:  idleAvailable,
		duration:       nr.Duration,
	}
	if nr.Err != nil {
		r.Error = optional(oneLine(nr.Err))
	}
	if comp.fenceErr != nil {
		r.FenceError = optional(oneLine(comp.fenceErr))
	}
	if comp.holderErr != nil {
		r.HolderError = optional(oneLine(comp.holderErr))
	}
	if nr.HasTTL {
		v := duration.Seconds(nr.MinTTL)
		r.MinTTLSeconds = &v
	}
	for i, k := range rows {
		row := inspected{Key: collectors.PrintableKey(k.Key), Fence: comp.fenceNums[i], label: collectors.KeyLabel(k.Key),
			fenceLabel: comp.fences[i], holderLabel: "-", ttl: k.TTL, idle: k.Idle}
		switch h := comp.holders[i]; {
		case h != nil:
			printable := collectors.PrintableKey(*h)
			row.Holder, row.holderLabel = &printable, collectors.KeyLabel(*h)
		case comp.holderLost[i]:
			row.holderLabel = "?" // unreadable, as FENCE shows it: not "no holder"
		}
		if k.TTL != collectors.NoTTL {
			v := duration.Seconds(k.TTL)
			row.TTLSeconds = &v
		}
		if idleAvailable {
			v := duration.Seconds(k.Idle)
			row.IdleSeconds = &v
		}
		r.Listed = append(r.Listed, row)
	}
	return r
}

func (r *inspectReport) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeTable prints the summary line and the rows. Keys are cut as the key label is
// (collectors.KeyLabel), so one huge key name cannot pad every row; --output json has them whole.
func (r *inspectReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "namespace %q (pattern %q): %d live %s, %d without TTL", r.Namespace, r.Pattern, r.Keys, plural(r.Keys, "key", "keys"), r.KeysWithoutTTL)
	if r.MinTTLSeconds != nil {
		fmt.Fprintf(w, ", shortest TTL %s", formatTTL(time.Duration(*r.MinTTLSeconds*float64(time.Second))))
	}
	fmt.Fprintf(w, "; scanned in %s%s\n", r.duration.Round(time.Millisecond), r.caveat())
	if len(r.Listed) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTTL\tIDLE\tFENCE\tHOLDER")
	for _, k := range r.Listed {
		idle := "n/a"
		if r.idleAvailable {
			idle = k.idle.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.label, formatTTL(k.ttl), idle, k.fenceLabel, k.holderLabel)
	}
	tw.Flush()
}

// caveat says on the summary line why the counts are a lower bound, if they are.
func (r *inspectReport) caveat() string {
	var why []string
	if r.Error != nil {
		why = append(why, "FAILED: "+*r.Error)
	} else if !r.Complete {
		why = append(why, "PARTIAL: the scan was cut short (--scan.timeout), counts are a lower bound")
	}
	if r.Truncated {
		why = append(why, fmt.Sprintf("TRUNCATED at --scan.max-keys %d, more keys match", r.maxKeys))
	}
	if len(why) == 0 {
		return ""
	}
	return "; " + strings.Join(why, "; ")
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
