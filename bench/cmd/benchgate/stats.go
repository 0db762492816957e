package main

import (
	"math"
	"slices"
)

func median(vs []float64) float64 { return quantile(vs, 0.5) }

// quantile returns the q-quantile of vs, interpolating linearly between the two nearest
// order statistics (R's and NumPy's default).
func quantile(vs []float64, q float64) float64 {
	vs = slices.Sorted(slices.Values(vs))
	pos := q * float64(len(vs)-1)
	i := int(pos)
	if i+1 >= len(vs) {
		return vs[len(vs)-1]
	}
	return vs[i] + (pos-float64(i))*(vs[i+1]-vs[i])
}

// signTest returns the one-sided p-value of k of n passes beyond a bound: the chance of at
// least k heads in n tosses of a fair coin, which is how often passes would land beyond the
// bound at least that often if the true median sat on it.
func signTest(k, n int) float64 {
	p := 0.0
	for j := k; j <= n; j++ {
		p += math.Exp(logChoose(n, j) - float64(n)*math.Ln2)
	}
	return min(p, 1)
}

// logChoose is the logarithm of n choose k, which stays finite for any number of passes.
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
