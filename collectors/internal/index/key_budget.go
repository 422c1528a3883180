package index

import (
	"fmt"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// KeyBudget is the index key budget (Options.IndexKeyBudget) of one Scanner: the most keys its
// lock-key indexes hold together (one node's, or every master's of a Cluster, since they share
// the exporter's memory), at every moment: at the build, and as the change feed adds keys.
// Whenever the keys held would pass it, the namespace holding the most goes to the walk on
// every node (mode="walk", reason="key_budget"), so a namespace past the budget alone goes, and
// so does the largest of several that pass it together.
//
// A namespace comes back when a scrape's walk of it reads it whole (not cut at
// Options.MaxKeys) and it would fit, with the keys the indexes hold, in half the budget: the
// gap between leaving at the budget and coming back at half keeps a namespace near the budget
// from going back and forth, each return costing a rebuild (one walk).
type KeyBudget struct {
	limit  int
	names  []string // the indexed namespaces, by bit
	logger *slog.Logger

	over atomic.Uint64 // namespaces walked for the budget, by bit

	mu   sync.Mutex
	held map[any]*BudgetCharge // what each node's index (or its build under way) holds, by node
}

// BudgetCharge is what one node's index holds: its keys, and the keys of each namespace (a key
// in two namespaces counts in both).
type BudgetCharge struct {
	Keys         int
	PerNamespace [MaxNamespaces]int
}

// KeyBudgetText is the log lines' explanation of a namespace walked for the key budget.
const KeyBudgetText = "the indexed namespaces would hold more keys than the index key budget, this one the most"

func NewKeyBudget(limit int, namespaces []walk.Namespace, logger *slog.Logger) *KeyBudget {
	kb := &KeyBudget{limit: limit, logger: logger, held: map[any]*BudgetCharge{}}
	for _, ns := range namespaces {
		kb.names = append(kb.names, ns.Name)
	}
	return kb
}

// OverMask is the namespaces walked for the budget.
func (kb *KeyBudget) OverMask() uint64 { return kb.over.Load() }

// Settle records what node n's index holds now (c: copied; n is any value that names the node)
// and returns a namespace n must drop
// from it: one already sent to the walk that n still holds, or the one that holds the most keys
// when the indexes together hold more than the budget (it is sent to the walk now); -1 when n
// holds nothing to drop.
func (kb *KeyBudget) Settle(n any, c *BudgetCharge) int {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	held := kb.held[n]
	if held == nil {
		held = &BudgetCharge{}
		kb.held[n] = held
	}
	*held = *c
	over := kb.over.Load()
	for m := over; m != 0; m &= m - 1 {
		if b := bits.TrailingZeros64(m); c.PerNamespace[b] > 0 {
			return b
		}
	}
	total := kb.total()
	if total <= kb.limit {
		return -1
	}
	b, keys := kb.largest(over)
	if b < 0 {
		return -1
	}
	kb.send(b, fmt.Sprintf("the indexes would hold %d keys, %d of them this namespace's", total, keys))
	return b
}

// Overflow sends namespace b to the walk: a build's walk found more of its keys than the budget.
func (kb *KeyBudget) Overflow(b int) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if kb.over.Load()&(1<<b) == 0 {
		kb.send(b, fmt.Sprintf("a build's walk read more than %d of its keys", kb.limit))
	}
}

// send marks namespace b walked and says so, once per crossing; kb.mu is held. Its keys leave
// every node's charge at once, each node dropping them at its next Settle: otherwise a node
// settling before another has dropped them would find the indexes still past the budget and
// send a second namespace. (A key b shares with another namespace leaves the charge too, until
// its node settles with its true counts.)
func (kb *KeyBudget) send(b int, why string) {
	kb.over.Store(kb.over.Load() | 1<<b)
	for _, c := range kb.held {
		c.Keys = max(0, c.Keys-c.PerNamespace[b])
		c.PerNamespace[b] = 0
	}
	kb.logger.Warn(fmt.Sprintf("namespace %s: %s (%d keys; %s): walking the keyspace on every scrape until it fits in half of it",
		kb.names[b], KeyBudgetText, kb.limit, why), "lock_namespace", kb.names[b])
}

// total is the keys every node's index holds; kb.mu is held.
func (kb *KeyBudget) total() int {
	t := 0
	for _, c := range kb.held {
		t += c.Keys
	}
	return t
}

// largest is the namespace not in skip whose keys, summed over the nodes, are the most, and
// their number; -1 when no such namespace holds any. kb.mu is held.
func (kb *KeyBudget) largest(skip uint64) (b, keys int) {
	b = -1
	for i := range kb.names {
		if skip&(1<<i) != 0 {
			continue
		}
		sum := 0
		for _, c := range kb.held {
			sum += c.PerNamespace[i]
		}
		if sum > keys {
			b, keys = i, sum
		}
	}
	return b, keys
}

// Readmit takes namespace b back from the walk when a scrape's walk read it whole at keys
// (locks and fence keys) and, with the keys the indexes hold, that fits in half the budget. It
// reports whether it did: the caller rebuilds the indexes with it.
func (kb *KeyBudget) Readmit(b int, keys int64) bool {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if kb.over.Load()&(1<<b) == 0 || int64(kb.total())+keys > int64(kb.limit/2) {
		return false
	}
	kb.over.Store(kb.over.Load() &^ (1 << b))
	kb.logger.Info(fmt.Sprintf("namespace %s: %d keys, the index holding %d: back under half the index key budget (%d): rebuilding the index with it",
		kb.names[b], keys, kb.total(), kb.limit), "lock_namespace", kb.names[b])
	return true
}

// Release forgets node n's index (a master that is gone, or a Scanner closing).
func (kb *KeyBudget) Release(n any) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	delete(kb.held, n)
}

// ChargeOf is what idx holds, for the budget.
func ChargeOf(idx *KeyIndex) *BudgetCharge {
	return &BudgetCharge{Keys: idx.Len(), PerNamespace: idx.PerNamespace}
}
