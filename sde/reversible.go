package sde

import (
	"errors"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

func solveReversible[T tensor.Float](tp *autograd.Tape[T], p *problem[T], y0 autograd.Var[T], ts []float64, path Path[T], step float64) ([]autograd.Var[T], *Stats, error) {
	return nil, p.stats, errors.New("todo")
}
