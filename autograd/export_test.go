package autograd

import "github.com/adamnode/adamnode/tensor"

// GraphRefs counts the references the tape's slots still hold for backward
// (rules, inputs, saved tensors, custom closures): zero after Backward.
func GraphRefs[T tensor.Float](t *Tape[T]) int {
	n := 0
	for _, c := range t.chunks {
		for i := range c {
			e := &c[i]
			if e.rule != nil {
				n++
			}
			for _, v := range e.in {
				if v != nil {
					n++
				}
			}
			for _, v := range e.ins[:cap(e.ins)] {
				if v != nil {
					n++
				}
			}
			if e.aux != nil {
				n++
			}
			if e.custom != nil {
				n++
			}
		}
	}
	return n
}

// Slots returns the number of slots in use.
func Slots[T tensor.Float](t *Tape[T]) int { return t.n }

// MisfiledArena counts the tensors in the tape's arena free lists whose
// shape is not their size class's: a put with a wrong class, which a later
// take of that class would hand out at the wrong shape.
func MisfiledArena[T tensor.Float](t *Tape[T]) int {
	n := 0
	for _, c := range t.arena.classes {
		for _, x := range c.free {
			if k, ok := keyLike(x); !ok || k != c.key {
				n++
			}
		}
	}
	return n
}
