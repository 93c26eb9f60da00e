package gl

import (
	"fmt"
	"math"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/kernels"
)

// FillTexture copies layers consecutive w x h matrices of floats of src
// (seed 0's first layers*w*h floats, row by row) into layers first ...
// first+layers-1 of level 0 of tex, a GL_TEXTURE_2D_ARRAY of GL_R32F in the
// device's context, without leaving the GPU: the buffer is bound as the
// pixel-unpack buffer and glTexSubImage3D reads from it. It runs on the GL
// thread (at once when called there, as from inside Thread().Call), after
// the kernels queued before it, and returns their first error as Download
// does, or the GL errors of the copy (a tex that is not such a texture, or
// is too small). The unpack state other than the alignment is GL's default
// (row length, image height, skips 0); the texture binding of the active
// unit is left changed. It implements the viewer's window.TextureSource.
func (d *Device) FillTexture(src kernels.Tensor, tex uint32, first, layers, w, h int) error {
	if err := sizes("FillTexture", first, layers, w, h); err != nil {
		return err
	}
	n := int64(layers) * int64(w) * int64(h)
	if n > math.MaxInt32 || first+layers > math.MaxInt32 || w > math.MaxInt32 || h > math.MaxInt32 {
		return fmt.Errorf("gl: FillTexture: %d layers of %dx%d overflow GL's sizes", layers, w, h)
	}
	if err := d.check("FillTexture", 1, []kernels.Tensor{src}, []int{int(n)}); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	id := src.Buf.(*Buffer).id
	err := d.th.Call(func() {
		// The kernels wrote the buffer as shader storage; the unpack reads
		// it as a pixel buffer.
		ogl.MemoryBarrier(ogl.PIXEL_BUFFER_BARRIER_BIT)
		ogl.BindBuffer(ogl.PIXEL_UNPACK_BUFFER, id)
		ogl.BindTexture(ogl.TEXTURE_2D_ARRAY, tex)
		ogl.PixelStorei(ogl.UNPACK_ALIGNMENT, 4)
		//lint:ignore SA1019 TexSubImage3D has no WithOffset form: the pointer is an offset into the bound unpack buffer.
		at := ogl.PtrOffset(4 * src.Off)
		ogl.TexSubImage3D(ogl.TEXTURE_2D_ARRAY, 0, 0, 0, int32(first), int32(w), int32(h), int32(layers),
			ogl.RED, ogl.FLOAT, at)
		ogl.BindBuffer(ogl.PIXEL_UNPACK_BUFFER, 0)
	})
	return d.firstErr(err, nil)
}
