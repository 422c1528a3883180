package walk

// Namespace is what the walk needs of one configured namespace to sort keys into it: collectors
// builds one per namespace once, from its Options, in configuration order.
type Namespace struct {
	// Name names the namespace in the walk's errors.
	Name string
	// Pattern is the namespace's SCAN MATCH glob.
	Pattern string
	// Types are the value types that count as the namespace's locks; empty means TypeString.
	Types []string
	// StringsOnly is true when the namespace counts string keys and nothing else.
	StringsOnly bool
	// ReadsHolders is true when the namespace declares an expected maximum hold, so the walk
	// reads the holder record of each of its keys.
	ReadsHolders bool
}

// Value types a namespace may count (the names TYPE and SCAN ... TYPE use).
const (
	TypeString = "string"
	TypeHash   = "hash"
)

// Wants reports whether keys of Redis type typ count as locks of the namespace.
func (n Namespace) Wants(typ string) bool {
	if len(n.Types) == 0 {
		return typ == TypeString
	}
	for _, t := range n.Types {
		if t == typ {
			return true
		}
	}
	return false
}
