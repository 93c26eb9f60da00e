// Package interop writes what headlab knows in the formats other tools
// read: a model's weights in TransformerLens's HookedTransformer layout or
// as PyTorch nn.Linear weights (export.go), and a dump of tokens,
// attention and logits (dump.go), as safetensors, NumPy .npz or JSON, and
// reads either layout back into headlab's model (import.go). It only lays
// tensors out and encodes them; running a model is inspect's.
package interop

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nlpodyssey/safetensors"

	"headlab/internal/atomicfile"
)

// Tensor is one named array, row-major: float32 or int64, whichever is set.
type Tensor struct {
	Name  string
	Shape []int
	F32   []float32
	I64   []int64
}

func (t Tensor) size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// bytes is the tensor's data, little-endian.
func (t Tensor) bytes() []byte {
	if t.I64 != nil {
		b := make([]byte, 0, 8*len(t.I64))
		for _, v := range t.I64 {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	b := make([]byte, 0, 4*len(t.F32))
	for _, v := range t.F32 {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// Bundle is tensors with string metadata, the content of one file.
type Bundle struct {
	Tensors []Tensor
	Meta    map[string]string
}

// Get returns the tensor with the given name.
func (b *Bundle) Get(name string) (Tensor, bool) {
	for _, t := range b.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// Format is a file format a Bundle can be written in.
type Format string

// The formats, named as the --format flags and the extensions name them.
const (
	Safetensors Format = "safetensors"
	NPZ         Format = "npz"
	JSON        Format = "json"
)

// FormatOf picks the format of an output path from its extension, or
// returns def when the path is written in place without one ("-", a
// device or pipe, /dev/stdout: atomicfile.InPlace): those have no name to
// choose by. allowed lists the formats the caller can write.
func FormatOf(path string, def Format, allowed ...Format) (Format, error) {
	ext := filepath.Ext(path)
	if ext == "" && atomicfile.InPlace(path) {
		return def, nil
	}
	ext = strings.TrimPrefix(strings.ToLower(ext), ".")
	if slices.Contains(allowed, Format(ext)) {
		return Format(ext), nil
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		names[i] = "." + string(f)
	}
	if ext == "" {
		return "", fmt.Errorf("%s: no extension to choose a format by; want %s", path, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("%s: no writer for .%s files; want %s", path, ext, strings.Join(names, ", "))
}

// WriteSafetensors writes b as a safetensors file: every tensor (F32 or
// I64) and the metadata as its __metadata__.
func WriteSafetensors(w io.Writer, b *Bundle) error {
	views := make(map[string]safetensors.TensorView, len(b.Tensors))
	for _, t := range b.Tensors {
		if err := t.check(); err != nil {
			return err
		}
		dt := safetensors.F32
		if t.I64 != nil {
			dt = safetensors.I64
		}
		shape := make([]uint64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = uint64(d)
		}
		tv, err := safetensors.NewTensorView(dt, shape, t.bytes())
		if err != nil {
			return fmt.Errorf("tensor %s: %v", t.Name, err)
		}
		views[t.Name] = tv
	}
	return safetensors.SerializeToWriter(views, b.Meta, w)
}

func (t Tensor) check() error {
	n := len(t.F32)
	if t.I64 != nil {
		n = len(t.I64)
	}
	if n != t.size() {
		return fmt.Errorf("tensor %s: %d values for shape %v", t.Name, n, t.Shape)
	}
	return nil
}
