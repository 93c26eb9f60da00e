package tasks

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/nlpodyssey/safetensors"
)

// The arrays a data file in tensors holds, as `headlab dump` writes
// them: tokens and targets, int64 [N, T], targets -1 where a position
// has no answer.
var tensorNames = []string{"tokens", "targets"}

// readSafetensors reads tokens and targets from a safetensors file.
func readSafetensors(path string) (examples, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return examples{}, err
	}
	st, err := deserialize(data)
	if err != nil {
		return examples{}, fmt.Errorf("%s: not a safetensors file: %v", path, err)
	}
	var arrays [2][]int64
	var shapes [2][]int
	for i, name := range tensorNames {
		tv, ok := st.Tensor(name)
		if !ok {
			return examples{}, fmt.Errorf("%s: no array %s", path, name)
		}
		if tv.DType() != safetensors.I64 {
			return examples{}, fmt.Errorf("%s: array %s is %s, want I64", path, name, tv.DType())
		}
		for _, d := range tv.Shape() {
			shapes[i] = append(shapes[i], int(d))
		}
		raw := tv.Data()
		arrays[i] = make([]int64, len(raw)/8)
		for k := range arrays[i] {
			arrays[i][k] = int64(binary.LittleEndian.Uint64(raw[8*k:]))
		}
	}
	return fromArrays(path, arrays, shapes)
}

// deserialize contains a panic of the safetensors parser, which is not
// ours, on a malformed file.
func deserialize(data []byte) (st safetensors.SafeTensors, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return safetensors.Deserialize(data)
}

// npyHeader reads the dict of a .npy header.
var npyHeader = regexp.MustCompile(`'descr':\s*'([^']*)',\s*'fortran_order':\s*(True|False),\s*'shape':\s*\(([^)]*)\)`)

// readNPZ reads tokens.npy and targets.npy from a NumPy .npz archive.
func readNPZ(path string) (examples, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return examples{}, fmt.Errorf("%s: not an .npz archive: %v", path, err)
	}
	defer z.Close()
	var arrays [2][]int64
	var shapes [2][]int
	for i, name := range tensorNames {
		f, err := z.Open(name + ".npy")
		if err != nil {
			return examples{}, fmt.Errorf("%s: no array %s", path, name)
		}
		data, err := io.ReadAll(io.LimitReader(f, 1<<31))
		f.Close()
		if err != nil {
			return examples{}, fmt.Errorf("%s: array %s: %v", path, name, err)
		}
		if shapes[i], arrays[i], err = parseNPY(data); err != nil {
			return examples{}, fmt.Errorf("%s: array %s: %v", path, name, err)
		}
	}
	return fromArrays(path, arrays, shapes)
}

// parseNPY reads a .npy array of little-endian int64 in C order.
func parseNPY(data []byte) ([]int, []int64, error) {
	if len(data) < 10 || string(data[:6]) != "\x93NUMPY" {
		return nil, nil, fmt.Errorf("not a .npy array")
	}
	start, n := 10, int(binary.LittleEndian.Uint16(data[8:]))
	if data[6] >= 2 {
		if len(data) < 12 {
			return nil, nil, fmt.Errorf("not a .npy array")
		}
		start, n = 12, int(binary.LittleEndian.Uint32(data[8:]))
	}
	if start+n > len(data) {
		return nil, nil, fmt.Errorf("a header past the end")
	}
	m := npyHeader.FindStringSubmatch(string(data[start : start+n]))
	if m == nil {
		return nil, nil, fmt.Errorf("an unreadable header")
	}
	if m[1] != "<i8" || m[2] != "False" {
		return nil, nil, fmt.Errorf("dtype %s (fortran order %s), want <i8 in C order", m[1], m[2])
	}
	var shape []int
	for _, s := range strings.Split(m[3], ",") {
		if s = strings.TrimSpace(s); s != "" {
			d, err := strconv.Atoi(s)
			if err != nil {
				return nil, nil, fmt.Errorf("shape (%s)", m[3])
			}
			shape = append(shape, d)
		}
	}
	raw := data[start+n:]
	vals := make([]int64, len(raw)/8)
	for k := range vals {
		vals[k] = int64(binary.LittleEndian.Uint64(raw[8*k:]))
	}
	return shape, vals, nil
}

// fromArrays checks tokens and targets [N, T] and makes them examples.
func fromArrays(path string, arrays [2][]int64, shapes [2][]int) (examples, error) {
	for i, name := range tensorNames {
		s := shapes[i]
		if len(s) != 2 || s[0] < 0 || s[1] < 0 || s[0]*s[1] != len(arrays[i]) {
			return examples{}, fmt.Errorf("%s: array %s has shape %v and %d values, want [N, T]", path, name, s, len(arrays[i]))
		}
	}
	if shapes[0][0] != shapes[1][0] || shapes[0][1] != shapes[1][1] {
		return examples{}, fmt.Errorf("%s: array targets has shape %v, tokens %v", path, shapes[1], shapes[0])
	}
	ex := examples{n: shapes[0][0]}
	if shapes[0][1] == 0 {
		return examples{}, fmt.Errorf("%s: array tokens has sequences of no tokens", path)
	}
	for k := range arrays[0] {
		tok, y := arrays[0][k], arrays[1][k]
		if tok < 0 || tok >= MaxVocab || y < NoTarget || y >= MaxVocab {
			field, v := "tokens", tok
			if tok >= 0 && tok < MaxVocab {
				field, v = "targets", y
			}
			return examples{}, fmt.Errorf("%s: array %s[%d][%d] is %d, not a token id%s", path, field, k/shapes[0][1], k%shapes[0][1], v,
				map[bool]string{true: " or -1 (no answer)", false: ""}[field == "targets"])
		}
		ex.tokens = append(ex.tokens, int(tok))
		ex.targets = append(ex.targets, int(y))
	}
	return ex, nil
}
