package collectors

import (
	"errors"
	"slices"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// indexServe is what a node's index serves one scrape.
type indexServe struct {
	// Walk is the mask of indexed namespaces the scrape must walk instead: all of them while no
	// complete index exists (before the first build, or after a refusal), and those past the
	// key budget.
	Walk     uint64
	WalkWhy  map[int]string
	Err      error // Redis did not answer: the scrape's lock_exporter_up is 0
	Results  map[int]index.ServedNamespace
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

// errBuildTookTheDeadline is the error of a walked namespace in a scrape that the index's first
// build held until its deadline.
var errBuildTookTheDeadline = errors.New("not read: the scrape's deadline passed during the lock-key index's first build")

// buildingServe is a scrape's answer from w, the first build's walk as seen at the scrape's
// deadline: its namespaces are the node's, in bit order.
func buildingServe(w *walk.Result) indexServe {
	out := indexServe{WalkWhy: map[int]string{}, Results: map[int]index.ServedNamespace{}, Partial: true}
	out.Err, out.NoIdle, out.Keyspace = w.Err, !w.IdleTimeAvailable, w.Keyspace
	out.ScanCalls, out.KeysScanned = w.ScanCalls, w.KeysScanned
	for b, ns := range w.Namespaces {
		out.Results[b] = index.ServedNamespace{NamespaceResult: ns}
	}
	return out
}

// WalkAll sends the scrape's namespaces, all n of them, to the walk for why.
func (out indexServe) WalkAll(n int, why string) indexServe {
	out.Walk = uint64(1)<<n - 1
	for b := range n {
		out.WalkWhy[b] = why
	}
	return out
}

// onlyResyncing reports whether p asks for a walk only because its master resyncs.
func onlyResyncing(p indexServe) bool {
	if p.Walk == 0 || p.Err != nil || p.Partial {
		return false
	}
	for _, why := range p.WalkWhy {
		if why != whyResyncing {
			return false
		}
	}
	return true
}

// indexCounts are the index figures a Result carries.
type indexCounts struct {
	Resyncs                map[string]int64
	Entries                int
	Corrections, Backstops int64
}

func (c *indexCounts) Add(o indexCounts) {
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

// walkOf is the walk of one master: which indexed namespaces (bits) it read, and what it saw.
type walkOf struct {
	Mask uint64
	Res  *walk.Result
}

// mergeServes combines the masters' answers (parts, in address order; namespaces by bit, each
// listing its k first keys) and the walks of the masters that could not serve some namespace
// from their index (walks, by part): Redis is down if any master did not answer, and the
// figures add up as one walk of every master would count them. A namespace read partly by a
// walk is named in walked with the first such master's reason.
func mergeServes(namespaces []walk.Namespace, k int, parts []indexServe, walks []walkOf) indexServe {
	out := indexServe{WalkWhy: map[int]string{}, Results: map[int]index.ServedNamespace{}, Walked: map[int]string{}}
	if slices.ContainsFunc(parts, func(p indexServe) bool { return p.Partial }) {
		return mergePartialServes(namespaces, k, parts)
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
				out.Results[b] = index.MergeServedNamespace(out.Results[b], r, k)
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

// mergePartialServes is the scrape's answer while a first build still walks some master: the masters
// built so far and the walks in progress add up to a lower bound (partialBuild marks every
// namespace incomplete). A namespace some master cannot serve at all is not read this time.
// Idle time counts as unavailable only where a build's walk found it so.
func mergePartialServes(namespaces []walk.Namespace, k int, parts []indexServe) indexServe {
	out := indexServe{WalkWhy: map[int]string{}, Results: map[int]index.ServedNamespace{}, Partial: true}
	for b, ns := range namespaces {
		out.Results[b] = index.ServedNamespace{NamespaceResult: walk.NamespaceResult{Namespace: ns}}
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
				merged = index.MergeServedNamespace(merged, r, k)
			} else if p.Walk&(1<<b) != 0 && merged.Err == nil {
				merged.Err = errBuildTookTheDeadline
			}
			out.Results[b] = merged
		}
	}
	return out
}
