package mlpfamily

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/tensor"
)

// Replicas is a problem in T trained data-parallel in one process: k copies
// of it, each with a share of the batch's rows and a one-worker backend,
// stepping in goroutines of their own; each replica's gradients are
// weighted by its share of the rows and summed over the replicas (one
// all-reduce), so every replica takes the full batch's Adam step.
type Replicas[T tensor.Float] struct {
	reps  []*ProblemOf[T]
	comms []*distributed.Local
	share []float64 // each replica's rows / the batch
}

// NewReplicas splits p over k replicas (k ≤ its batch); p's weights and
// data are copied, p itself is not used.
func NewReplicas[T tensor.Float](p *ProblemOf[T], k int) (*Replicas[T], error) {
	b := p.Config.Batch
	if k < 1 || k > b {
		return nil, fmt.Errorf("mlpfamily: %d replicas of a batch of %d", k, b)
	}
	r := &Replicas[T]{comms: distributed.NewLocal(k)}
	d := p.Config.D
	lo := 0
	for i := range k {
		hi := b * (i + 1) / k
		q := &ProblemOf[T]{Config: p.Config, Field: newField[T](p.Config, rand.New(rand.NewPCG(0, 0)))}
		rows := func(t *tensor.Tensor[T]) *tensor.Tensor[T] {
			return tensor.FromSlice(append([]T(nil), t.Data()[lo*d:hi*d]...), hi-lo, d)
		}
		q.H0, q.M0, q.Target = rows(p.H0), rows(p.M0), rows(p.Target)
		q.Config.Batch = hi - lo
		if err := q.build(); err != nil {
			return nil, err
		}
		for j, prm := range q.Params {
			prm.Value.Copy(p.Params[j].Value)
		}
		q.tp.Release()
		q.eng = tensor.EngineFor[T](backend(1))
		q.tp = newTape(q.eng)
		r.reps = append(r.reps, q)
		r.share = append(r.share, float64(hi-lo)/float64(b))
		lo = hi
	}
	return r, nil
}

// Step runs one data-parallel training iteration; the loss is the full
// batch's, the NFE the mean of the replicas'.
func (r *Replicas[T]) Step() (IterStats, error) {
	k := len(r.reps)
	sts := make([]IterStats, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i, q := range r.reps {
		wg.Go(func() { sts[i], errs[i] = q.stepShared(r.comms[i], r.share[i]) })
	}
	wg.Wait()
	var st IterStats
	for i := range k {
		if errs[i] != nil {
			return st, errs[i]
		}
		st.Loss += sts[i].Loss * r.share[i]
		st.FwdNFE += sts[i].FwdNFE
		st.BwdNFE += sts[i].BwdNFE
	}
	st.FwdNFE /= k
	st.BwdNFE /= k
	return st, nil
}

// stepShared is Step with the gradients weighted by share and summed over
// the replicas through c before the Adam step.
func (p *ProblemOf[T]) stepShared(c *distributed.Local, share float64) (IterStats, error) {
	st, err := p.gradients()
	buf := p.share[:0]
	defer func() { p.share = buf }()
	for _, prm := range p.Params {
		if prm.Grad == nil {
			prm.ZeroGrad()
		}
		for _, v := range prm.Grad.Data() {
			buf = append(buf, share*float64(v))
		}
	}
	failed := 0.0
	if err != nil {
		failed = 1
	}
	buf = append(buf, failed)
	if rerr := c.AllReduce(buf); rerr != nil {
		return st, rerr
	}
	if err == nil && buf[len(buf)-1] > 0 {
		err = fmt.Errorf("mlpfamily: another replica failed")
	}
	if err != nil {
		return st, err
	}
	off := 0
	for _, prm := range p.Params {
		g := prm.Grad.Data()
		for i := range g {
			g[i] = T(buf[off+i])
		}
		off += len(g)
	}
	p.Opt.Step()
	return st, nil
}
