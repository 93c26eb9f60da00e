package interop

import (
	"archive/zip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MetaKey is the .npz entry that holds a Bundle's metadata: one string,
// the metadata as a JSON object (np.load(f)["__metadata__"].item()).
const MetaKey = "__metadata__"

// WriteNPZ writes b as a NumPy .npz archive, as numpy.savez_compressed
// does: one deflated .npy entry per tensor, and the metadata as a 0-d
// unicode array named MetaKey, which np.load reads without pickle.
func WriteNPZ(w io.Writer, b *Bundle) error {
	z := zip.NewWriter(w)
	for _, t := range b.Tensors {
		if err := t.check(); err != nil {
			return err
		}
		descr := "<f4"
		if t.I64 != nil {
			descr = "<i8"
		}
		if err := writeNPY(z, t.Name, descr, t.Shape, t.bytes()); err != nil {
			return err
		}
	}
	if b.Meta != nil {
		meta, err := json.Marshal(b.Meta)
		if err != nil {
			return err
		}
		// numpy's unicode arrays are UTF-32, one code point per 4 bytes.
		s := string(meta)
		data := make([]byte, 0, 4*len(s))
		for _, r := range s {
			data = binary.LittleEndian.AppendUint32(data, uint32(r))
		}
		if err := writeNPY(z, MetaKey, fmt.Sprintf("<U%d", utf8.RuneCountInString(s)), nil, data); err != nil {
			return err
		}
	}
	return z.Close()
}

// writeNPY adds name.npy in .npy format 1.0: magic, header length, a
// Python dict literal padded with spaces to a multiple of 64 bytes, data.
func writeNPY(z *zip.Writer, name, descr string, shape []int, data []byte) error {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	pad := 64 - (10+len(header)+1)%64
	if pad == 64 {
		pad = 0
	}
	header += strings.Repeat(" ", pad) + "\n"
	f, err := z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Deflate})
	if err != nil {
		return err
	}
	pre := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(pre[8:], uint16(len(header)))
	if _, err := f.Write(append(pre, header...)); err != nil {
		return err
	}
	_, err = f.Write(data)
	return err
}
