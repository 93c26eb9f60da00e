// MarkDiverged: failed = atStep (the step) where failed is 0 and loss is
// not finite; one invocation per seed.

layout(std430, binding = 0) readonly buffer LossBuf { float loss[]; };
layout(std430, binding = 1) buffer Fbuf { float failed[]; };

uniform float atStep;

void main() {
	int s, i;
	if (!item(s, i)) return;
	int fo = base(1, s);
	if (!nonzero(failed[fo]) && !finite(loss[base(0, s)])) failed[fo] = atStep;
}
