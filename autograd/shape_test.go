package autograd_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestShapeErrors checks that ops refuse bad shapes when they are recorded,
// with a *tensor.ShapeError naming the op and both shapes.
func TestShapeErrors(t *testing.T) {
	v := func(tp *ag.Tape[float32], shape ...int) ag.Var[float32] {
		return tp.Input(tensor.New[float32](shape...))
	}
	cases := []struct {
		op     string
		shapes [][]int // both shapes must appear in the message
		f      func(tp *ag.Tape[float32])
	}{
		{"Add", [][]int{{2, 3}, {3, 2}}, func(tp *ag.Tape[float32]) { ag.Add(v(tp, 2, 3), v(tp, 3, 2)) }},
		{"Sub", [][]int{{2, 3}, {2}}, func(tp *ag.Tape[float32]) { ag.Sub(v(tp, 2, 3), v(tp, 2)) }},
		{"Mul", [][]int{{4}, {5}}, func(tp *ag.Tape[float32]) { ag.Mul(v(tp, 4), v(tp, 5)) }},
		{"Div", [][]int{{2, 4}, {4, 2}}, func(tp *ag.Tape[float32]) { ag.Div(v(tp, 2, 4), v(tp, 4, 2)) }},
		{"SumAxis", [][]int{{2, 4}}, func(tp *ag.Tape[float32]) { ag.SumAxis(v(tp, 2, 4), 2, false) }},
		{"MaxAxis", [][]int{{2, 0}}, func(tp *ag.Tape[float32]) { ag.MaxAxis(v(tp, 2, 0), 1, false) }},
		{"AvgPool2D", [][]int{{2, 4, 4}}, func(tp *ag.Tape[float32]) { ag.AvgPool2D(v(tp, 2, 4, 4), 2, 2, 0) }},
		{"MaxPool2D", [][]int{{1, 1, 2, 2}}, func(tp *ag.Tape[float32]) { ag.MaxPool2D(v(tp, 1, 1, 2, 2), 3, 1, 0) }},
		{"MulScalar", [][]int{{2, 3}, {2}}, func(tp *ag.Tape[float32]) { ag.MulScalar(v(tp, 2, 3), v(tp, 2)) }},
		{"AddBias", [][]int{{2, 3, 4, 4}, {4}}, func(tp *ag.Tape[float32]) { ag.AddBias(v(tp, 2, 3, 4, 4), v(tp, 4)) }},
		{"MatMul", [][]int{{2, 3}, {2, 3}}, func(tp *ag.Tape[float32]) { ag.MatMul(v(tp, 2, 3), v(tp, 2, 3)) }},
		{"Linear", [][]int{{5, 3}, {4, 2}}, func(tp *ag.Tape[float32]) { ag.Linear(v(tp, 5, 3), v(tp, 4, 2), v(tp, 4)) }},
		{"Linear", [][]int{{3}, {4, 2}}, func(tp *ag.Tape[float32]) { ag.Linear(v(tp, 5, 2), v(tp, 4, 2), v(tp, 3)) }},
		{"Conv2D", [][]int{{2, 3, 8, 8}, {4, 2, 3, 3}}, func(tp *ag.Tape[float32]) {
			ag.Conv2D(v(tp, 2, 3, 8, 8), v(tp, 4, 2, 3, 3), ag.Var[float32]{}, tensor.ConvParams{})
		}},
		{"Conv2D", [][]int{{1, 1, 2, 2}, {1, 1, 3, 3}}, func(tp *ag.Tape[float32]) {
			ag.Conv2D(v(tp, 1, 1, 2, 2), v(tp, 1, 1, 3, 3), ag.Var[float32]{}, tensor.ConvParams{})
		}},
		{"Conv2D", [][]int{{5}, {4, 3, 3, 3}}, func(tp *ag.Tape[float32]) {
			ag.Conv2D(v(tp, 2, 3, 8, 8), v(tp, 4, 3, 3, 3), v(tp, 5), tensor.ConvParams{Pad: 1})
		}},
		{"Reshape", [][]int{{5, 2}, {2, 3}}, func(tp *ag.Tape[float32]) { ag.Reshape(v(tp, 2, 3), 5, 2) }},
		{"Concat", [][]int{{2, 3, 4}, {2, 3, 5}}, func(tp *ag.Tape[float32]) { ag.Concat(1, v(tp, 2, 3, 4), v(tp, 2, 3, 5)) }},
		{"Narrow", [][]int{{2, 3}}, func(tp *ag.Tape[float32]) { ag.Narrow(v(tp, 2, 3), 1, 2, 2) }},
		{"Split", [][]int{{2, 3}}, func(tp *ag.Tape[float32]) { ag.Split(v(tp, 2, 3), 1, 1, 1) }},
		{"ConcatTime", [][]int{{6}}, func(tp *ag.Tape[float32]) { ag.ConcatTime(v(tp, 6), 0) }},
		{"SoftmaxCrossEntropy", [][]int{{4, 10}, {3}}, func(tp *ag.Tape[float32]) { ag.SoftmaxCrossEntropy(v(tp, 4, 10), []int{1, 2, 3}) }},
		{"MSE", [][]int{{4, 10}, {10, 4}}, func(tp *ag.Tape[float32]) { ag.MSE(v(tp, 4, 10), v(tp, 10, 4)) }},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			tp := ag.NewTape(eng32())
			defer func() {
				r := recover()
				err, ok := r.(error)
				var se *tensor.ShapeError
				if !ok || !errors.As(err, &se) {
					t.Fatalf("panicked with %v, want a *tensor.ShapeError", r)
				}
				msg := err.Error()
				if !strings.Contains(msg, c.op) {
					t.Errorf("message %q does not name %s", msg, c.op)
				}
				for _, s := range c.shapes {
					if !strings.Contains(msg, fmt.Sprint(s)) {
						t.Errorf("message %q does not name shape %v", msg, s)
					}
				}
				if tp.Len() != 0 {
					t.Errorf("a refused op was recorded")
				}
			}()
			c.f(tp)
		})
	}
}
