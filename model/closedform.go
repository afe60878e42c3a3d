package model

// Closed forms for the shares theta_i of Multi-path model, section 3.2-3.4.
//
// Every path's time is (or is approximated by) a straight line in the bytes
// x it carries, T_i(x) = Delta_i + Omega_i*x, with Omega_i in microseconds per
// byte and Delta_i in microseconds. Making all used paths finish at the same
// time T and asking the shares to add up to the message gives one linear
// equation for T, hence theta_i in closed form (eq. 8, 11, 24). The three
// cases differ only in what Omega_i and Delta_i are.

// Line is a path's time as a straight line in the bytes it carries:
// T(x) = DeltaUS + OmegaUSPerByte*x (Multi-path model, eq. 21).
type Line struct {
	OmegaUSPerByte float64
	DeltaUS        float64
}

// At evaluates the line at x bytes.
func (l Line) At(x float64) float64 { return l.DeltaUS + l.OmegaUSPerByte*x }

// DirectLine is the line of a direct path: Omega = 1/beta, Delta = alpha
// (Multi-path model, eq. 6).
func DirectLine(p Path) Line {
	return Line{OmegaUSPerByte: usPerByte(p.Beta1GBps), DeltaUS: p.Alpha1US}
}

// UnpipelinedLine is the line of a staged path sent in one piece:
// Omega = 1/beta1 + 1/beta2, Delta = alpha1 + alpha2 + epsilon (Multi-path model,
// the definitions after eq. 9). A direct path gives DirectLine.
func UnpipelinedLine(p Path) Line {
	if !p.Staged {
		return DirectLine(p)
	}
	return Line{
		OmegaUSPerByte: usPerByte(p.Beta1GBps) + usPerByte(p.Beta2GBps),
		DeltaUS:        p.Alpha1US + p.Alpha2US + p.EpsilonUS,
	}
}

// ThetaDirect is Multi-path model eq. 8: the shares that make p direct paths with
// startups alphaUS and bandwidths betaGBps finish n bytes at the same time.
//
//	theta_i = beta_i/B * (1 - alpha_i*B/n + sum_j alpha_j*beta_j / n),  B = sum_j beta_j
//
// A share may come out negative: that path cannot finish its part before the
// others are done even with nothing to send (Theorem 1's condition fails);
// callers drop it and solve again.
func ThetaDirect(alphaUS, betaGBps []float64, n float64) []float64 {
	var sumB, sumAB float64
	for i := range betaGBps {
		b := bytesPerUS(betaGBps[i])
		sumB += b
		sumAB += alphaUS[i] * b
	}
	theta := make([]float64, len(betaGBps))
	for i := range theta {
		b := bytesPerUS(betaGBps[i])
		theta[i] = b / sumB * (1 - alphaUS[i]*sumB/n + sumAB/n)
	}
	return theta
}

// ThetaLines is Multi-path model eq. 11 and eq. 24 (the same formula; only the lines
// differ): with S = sum_j 1/Omega_j and D = sum_j Delta_j/Omega_j,
//
//	theta_i = 1/(Omega_i*S) * (1 - Delta_i*S/n + D/n).
//
// This is Algorithm 1 lines 24-26 (inv_sum = S, delta_sum = D). theta is
// filled in place when it has the right length, else allocated.
func ThetaLines(lines []Line, n float64, theta []float64) []float64 {
	if len(theta) != len(lines) {
		theta = make([]float64, len(lines))
	}
	var invSum, deltaSum float64
	for _, l := range lines {
		invSum += 1 / l.OmegaUSPerByte
		deltaSum += l.DeltaUS / l.OmegaUSPerByte
	}
	for i, l := range lines {
		theta[i] = (1 - l.DeltaUS*invSum/n + deltaSum/n) / (l.OmegaUSPerByte * invSum)
	}
	return theta
}

// CommonFinishUS is the time T at which paths with the given lines, sharing
// n bytes by ThetaLines, all finish: T = (n + D)/S.
func CommonFinishUS(lines []Line, n float64) float64 {
	var invSum, deltaSum float64
	for _, l := range lines {
		invSum += 1 / l.OmegaUSPerByte
		deltaSum += l.DeltaUS / l.OmegaUSPerByte
	}
	return (n + deltaSum) / invSum
}
