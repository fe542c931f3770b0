package optim

import "math"

// Zero, set as a hyperparameter of SGDConfig, AdamConfig or RMSpropConfig,
// asks for exactly zero: a field left at 0 takes torch.optim's default (see
// the package documentation), so AdamConfig{LR: 1e-3, Eps: optim.Zero} is
// Adam with betas (0.9, 0.999) and no ε. Zero is the negative float64
// closest to 0 (−5e−324); no other negative value is valid.
const Zero = -math.SmallestNonzeroFloat64

// orDefault resolves one field of a config: 0 is def (torch's default),
// Zero is 0, any other value is itself.
func orDefault(v, def float64) float64 {
	switch v {
	case 0:
		return def
	case Zero:
		return 0
	}
	return v
}

// asSet is the inverse of orDefault for an optimizer's Config: a resolved
// value of 0 against a nonzero default is reported as Zero, so that the
// config given back makes the same optimizer.
func asSet(v, def float64) float64 {
	if v == 0 && def != 0 {
		return Zero
	}
	return v
}
