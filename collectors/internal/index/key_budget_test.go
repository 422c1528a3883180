package index

import (
	"log/slog"
	"testing"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// budgetHolder stands for an index node: the budget tells its nodes apart by pointer.
type budgetHolder struct{ name string }

// TestKeyBudgetDecisions: the budget weighs every node's index together, sends the namespace
// with the most keys over all nodes to the walk, has every node holding it drop it (not a second
// namespace while the first is still held somewhere), and takes a namespace back only when it
// fits, with the keys held, in half the budget.
func TestKeyBudgetDecisions(t *testing.T) {
	kb := NewKeyBudget(100, []walk.Namespace{{Name: "a", Pattern: "a:*"}, {Name: "b", Pattern: "b:*"}}, slog.New(slog.DiscardHandler))
	one, two := &budgetHolder{"one"}, &budgetHolder{"two"}
	charge := func(a, b int) *BudgetCharge { // a keys in namespace a, b in namespace b, none shared
		c := &BudgetCharge{Keys: a + b}
		c.PerNamespace[0], c.PerNamespace[1] = a, b
		return c
	}
	steps := []struct {
		name string
		node *budgetHolder
		held *BudgetCharge
		want int
	}{
		{"one node under the budget", one, charge(60, 0), -1},
		{"the other passes it: a holds the most over both", two, charge(20, 30), 0},
		{"the first still holds a: it drops it, nothing more is sent", one, charge(60, 0), 0},
		{"the first without a", one, charge(0, 0), -1},
		{"the second without a", two, charge(0, 30), -1},
		{"b grows to the budget", two, charge(0, 100), -1},
		{"b past it alone", two, charge(0, 101), 1},
	}
	for _, st := range steps {
		if got := kb.Settle(st.node, st.held); got != st.want {
			t.Fatalf("%s: settle = %d, want %d (walked %b)", st.name, got, st.want, kb.OverMask())
		}
	}
	if kb.OverMask() != 0b11 {
		t.Fatalf("walked %b, want both", kb.OverMask())
	}
	kb.Settle(one, charge(0, 0))
	kb.Settle(two, charge(0, 0))
	for _, r := range []struct {
		name string
		node *budgetHolder
		held *BudgetCharge // what node holds before the readmission
		b    int
		keys int64
		want bool
	}{
		{"a at 60: past half the budget", one, charge(0, 0), 0, 60, false},
		{"a at 50: half", one, charge(0, 0), 0, 50, true},
		{"a again: no longer walked", one, charge(50, 0), 0, 1, false},
		{"b at 1 with a's 50 held: past half", two, charge(0, 0), 1, 1, false},
		{"b empty with a's 50 held: half", two, charge(0, 0), 1, 0, true},
	} {
		kb.Settle(r.node, r.held)
		if got := kb.Readmit(r.b, r.keys); got != r.want {
			t.Fatalf("%s: readmit = %v, want %v", r.name, got, r.want)
		}
	}
}
