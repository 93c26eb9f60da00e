// The row step of LayerNorm's gradient (layernormgradx.comp,
// layernormgrad.comp), pasted into a kernel's main inside one row's
// invocation: with g = dy*gamma, out = iv * ((g - mean(g)) -
// xh*mean(g*xh)), both means by sum4's order (see layernorm.comp), every
// product and sum rounded on its own. The kernel defines DY(j), XH(j) and
// STORE(j, v) (where out's element j goes), and go (gamma's base), iv
// (the row's inv) and D.
int full = D & ~3;
precise float m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
precise float x0 = 0.0, x1 = 0.0, x2 = 0.0, x3 = 0.0;
int j = 0;
for (; j < full; j += 4) {
	precise float g0 = DY(j) * gamma[go + j];
	precise float g1 = DY(j + 1) * gamma[go + j + 1];
	precise float g2 = DY(j + 2) * gamma[go + j + 2];
	precise float g3 = DY(j + 3) * gamma[go + j + 3];
	precise float h0 = g0 * XH(j);
	precise float h1 = g1 * XH(j + 1);
	precise float h2 = g2 * XH(j + 2);
	precise float h3 = g3 * XH(j + 3);
	m0 += g0;
	m1 += g1;
	m2 += g2;
	m3 += g3;
	x0 += h0;
	x1 += h1;
	x2 += h2;
	x3 += h3;
}
for (; j < D; j++) {
	precise float g0 = DY(j) * gamma[go + j];
	precise float h0 = g0 * XH(j);
	m0 += g0;
	x0 += h0;
}
precise float mg = div((m0 + m1) + (m2 + m3), float(D));
precise float mgx = div((x0 + x1) + (x2 + x3), float(D));
for (j = 0; j < D; j++) {
	precise float g = DY(j) * gamma[go + j];
	precise float hx = XH(j) * mgx;
	precise float t = (g - mg) - hx;
	STORE(j, iv * t);
}
