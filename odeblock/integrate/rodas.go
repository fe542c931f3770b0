package integrate

import "math"

// rodasCoeffs are the coefficients of a six-stage stiffly accurate
// Rosenbrock method in Hairer and Wanner's form (their code RODAS): with
// J = ∂f/∂y, T = ∂f/∂t at the step's start and M = I − γ·h·J, the stages
// K_i (increments divided by h) of a step from (t, y) of size h are
//
//	y_i = y + h·Σ_{j<i} a_ij·K_j,  f_i = f(t + c_i·h, y_i)
//	K_i = γ·M⁻¹(f_i + h·d_i·T + Σ_{j<i} c_ij·K_j)
//
// (y_1 = y, f_1 = f(t, y)); y_6 = y_5 + h·K_5 and the new solution is
// y_6 + h·K_6, K_6 being the error estimate. Dense output:
// y(t + θh) = y + h·Σ_i (θ·m_i + θ(1−θ)(d2_i + θ·d3_i))·K_i with m the
// weights of the solution.
type rodasCoeffs struct {
	gamma  float64
	c, d   [6]float64    // nodes and T's weights
	a, cc  [6][5]float64 // a_ij and c_ij, j < i
	m      [6]float64    // y1 = y + h·Σ m_i·K_i
	d2, d3 [6]float64    // dense output
}

// rodas4 is Hairer and Wanner's RODAS (order 4, embedded order 3,
// L-stable, stiffly accurate; Solving ODEs II, section VI.4), the
// coefficients of their code with METH = 1.
var rodas4Coeffs = &rodasCoeffs{
	gamma: 0.25,
	c:     [6]float64{0, 0.386, 0.21, 0.63, 1, 1},
	d:     [6]float64{0.25, -0.1043, 0.1035, -0.3620000000000023e-01, 0, 0},
	a: [6][5]float64{
		{},
		{0.1544000000000000e+01},
		{0.9466785280815826e+00, 0.2557011698983284e+00},
		{0.3314825187068521e+01, 0.2896124015972201e+01, 0.9986419139977817e+00},
		{0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02, -0.6878860361058950e+00},
		{0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02, -0.6878860361058950e+00, 1},
	},
	cc: [6][5]float64{
		{},
		{-0.5668800000000000e+01},
		{-0.2430093356833875e+01, -0.2063599157091915e+00},
		{-0.1073529058151375e+00, -0.9594562251023355e+01, -0.2047028614809616e+02},
		{0.7496443313967647e+01, -0.1024680431464352e+02, -0.3399990352819905e+02, 0.1170890893206160e+02},
		{0.8083246795921522e+01, -0.7981132988064893e+01, -0.3152159432874371e+02, 0.1631930543123136e+02, -0.6058818238834054e+01},
	},
	m:  [6]float64{0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02, -0.6878860361058950e+00, 1, 1},
	d2: [6]float64{0.1012623508344586e+02, -0.7487995877610167e+01, -0.3480091861555747e+02, -0.7992771707568823e+01, 0.1025137723295662e+01, 0},
	d3: [6]float64{-0.6762803392801253e+00, 0.6087714651680015e+01, 0.1643084320892478e+02, 0.2476722511418386e+02, -0.6594389125716872e+01, 0},
}

// rodas4 stores its stages as [f(t, y), K_1, …, K_6]: the solution's
// weights are m on the K and the error estimate is h·K_6. f(t + h, y1) is
// evaluated only once a step is accepted (no FSAL stage, which a rejected
// step would waste). Its weights are not those of an explicit RK method
// (they do not sum to 1), so the tableau's consistency checks do not apply
// to it.
var rodas4 = &Tableau{
	Name:   "rodas4",
	C:      make([]float64, 7),
	A:      [][]float64{{}, {0}, {0, 0}, {0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}},
	B:      append([]float64{0}, rodas4Coeffs.m[:]...),
	E:      []float64{0, 0, 0, 0, 0, 0, 1},
	Order:  4, // h·K_6, the difference to the embedded third-order solution, is O(h⁴)
	family: rosenbrockFamily{rodas: rodas4Coeffs},
	Dense: func(x float64, w []float64) {
		r := rodas4Coeffs
		w[0] = 0
		for i := range 6 {
			w[1+i] = x*r.m[i] + x*(1-x)*(r.d2[i]+x*r.d3[i])
		}
	},
}

// rodasStep takes the step g of a Rodas method from b.y0 with b.k[0] =
// f(t, y), leaving y1 in b.y1.
func (m *rosenbrock[T]) rodasStep(b stepBufs[T], eval evalFunc[T], g stepGeom) error {
	r, n, h := m.rodas, b.n, g.h
	w := &m.w
	if ok, err := m.matrix(b, eval, g, r.gamma*h); !ok || err != nil {
		return err
	}
	K := b.k[1:7]
	fi := b.fnext // f_i (f at the step's end once it is accepted)
	for i := range 6 {
		if i == 0 {
			copy(fi, b.k[0])
		} else {
			for l := range n {
				acc := 0.0
				for j := range i {
					acc += r.a[i][j] * float64(K[j][l])
				}
				b.tmp[l] = b.y0[l] + T(h*acc)
			}
			if err := eval(evalStage, 1+i, stageTime(g.t, h, g.end, r.c[i], g.leftLimit), b.tmp, fi); err != nil {
				return err
			}
		}
		for l := range n {
			v := float64(fi[l]) + h*r.d[i]*w.dt[l]
			for j := range i {
				v += r.cc[i][j] * float64(K[j][l])
			}
			w.rhs[l] = r.gamma * v
		}
		rosSolve(w, K[i])
	}
	for l := range n {
		acc := 0.0
		for j := range 6 {
			acc += r.m[j] * float64(K[j][l])
		}
		b.y1[l] = b.y0[l] + T(h*acc)
	}
	return nil
}

// rejectNonFinite makes the step under way one the loop rejects for a
// non-finite state (and retries smaller), forgetting the Jacobian.
func (m *rosenbrock[T]) rejectNonFinite(b stepBufs[T]) {
	nan := T(math.NaN())
	for i := range b.y1 {
		b.y1[i] = nan
	}
	m.w.jacValid = false
}
