package index

import (
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// keepWithinBudget charges idx (the node's index, syncMu held) to the budget and drops from it
// every namespace the budget sends to the walk, until the indexes fit in the budget.
func (n *Node) keepWithinBudget(idx *KeyIndex) {
	for {
		b := n.Budget.Settle(n, ChargeOf(idx))
		if b < 0 {
			return
		}
		idx.DropNamespace(b)
	}
}

// Readmit brings namespace b back into the node's index: the next build reads it, and scrapes
// walk it until that build has ended.
func (n *Node) Readmit(b int) {
	n.mu.Lock()
	n.returning |= 1 << b
	n.mu.Unlock()
	n.lose(ResyncKeyBudget)
}

// budgetWalked is the mask of namespaces the node's scrapes walk for the key budget: those past
// it, and those coming back until a build has read them.
func (n *Node) budgetWalked() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.Budget.OverMask() | n.returning
}

// maskOf is the mask of indexed namespaces (not walked for the key budget) whose pattern
// matches key.
func (n *Node) maskOf(key string) uint64 {
	var buf [MaxNamespaces]int32
	var m uint64
	// As the walk sorts keys: a companion counts under its lock's namespace too.
	if kind, base, unwrapped := lockkeys.LockOf(key); kind == lockkeys.NotCompanion {
		m = MaskOf(n.cls.Classify(key, buf[:0]))
	} else {
		m = MaskOf(n.cls.ClassifyCompanion(key, base, unwrapped, buf[:0]))
	}
	return m &^ n.Budget.OverMask()
}
