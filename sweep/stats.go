package sweep

import (
	"math"
	"slices"
)

// Stats describes a sample: its size, mean, median, minimum and maximum.
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Describe computes Stats of xs; the median of an even count is the mean
// of the middle two. An empty sample is all zeros.
func Describe(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stats{N: n, Mean: sum / float64(n), Median: med, Min: s[0], Max: s[n-1]}
}

// z95 is the two-sided 95% quantile of the standard normal.
const z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval for k successes in n trials. It
// stays inside [0, 1] and is honest at k = 0 or k = n, where the normal
// approximation collapses to a point. n = 0 gives [0, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), z95*z95
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = max(0, centre-half), min(1, centre+half)
	// Exactly 0 and 1 at the ends, which rounding misses by an ulp: the
	// interval must hold the observed fraction.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// ModeGap is the smallest gap, in accuracy (0.15 = 15 points), between
// neighbouring sorted per-seed values that can split them into two modes.
const ModeGap = 0.15

// Modes is how per-seed values split in two, if they do.
type Modes struct {
	// Split is true when the values fall into two modes (see SplitModes);
	// the other fields are then set.
	Split bool `json:"split"`
	// Cut lies halfway across the gap: Low holds the values below it.
	Cut  float64 `json:"cut,omitempty"`
	Gap  float64 `json:"gap,omitempty"`
	Low  *Stats  `json:"low,omitempty"`
	High *Stats  `json:"high,omitempty"`
}

// SplitModes applies the two-mode rule of docs/sweeps.md: sort the values
// and take the widest gap between neighbours (the first, on a tie). They
// split in two when there are at least 3 values, the gap is at least
// ModeGap, and it is more than twice the spread (max - min) of either
// side, so that values spread evenly never count as two clusters while one
// lone outlier far from a tight cluster does (a mode of one seed).
func SplitModes(xs []float64) Modes {
	if len(xs) < 3 {
		return Modes{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at, gap := 0, -1.0
	for i := 1; i < len(s); i++ {
		if g := s[i] - s[i-1]; g > gap {
			at, gap = i, g
		}
	}
	low, high := s[:at], s[at:]
	spread := max(low[len(low)-1]-low[0], high[len(high)-1]-high[0])
	if gap < ModeGap || gap <= 2*spread {
		return Modes{}
	}
	lo, hi := Describe(low), Describe(high)
	return Modes{Split: true, Cut: (s[at-1] + s[at]) / 2, Gap: gap, Low: &lo, High: &hi}
}

// Bin is one bar of a histogram: the values in [Lo, Hi) (the last bin
// includes Hi).
type Bin struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int     `json:"count"`
}

// HistBins is the number of histogram bins over [0, 1]: 5 points each.
const HistBins = 20

// Histogram counts accuracies in HistBins equal bins over [0, 1]; values
// outside are clamped into the end bins.
func Histogram(xs []float64) []Bin {
	bins := make([]Bin, HistBins)
	for i := range bins {
		bins[i].Lo, bins[i].Hi = float64(i)/HistBins, float64(i+1)/HistBins
	}
	for _, x := range xs {
		// Round first so that 0.95 lands in [0.95, 1) despite float error.
		i := int(math.Floor(math.Round(x*HistBins*1e9) / 1e9))
		bins[min(max(i, 0), HistBins-1)].Count++
	}
	return bins
}
