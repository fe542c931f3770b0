package odeblock

// NFE returns the evaluations of the dynamics in the forward and in the
// backward pass, Forward.NFE and Backward.NFE: the counts train reads
// (train.Counted) without importing odeblock.
func (s BlockStats) NFE() (forward, backward int) { return s.Forward.NFE, s.Backward.NFE }

// NFE returns Stats().NFE(): the evaluations of the dynamics in the last
// forward and backward passes. A Block is a train.Counted.
func (b *Block[T]) NFE() (forward, backward int) { return b.Stats().NFE() }
