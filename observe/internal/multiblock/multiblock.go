// Package multiblock finds the MULTI … EXEC blocks of a pipeline for observe's hooks (the
// go-redis one and the rueidis adapter's): a command queued in a block is answered QUEUED, and
// its outcome is its element of EXEC's reply.
package multiblock

// Kind is what Find needs to know of a pipeline's command.
type Kind uint8

const (
	Other   Kind = iota
	Multi        // opens a block
	Exec         // runs the open block
	Discard      // drops the open block
)

// Slot places a command inside a block: Exec is the index of the block's EXEC and Pos the
// command's place in the block. Exec is 0 outside a block (EXEC never comes first) and -1 in a
// block discarded or not ended in the pipeline, whose commands run not (or not yet) and have no
// outcome there.
type Slot struct{ Exec, Pos int }

// Find returns the Slot of each of a pipeline's n commands, kind(i) naming the i-th; nil when
// no command is in a block.
func Find(n int, kind func(i int) Kind) []Slot {
	var slots []Slot
	start := -1 // index of the open block's MULTI
	mark := func(end, exec int) {
		if slots == nil {
			slots = make([]Slot, n)
		}
		for j := start + 1; j < end; j++ {
			slots[j] = Slot{Exec: exec, Pos: j - start - 1}
		}
	}
	for i := range n {
		switch k := kind(i); {
		case k == Multi:
			start = i
		case start >= 0 && k == Exec:
			mark(i, i)
			start = -1
		case start >= 0 && k == Discard:
			mark(i, -1)
			start = -1
		}
	}
	if start >= 0 {
		mark(n, -1)
	}
	return slots
}
