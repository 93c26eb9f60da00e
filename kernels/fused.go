package kernels

// Kernels a device may add to Device: each computes what two of Device's
// kernels compute, reading their shared input once, with the same bits.
// graph's executor uses them where a device has them (the GL device) and
// the graph shows the pair; elsewhere it calls the two.

// WeightGrader computes a linear layer's weight and bias gradients in one
// pass over its rows.
type WeightGrader interface {
	// WeightGrad: dW = x^T dy (MatMul with tA, x k x m, dy k x n) and
	// db = the column sums of dy (ColSum of k rows of n).
	WeightGrad(S, m, n, k int, x, dy, dW, db Tensor) error
}

// ColDotSummer computes a LayerNorm's gain and bias gradients in one
// pass over its rows.
type ColDotSummer interface {
	// ColDotSum: dot = ColDot(a, b) and sum = ColSum(a), rows x d.
	ColDotSum(S, rows, d int, a, b, dot, sum Tensor) error
}
