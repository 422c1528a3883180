package collectors

import "github.com/lockwatch/lockwatch/collectors/internal/index"

// keepWithinBudget charges idx (the node's index, syncMu held) to the budget and drops from it
// every namespace the budget sends to the walk, until the indexes fit in the budget.
func (n *indexNode) keepWithinBudget(idx *index.KeyIndex) {
	for {
		b := n.budget.Settle(n, index.ChargeOf(idx))
		if b < 0 {
			return
		}
		idx.DropNamespace(b)
	}
}

// readmit brings namespace b back into the node's index: the next build reads it, and scrapes
// walk it until that build has ended.
func (n *indexNode) readmit(b int) {
	n.mu.Lock()
	n.returning |= 1 << b
	n.mu.Unlock()
	n.lose(index.ResyncKeyBudget)
}

// budgetWalked is the mask of namespaces the node's scrapes walk for the key budget: those past
// it, and those coming back until a build has read them.
func (n *indexNode) budgetWalked() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.budget.OverMask() | n.returning
}
