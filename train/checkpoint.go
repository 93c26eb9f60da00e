package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nlpodyssey/safetensors"

	"headlab/graph"
	"headlab/internal/atomicfile"
	"headlab/internal/memlimit"
)

// Checkpoint file names inside a run directory.
const (
	ConfigFile  = "config.json"
	WeightsFile = "model.safetensors"
)

// memLimit is what this process may use; tests replace it.
var memLimit = memlimit.Read

// checkpointFormat versions config.json.
const checkpointFormat = 1

type configFile struct {
	Format int          `json:"format"`
	Train  Config       `json:"train"`
	Model  graph.Config `json:"model"`
	Result *Result      `json:"result,omitempty"`
}

// File is an extra file saved with a checkpoint, such as a history.
type File struct {
	Name string
	Data []byte
}

// Save writes m (and its result, if any) to dir as config.json plus
// model.safetensors, and any extra files, through atomicfile.ReplaceDir:
// the files are written and fsynced in a temporary directory beside dir
// that is then exchanged with dir in one step, so that a crash leaves the
// old checkpoint or the new one whole, never half of one, and the next
// save removes what the crash left.
func Save(dir string, m *Model, res *Result, extra ...File) error {
	cfg, err := json.MarshalIndent(configFile{Format: checkpointFormat, Train: m.Train, Model: m.Shape, Result: res}, "", "  ")
	if err != nil {
		return err
	}
	weights, err := encodeWeights(m.Weights)
	if err != nil {
		return err
	}
	if err := CheckSaveDir(dir); err != nil {
		return fmt.Errorf("save: %s %v", dir, err)
	}
	files := append([]File{{ConfigFile, append(cfg, '\n')}, {WeightsFile, weights}}, extra...)
	err = atomicfile.ReplaceDir(dir, func(tmp string) error {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(tmp, f.Name), f.Data, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	return nil
}

// CheckSaveDir says why Save could not replace dir: it exists and is not
// a directory, or is a directory that is neither empty nor a checkpoint
// (Save replaces it whole, and would lose what it holds).
func CheckSaveDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // Save makes it; a file on its way is the parent's problem
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("exists and is not a directory")
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			return errors.New("exists and is not a headlab checkpoint")
		}
	}
	return nil
}

func encodeWeights(w *graph.Weights) ([]byte, error) {
	views := make(map[string]safetensors.TensorView, len(w.Params))
	for _, p := range w.Params {
		data := make([]byte, 0, 4*len(p.Data))
		for _, v := range p.Data {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		shape := make([]uint64, len(p.Shape))
		for i, s := range p.Shape {
			shape[i] = uint64(s)
		}
		tv, err := safetensors.NewTensorView(safetensors.F32, shape, data)
		if err != nil {
			return nil, err
		}
		views[p.Name] = tv
	}
	return safetensors.Serialize(views, map[string]string{"format": "headlab"})
}

// Load reads the checkpoint in dir. The size of model.safetensors is
// checked against the model config.json describes before it is read, so
// that a huge or truncated file is refused without reading it.
func Load(dir string) (*Model, *Result, error) {
	cfg, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("no checkpoint in %s: %s is missing", dir, ConfigFile)
		}
		return nil, nil, err
	}
	cf, count, err := decodeConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("corrupt checkpoint in %s: %w", dir, err)
	}
	path := filepath.Join(dir, WeightsFile)
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("corrupt checkpoint in %s: %s is missing", dir, WeightsFile)
		}
		return nil, nil, err
	}
	if lo, hi := weightsSize(cf.Model, count); fi.Size() < lo || fi.Size() > hi || !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("corrupt checkpoint in %s: %s is %d bytes, the model of %s holds %d parameters (%d to %d bytes)",
			dir, WeightsFile, fi.Size(), ConfigFile, count, lo, hi)
	}
	// Reading holds the file and the decoded weights at once: a config
	// that asks for a model this process cannot hold is refused before
	// anything is read (the Go runtime would die of it).
	if need, lim := fi.Size()+4*int64(count), memLimit(); lim.Known() && need > lim.Bytes {
		return nil, nil, fmt.Errorf("checkpoint in %s: loading its %d parameters needs about %s, more than the %s this process may use (%s)",
			dir, count, memlimit.GiB(need), memlimit.GiB(lim.Bytes), lim.What)
	}
	weights, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	m, res, err := Decode(cfg, weights)
	if err != nil {
		return nil, nil, fmt.Errorf("corrupt checkpoint in %s: %w", dir, err)
	}
	return m, res, nil
}

// weightsSize bounds the size of a safetensors file holding count F32
// parameters of shape c: the data, its 8-byte length and a JSON header
// with at least `"NAME":{"dtype":"F32","shape":[N],"data_offsets":[A,B]}`
// for each tensor and at most 64 KiB plus 256 bytes a tensor.
func weightsSize(c graph.Config, count int) (lo, hi int64) {
	data := 8 + 4*int64(count)
	lo, hi = data, data+64<<10
	for _, p := range graph.ParamShapes(c) {
		lo += int64(len(p.Name)) + 40
		hi += 256
	}
	return lo, hi
}

// decodeConfig reads config.json and counts the parameters of its model.
func decodeConfig(cfgJSON []byte) (configFile, int, error) {
	var cf configFile
	dec := json.NewDecoder(bytes.NewReader(cfgJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return cf, 0, fmt.Errorf("%s: %v", ConfigFile, err)
	}
	if cf.Format != checkpointFormat {
		return cf, 0, fmt.Errorf("%s: format %d, this headlab reads %d", ConfigFile, cf.Format, checkpointFormat)
	}
	if err := cf.Train.Validate(); err != nil {
		return cf, 0, fmt.Errorf("%s: %v", ConfigFile, err)
	}
	t, _ := cf.Train.NewTask()
	if cf.Train.Model(t) != cf.Model {
		return cf, 0, fmt.Errorf("%s: model shape %s does not match the training flags", ConfigFile, cf.Model)
	}
	count := 0
	for _, p := range graph.ParamShapes(cf.Model) {
		n := 1
		for _, d := range p.Shape {
			n *= d
		}
		count += n
	}
	return cf, count, nil
}

// Decode builds a model from the bytes of config.json and model.safetensors.
// It returns an error, never panics, on any input.
func Decode(cfgJSON, weights []byte) (m *Model, res *Result, err error) {
	defer func() {
		// The safetensors parser is not ours: contain any panic it has.
		if r := recover(); r != nil {
			m, res, err = nil, nil, fmt.Errorf("unreadable weights: %v", r)
		}
	}()
	cf, count, err := decodeConfig(cfgJSON)
	if err != nil {
		return nil, nil, err
	}
	t, _ := cf.Train.NewTask()
	// Check the size before allocating: a config can ask for a huge model.
	if len(weights) < 4*count {
		return nil, nil, fmt.Errorf("%s: %d bytes, too short for %d parameters", WeightsFile, len(weights), count)
	}
	st, err := safetensors.Deserialize(weights)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", WeightsFile, err)
	}
	w := graph.NewWeights(cf.Model)
	if st.Len() != len(w.Params) {
		return nil, nil, fmt.Errorf("%s: %d tensors, want %d", WeightsFile, st.Len(), len(w.Params))
	}
	for _, p := range w.Params {
		tv, ok := st.Tensor(p.Name)
		if !ok {
			return nil, nil, fmt.Errorf("%s: tensor %s is missing", WeightsFile, p.Name)
		}
		if tv.DType() != safetensors.F32 {
			return nil, nil, fmt.Errorf("%s: tensor %s is %s, want F32", WeightsFile, p.Name, tv.DType())
		}
		if fmt.Sprint(tv.Shape()) != fmt.Sprint(p.Shape) {
			return nil, nil, fmt.Errorf("%s: tensor %s has shape %v, want %v", WeightsFile, p.Name, tv.Shape(), p.Shape)
		}
		data := tv.Data()
		if len(data) != 4*len(p.Data) {
			return nil, nil, fmt.Errorf("%s: tensor %s has %d bytes, want %d", WeightsFile, p.Name, len(data), 4*len(p.Data))
		}
		for i := range p.Data {
			v := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("%s: tensor %s holds %v", WeightsFile, p.Name, v)
			}
			p.Data[i] = v
		}
	}
	return &Model{Train: cf.Train, Shape: cf.Model, Task: t, Weights: w}, cf.Result, nil
}
