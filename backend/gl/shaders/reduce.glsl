// Workgroup reductions, after common.glsl for the kernels that give each
// workgroup to one seed and reduce over its rows. Every invocation of the
// workgroup must call them (they hold barriers). The trees have a fixed
// shape (WG leaves, pairs at distance 32, 16, ... 1), so the order of
// the sums depends on nothing but the row count.

shared int redI[WG];
shared double redD[WG];

int sumInt(int v) {
	int l = lid();
	redI[l] = v;
	memoryBarrierShared();
	barrier();
	for (int h = WG / 2; h > 0; h /= 2) {
		if (l < h) redI[l] += redI[l + h];
		memoryBarrierShared();
		barrier();
	}
	int total = redI[0];
	memoryBarrierShared();
	barrier();
	return total;
}

double sumDouble(double v) {
	int l = lid();
	redD[l] = v;
	memoryBarrierShared();
	barrier();
	for (int h = WG / 2; h > 0; h /= 2) {
		if (l < h) redD[l] += redD[l + h];
		memoryBarrierShared();
		barrier();
	}
	double total = redD[0];
	memoryBarrierShared();
	barrier();
	return total;
}

// answerWeight is 1/(answer rows), 0 when there are none, over the R
// targets at t (one float per row, negative where the row is no answer),
// counted by the whole workgroup: an exact integer sum.
float answerWeight(int t, int R) {
	int c = 0;
	for (int r = lid(); r < R; r += WG) {
		if (targets[t + r] >= 0.0) c++;
	}
	int a = sumInt(c);
	return a == 0 ? 0.0 : div(1.0, float(a));
}
