package index

import (
	"errors"
	"slices"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// Serve is what a node's index serves one scrape.
type Serve struct {
	// Walk is the mask of indexed namespaces the scrape must walk instead: all of them while no
	// complete index exists (before the first build, or after a refusal), and those past the
	// key budget.
	Walk     uint64
	WalkWhy  map[int]string
	Err      error // Redis did not answer: the scrape's lock_exporter_up is 0
	Results  map[int]ServedNamespace
	Keyspace int64
	NoIdle   bool
	// Partial marks the first build's walk as seen at the scrape's deadline, when the build had
	// not finished (on a cluster: some master's), in Results: served as a cut walk is (counts a
	// lower bound, scrape_complete 0).
	Partial bool
	// Walked (a cluster's scrape) names the namespaces in Results whose figures are partly a
	// walk of the masters that could not serve them from their index, with that reason; the
	// walks' SCAN calls and keys scanned are ScanCalls and KeysScanned.
	Walked                 map[int]string
	ScanCalls, KeysScanned int64
}

// ErrBuildTookTheDeadline is the error of a walked namespace in a scrape that the index's first
// build held until its deadline.
var ErrBuildTookTheDeadline = errors.New("not read: the scrape's deadline passed during the lock-key index's first build")

// BuildingServe is a scrape's answer from w, the first build's walk as seen at the scrape's
// deadline: its namespaces are the node's, in bit order.
func BuildingServe(w *walk.Result) Serve {
	out := Serve{WalkWhy: map[int]string{}, Results: map[int]ServedNamespace{}, Partial: true}
	out.Err, out.NoIdle, out.Keyspace = w.Err, !w.IdleTimeAvailable, w.Keyspace
	out.ScanCalls, out.KeysScanned = w.ScanCalls, w.KeysScanned
	for b, ns := range w.Namespaces {
		out.Results[b] = ServedNamespace{NamespaceResult: ns}
	}
	return out
}

// WalkAll sends the scrape's namespaces, all n of them, to the walk for why.
func (out Serve) WalkAll(n int, why string) Serve {
	out.Walk = uint64(1)<<n - 1
	for b := range n {
		out.WalkWhy[b] = why
	}
	return out
}

// OnlyResyncing reports whether p asks for a walk only because its master resyncs.
func OnlyResyncing(p Serve) bool {
	if p.Walk == 0 || p.Err != nil || p.Partial {
		return false
	}
	for _, why := range p.WalkWhy {
		if why != WhyResyncing {
			return false
		}
	}
	return true
}

// Counts are the index figures a Result carries.
type Counts struct {
	Resyncs                map[string]int64
	Entries                int
	Corrections, Backstops int64
}

func (c *Counts) Add(o Counts) {
	if c.Resyncs == nil {
		c.Resyncs = map[string]int64{}
	}
	for r, v := range o.Resyncs {
		c.Resyncs[r] += v
	}
	c.Entries += o.Entries
	c.Corrections += o.Corrections
	c.Backstops += o.Backstops
}

// WalkOf is the walk of one master: which indexed namespaces (bits) it read, and what it saw.
type WalkOf struct {
	Mask uint64
	Res  *walk.Result
}

// MergeServes combines the masters' answers (parts, in address order; namespaces by bit, each
// listing its k first keys) and the walks of the masters that could not serve some namespace
// from their index (walks, by part): Redis is down if any master did not answer, and the
// figures add up as one walk of every master would count them. A namespace read partly by a
// walk is named in walked with the first such master's reason.
func MergeServes(namespaces []walk.Namespace, k int, parts []Serve, walks []WalkOf) Serve {
	out := Serve{WalkWhy: map[int]string{}, Results: map[int]ServedNamespace{}, Walked: map[int]string{}}
	if slices.ContainsFunc(parts, func(p Serve) bool { return p.Partial }) {
		return MergePartialServes(namespaces, k, parts)
	}
	for i, p := range parts {
		if out.Err == nil {
			out.Err = p.Err
		}
		keyspace := p.Keyspace
		out.NoIdle = out.NoIdle || p.NoIdle
		if walks != nil && walks[i].Res != nil {
			w := walks[i].Res
			if !w.Up && out.Err == nil {
				out.Err = w.Err
			}
			if keyspace == 0 {
				keyspace = w.Keyspace // a master that refused tracking, or before its first build
			}
			out.NoIdle = out.NoIdle || !w.IdleTimeAvailable
			out.ScanCalls += w.ScanCalls
			out.KeysScanned += w.KeysScanned
		}
		out.Keyspace += keyspace
	}
	for b, ns := range namespaces {
		first, indexed := true, false
		for i, p := range parts {
			r, ok := p.Results[b]
			indexed = indexed || ok
			if !ok && walks[i].Mask&(1<<b) != 0 && walks[i].Res != nil {
				r.NamespaceResult, ok = namespaceOf(walks[i].Res, ns.Name)
				if _, named := out.Walked[b]; ok && !named {
					out.Walked[b] = p.WalkWhy[b]
				}
			}
			switch {
			case !ok:
			case first:
				out.Results[b], first = r, false
			default:
				out.Results[b] = MergeServedNamespace(out.Results[b], r, k)
			}
		}
		if r, ok := out.Results[b]; ok {
			r.Indexed = indexed
			out.Results[b] = r
		}
	}
	return out
}

// namespaceOf is the result of the namespace named name in res.
func namespaceOf(res *walk.Result, name string) (walk.NamespaceResult, bool) {
	for _, r := range res.Namespaces {
		if r.Namespace.Name == name {
			return r, true
		}
	}
	return walk.NamespaceResult{}, false
}

// MergePartialServes is the scrape's answer while a first build still walks some master: the masters
// built so far and the walks in progress add up to a lower bound (partialBuild marks every
// namespace incomplete). A namespace some master cannot serve at all is not read this time.
// Idle time counts as unavailable only where a build's walk found it so.
func MergePartialServes(namespaces []walk.Namespace, k int, parts []Serve) Serve {
	out := Serve{WalkWhy: map[int]string{}, Results: map[int]ServedNamespace{}, Partial: true}
	for b, ns := range namespaces {
		out.Results[b] = ServedNamespace{NamespaceResult: walk.NamespaceResult{Namespace: ns}}
	}
	for _, p := range parts {
		if out.Err == nil {
			out.Err = p.Err
		}
		out.NoIdle = out.NoIdle || p.Partial && p.NoIdle
		out.Keyspace += p.Keyspace
		out.ScanCalls += p.ScanCalls
		out.KeysScanned += p.KeysScanned
		for b := range namespaces {
			merged := out.Results[b]
			if r, ok := p.Results[b]; ok {
				merged = MergeServedNamespace(merged, r, k)
			} else if p.Walk&(1<<b) != 0 && merged.Err == nil {
				merged.Err = ErrBuildTookTheDeadline
			}
			out.Results[b] = merged
		}
	}
	return out
}
