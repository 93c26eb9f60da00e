package window

import (
	"headlab/glctx"
	"headlab/kernels"
)

// TextureSource is a kernels.Device whose tensors live in GL buffers and
// that copies them into textures of its own GL context: when Options.Kernels
// is one and its Thread is Options.Display, the viewer fills its heatmap
// textures from the evaluator's attention tensors without the attention
// leaving the GPU. The GL device of backend/gl is one; the CPU device is
// not, and its attention is uploaded from the host instead.
type TextureSource interface {
	// Thread is the GL thread whose context holds the device's buffers.
	Thread() *glctx.Thread
	// FillTexture copies layers consecutive w x h matrices of floats, row
	// by row (the first layers*w*h floats of src, seed 0's), into layers
	// first ... first+layers-1 of level 0 of tex, a GL_TEXTURE_2D_ARRAY of
	// GL_R32F in Thread's context, at least w x h and first+layers layers
	// in size, with GL's default pixel-unpack state (row length, image
	// height and skips 0). It runs on the GL thread, after the device work
	// queued before it, and waits for it; it may leave the texture and
	// other bindings changed. An error says the tensor is not the device's
	// or too short, or reports GL errors.
	FillTexture(src kernels.Tensor, tex uint32, first, layers, w, h int) error
}
