package sde

import (
	"fmt"
	"strings"

	"github.com/adamnode/adamnode/internal/modename"
)

// GradMode is how a solve is differentiated when its tape records
// gradients: Backprop{} (the default, when Options.Mode is nil),
// Reversible{}, Adjoint{}, Checkpoint{…} or Recursive{…}. As odeblock's
// modes (odeblock.GradMode), each is a value of its own type that carries
// its own options, and the words mean the same in both packages where the
// algorithm is the same: Backprop tapes every step, Checkpoint keeps
// states and replays from them, Recursive keeps at most Budget states on
// the binomial schedule, Adjoint solves the adjoint equation backward.
type GradMode interface {
	// String returns the mode's name, as ParseGradMode reads it.
	String() string
	// check returns the error of a mode that does not fit a method of
	// calculus calc, or whose options are out of range.
	check(method string, calc Calculus) error
}

// Backprop records every operation of every step on the caller's tape
// (discretise-then-optimise): exact gradients of the discrete solve for
// every method, memory growing with the number of steps.
type Backprop struct{}

// Reversible (ReversibleHeun only) records the whole solve as one node
// and, in the backward pass, runs the steps backward, reconstructing each
// state from the next in algebra and pulling the cotangent back with one
// vector–Jacobian product of (f, g) per step (Kidger et al. 2021). The
// gradients equal Backprop's to rounding (the reconstruction errs by
// rounding only) in memory independent of the number of steps. The
// backward pass evaluates f and g once per step (recorded, the
// reconstruction of the step's start reads its values, and the next
// backward step pulls the cotangent back through it) and twice more in
// all.
type Reversible struct{}

// Adjoint (a Stratonovich method: Heun or ReversibleHeun) is the
// stochastic adjoint of Li et al. (2020, "Scalable gradients for
// stochastic differential equations"): the forward solve keeps no history,
// and the backward pass solves the adjoint SDE of (y, a, g_θ) backward in
// time on the same Brownian path, with Heun's rule on the forward steps,
// two vector–Jacobian products of (f, g) per step. Memory is flat in the
// steps; the gradients are those of the continuous solution, so they
// differ from Backprop's by the discretisation error of both solves, and
// converge to them as the step shrinks (not exactly, as Reversible's). The
// state is rebuilt by solving the SDE backward, which is accurate where
// the SDE does not amplify errors backward in time. Unlike
// odeblock.Adjoint it has no options: its steps are the forward's.
type Adjoint struct{}

// Checkpoint (any method but ReversibleHeun, which has Reversible) keeps
// the state every Every steps of a forward solve that records nothing,
// and in the backward pass solves each segment again from its checkpoint
// on a tape of its own, last segment first, backpropagating through it:
// Backprop's gradients (the same operations on the same values) in memory
// of the checkpoints and one segment's tape, for the cost of one more
// forward solve. Every = 1 is odeblock.Checkpoint's schedule (a state per
// step, one step replayed at a time).
type Checkpoint struct {
	// Every is the number of steps per segment; 0 means ⌈√N⌉ for N fixed
	// steps (O(√N) states and O(√N) steps on the tape).
	Every int
}

// Recursive (any method but ReversibleHeun) is binomial checkpointing, as
// odeblock.Recursive (Griewank and Walther's revolve, one schedule for
// both in internal/revolve): it keeps at most Budget states at once (y0
// included) and tapes one step at a time in the backward pass, each step
// recomputed at most r times, r the least with C(Budget + r, r) ≥ N for N
// steps (for a budget of 8 and 10,000 steps, r = 8). Memory: Budget states
// and one step's tape, whatever N. The gradients are Backprop's.
type Recursive struct {
	// Budget is the most states kept at once, y0 included; 0 means 16,
	// odeblock.DefaultBudget.
	Budget int
}

// defaultBudget is Recursive's budget when Budget is 0 (odeblock's
// DefaultBudget).
const defaultBudget = 16

// String returns "backprop".
func (Backprop) String() string { return "backprop" }

// String returns "reversible".
func (Reversible) String() string { return "reversible" }

// String returns "adjoint".
func (Adjoint) String() string { return "adjoint" }

// String returns "checkpoint".
func (Checkpoint) String() string { return "checkpoint" }

// String returns "recursive".
func (Recursive) String() string { return "recursive" }

func (Backprop) check(string, Calculus) error { return nil }

func (Reversible) check(method string, _ Calculus) error {
	if method != ReversibleHeun {
		return fmt.Errorf("sde: the Reversible gradient needs method %q, not %q", ReversibleHeun, method)
	}
	return nil
}

func (Adjoint) check(method string, calc Calculus) error {
	if calc != Stratonovich {
		return fmt.Errorf("sde: the Adjoint gradient needs a Stratonovich method (%q or %q), not %q", Heun, ReversibleHeun, method)
	}
	return nil
}

func (m Checkpoint) check(method string, _ Calculus) error {
	if m.Every < 0 {
		return fmt.Errorf("sde: Checkpoint.Every %d is negative (0: ⌈√N⌉ steps per segment)", m.Every)
	}
	return carriesNothing("Checkpoint", method)
}

func (m Recursive) check(method string, _ Calculus) error {
	if m.Budget < 0 {
		return fmt.Errorf("sde: Recursive.Budget %d is negative (0: %d states)", m.Budget, defaultBudget)
	}
	return carriesNothing("Recursive", method)
}

// carriesNothing returns the error of a replaying gradient (named mode)
// with reversible Heun, which carries ŷ from step to step.
func carriesNothing(mode, method string) error {
	if method == ReversibleHeun {
		return fmt.Errorf("sde: the %s gradient takes methods that carry nothing from step to step; for %q use the Reversible gradient", mode, method)
	}
	return nil
}

// budget returns the budget in use: Budget, or 16 for 0.
func (m Recursive) budget() int {
	if m.Budget == 0 {
		return defaultBudget
	}
	return m.Budget
}

// checkGradient returns the error of a gradient mode that is not one of
// the package's values (a pointer to one, say), or does not fit method.
func checkGradient(m GradMode, method string, calc Calculus) error {
	switch m.(type) {
	case nil, Backprop, Reversible, Adjoint, Checkpoint, Recursive:
	default:
		return fmt.Errorf("sde: gradient mode %T is not one of the package's values (want one of %s, not a pointer)", m, strings.Join(GradModeNames(), ", "))
	}
	if m == nil {
		return nil
	}
	return m.check(method, calc)
}

// modeByName holds each mode's default value, by name.
var modeByName = modename.Of[GradMode](Backprop{}, Reversible{}, Adjoint{}, Checkpoint{}, Recursive{})

// ParseGradMode returns the mode of that name with its default options:
// "adjoint", "backprop", "checkpoint", "recursive" or "reversible" (the
// names odeblock.ParseGradMode reads for the modes both packages have).
func ParseGradMode(s string) (GradMode, error) { return modeByName.Parse("sde", s) }

// GradModeNames returns the names ParseGradMode accepts, sorted.
func GradModeNames() []string { return modeByName.Names() }
