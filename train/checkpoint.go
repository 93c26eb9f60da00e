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

	"github.com/nlpodyssey/safetensors"

	"headlab/graph"
	"headlab/tasks"
)

// Checkpoint file names inside a run directory.
const (
	ConfigFile  = "config.json"
	WeightsFile = "model.safetensors"
)

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
// model.safetensors, and any extra files. Everything is written to a
// temporary directory beside dir and renamed into place, so an interrupted
// save leaves no half checkpoint; an existing checkpoint in dir is
// replaced whole.
func Save(dir string, m *Model, res *Result, extra ...File) error {
	cfg, err := json.MarshalIndent(configFile{Format: checkpointFormat, Train: m.Train, Model: m.Shape, Result: res}, "", "  ")
	if err != nil {
		return err
	}
	weights, err := encodeWeights(m.Weights)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("save: %s exists and is not a directory", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				return fmt.Errorf("save: %s exists and is not a headlab checkpoint", dir)
			}
		}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	defer os.RemoveAll(tmp)
	files := append([]File{{ConfigFile, append(cfg, '\n')}, {WeightsFile, weights}}, extra...)
	for _, f := range files {
		if err := writeSynced(filepath.Join(tmp, f.Name), f.Data); err != nil {
			return fmt.Errorf("save: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("save: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir) // put the previous checkpoint back
		return fmt.Errorf("save: %w", err)
	}
	return os.RemoveAll(old)
}

func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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

// Load reads the checkpoint in dir.
func Load(dir string) (*Model, *Result, error) {
	cfg, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("no checkpoint in %s: %s is missing", dir, ConfigFile)
		}
		return nil, nil, err
	}
	weights, err := os.ReadFile(filepath.Join(dir, WeightsFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("corrupt checkpoint in %s: %s is missing", dir, WeightsFile)
		}
		return nil, nil, err
	}
	m, res, err := Decode(cfg, weights)
	if err != nil {
		return nil, nil, fmt.Errorf("corrupt checkpoint in %s: %w", dir, err)
	}
	return m, res, nil
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
	var cf configFile
	dec := json.NewDecoder(bytes.NewReader(cfgJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", ConfigFile, err)
	}
	if cf.Format != checkpointFormat {
		return nil, nil, fmt.Errorf("%s: format %d, this headlab reads %d", ConfigFile, cf.Format, checkpointFormat)
	}
	if err := cf.Train.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", ConfigFile, err)
	}
	t, _ := tasks.New(cf.Train.Task)
	if cf.Train.Model(t) != cf.Model {
		return nil, nil, fmt.Errorf("%s: model shape %+v does not match the training flags", ConfigFile, cf.Model)
	}
	count := 0
	for _, p := range graph.ParamShapes(cf.Model) {
		n := 1
		for _, d := range p.Shape {
			n *= d
		}
		count += n
	}
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
