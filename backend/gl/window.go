package gl

import "github.com/go-gl/glfw/v3.3/glfw"

// Window returns the GLFW window whose context the Backend's thread holds.
// New makes it hidden and 1x1; the viewer (viz/window) shows and resizes
// it, so that training kernels and drawing share one context and one
// thread, and the probabilities can go from ProbsBuffer into textures
// without leaving the GPU.
//
// The window, like the context, belongs to the GL thread: use it, and
// glfw.PollEvents, only inside Call. Close destroys it.
func (b *Backend) Window() *glfw.Window { return b.win }
