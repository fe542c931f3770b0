package optim

import (
	"fmt"
	"math"
)

// Zero is 0. It asked for a real zero when a config field left at 0 took
// torch.optim's default; a field now means what it says, so Zero is the
// same as writing 0.
//
// Deprecated: fields mean what they say; 0 is 0.
const Zero = 0.0

// checkLRField reports a learning rate that no optimizer is made with: one
// that is not finite and > 0. A config that leaves LR at 0 is refused
// rather than run without moving, since under the earlier rule (0: torch's
// default) it meant torch's learning rate; a learning rate of 0 is set on
// the optimizer made, with SetLR(0). defaults names the function that
// returns torch's defaults ("AdamDefaults").
func checkLRField(kind, config string, lr float64, defaults string) error {
	if lr > 0 && !math.IsInf(lr, 0) {
		return nil
	}
	return fmt.Errorf("optim: %s: %s.LR = %v, want a finite learning rate > 0 (a field means what it says, 0 is 0: for torch's defaults start from optim.%s() and set the fields you change; for a learning rate of 0, call SetLR(0) on the optimizer made)", kind, config, lr, defaults)
}

// fieldError is the error of a config field outside its range: it names
// the field, its value and the range wanted.
func fieldError(kind, config, field string, v float64, want string) error {
	return fmt.Errorf("optim: %s: %s.%s = %v, want %s", kind, config, field, v, want)
}

// nonNegative reports a field that is not finite and ≥ 0.
func nonNegative(kind, config, field string, v float64) error {
	if v >= 0 && !math.IsInf(v, 0) {
		return nil
	}
	return fieldError(kind, config, field, v, "a finite value ≥ 0")
}
