package model

import "fmt"

// FitCalibratedPath fits the Hockney line to a calibrated path's samples
// (FitHockney) and stores alpha, beta, the relative RMS residual and the
// sizes left out as outliers in p. It is what `goring calibrate` does with
// every path it measures; a library that measures paths itself can call it
// to produce the same document.
func FitCalibratedPath(p *CalibratedPath) error {
	samples := make([]Sample, len(p.Samples))
	for i, s := range p.Samples {
		samples[i] = Sample{Bytes: float64(s.Bytes), TimeUS: s.US}
	}
	fit, err := FitHockney(samples)
	if err != nil {
		return fmt.Errorf("fitting path %s %s -> %s: %w", p.Path, p.From, p.To, err)
	}
	p.AlphaUS, p.BetaGBps, p.RelRMS = fit.AlphaUS, fit.BetaGBps, fit.RelRMS
	p.Outliers = make([]int64, 0, len(fit.Outliers))
	for _, i := range fit.Outliers {
		p.Outliers = append(p.Outliers, p.Samples[i].Bytes)
	}
	return nil
}
