// Mix: O = P V, one invocation per element (b, i, h, d) of O.

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 2) writeonly buffer Obuf { float o[]; };

void main() {
	uint g = gid();
	if (g >= total) return;
	int x = int(g);
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int i = x % T;
	int b = x / T;
	int po = prow(b, h, i);
	int n = keys(i);
	float acc = 0.0;
	for (int j = 0; j < n; j++) {
		acc += p[po + j] * v[row(b, j, h) + d];
	}
	o[int(g)] = acc;
}
