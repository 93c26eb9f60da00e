package bench

import (
	"bytes"
	"context"
	_ "embed" // the PyTorch reference script
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/internal/simd"
	"headlab/tasks"
	"headlab/train"
)

// pytorchScript is bench/pytorch/train_step.py, the PyTorch eager reference
// of an induction model of any shape (the default model unless told
// otherwise; used only for comparison, never by the product).
//
//go:embed pytorch/train_step.py
var pytorchScript []byte

// StepFlops counts the arithmetic of one training step of model c at the
// given batch, from the shapes, as 2*m*n*k per matrix product: the forward
// products (embeddings counted as the one-hot products they equal, though
// the graph looks rows up instead, so that figures stay comparable across
// versions); the backward's weight gradients for all of them and input
// gradients for all but the embeddings; and the six attention
// kernels, each 2*T*T*Dh per sequence and head (the causal mask's zeros
// counted, like Flops). The last block's MLP and the unembedding count
// only rows, the positions a training step computes them on
// (graph.BuildTrain; tasks.LossPositions of its loss: every one under
// next-token on induction, the answers alone under --loss answers).
// Elementwise work (LayerNorm, GELU, softmax, Adam) is left out. The
// default model at batch 64 comes to 120.6 MFLOP (106.4 on the answer
// rows).
func StepFlops(c graph.Config, batch int, rows []int) float64 {
	n, a := float64(batch*c.SeqLen), float64(batch*len(rows))
	d, f, v, t := float64(c.DModel), float64(c.DFF), float64(c.Vocab), float64(c.SeqLen)
	emb := 2 * n * v * d
	if c.Positions {
		emb += 2 * n * t * d
	}
	attnProj, mlp := 2*n*(4*d*d), 2*(2*d*f)
	linears := float64(c.Layers)*attnProj + float64(c.Layers-1)*n*mlp + a*mlp + 2*a*d*v
	attn := 6 * 2 * t * t * float64(c.HeadDim()) * float64(batch*c.Heads) * float64(c.Layers)
	return (emb + linears) + (emb + linears) + linears + attn
}

// PeakResult is the machine's single-core float32 matrix-multiply rate,
// measured with headlab's own kernel (simd.Sgemm) on square matrices.
type PeakResult struct {
	Size   int     `json:"size"`
	GFLOPs float64 `json:"gflop_per_s"`
	Kernel string  `json:"kernel"`
}

// SgemmPeak times simd.Sgemm on n x n x n for about budget, best of a few
// repeats, on the calling goroutine (one core).
func SgemmPeak(n int, budget time.Duration) PeakResult {
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = float32(i%7)-3, float32(i%5)-2
	}
	best := 0.0
	for range 3 {
		secs, _ := timeCall(budget/3, func() error {
			simd.Sgemm(false, false, n, n, n, a, b, c, nil, nil)
			return nil
		})
		best = max(best, simd.Flops(n, n, n)/secs/1e9)
	}
	return PeakResult{Size: n, GFLOPs: best, Kernel: simd.KernelName()}
}

// PyTorchStep is one run of the reference script.
type PyTorchStep struct {
	Torch     string  `json:"torch"`
	Batch     int     `json:"batch"`
	Steps     int     `json:"steps"`
	MsPerStep float64 `json:"ms_per_step"`
	StepsPerS float64 `json:"steps_per_s"`
	Error     string  `json:"error"`
}

// ErrNoPyTorch is returned when the Python interpreter cannot import torch.
var ErrNoPyTorch = errors.New("PyTorch is not installed")

// PyTorch runs the reference script with python.
type PyTorch struct {
	Python string
	dir    string
}

// NewPyTorch writes the reference script to a temporary directory and
// checks that python can import torch (ErrNoPyTorch, wrapped, when not).
func NewPyTorch(python string) (*PyTorch, error) {
	dir, err := os.MkdirTemp("", "headlab-pytorch")
	if err != nil {
		return nil, err
	}
	p := &PyTorch{Python: python, dir: dir}
	if err := os.WriteFile(p.script(), pytorchScript, 0o644); err != nil {
		p.Close()
		return nil, err
	}
	if _, err := p.run(context.Background(), BLASDefault, BenchConfig(1, tasks.NextToken), 1, 0, 0); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *PyTorch) script() string { return filepath.Join(p.dir, "train_step.py") }

// Close removes the temporary script.
func (p *PyTorch) Close() { os.RemoveAll(p.dir) }

// BLAS names how PyTorch's OpenBLAS picks its kernels: "default" (its
// own choice from the CPU) or "haswell" (OPENBLAS_CORETYPE=Haswell, its
// AVX2 kernels, faster on some AVX-512 machines).
type BLAS string

// The two ways PyTorch is timed.
const (
	BLASDefault BLAS = "default"
	BLASHaswell BLAS = "haswell"
)

// run runs the script with its BLAS chosen by blas, training c's model
// (an induction model: its shape, batch and loss; c is Sized); with
// startAt set (Unix seconds) it trains from then for seconds, else steps
// steps. The script computes what headlab's training step computes: under
// --loss answers, the last block's MLP and the unembedding on the answer
// rows only (--answer-rows); under next-token, every row.
func (p *PyTorch) run(ctx context.Context, blas BLAS, c train.Config, steps int, startAt, seconds float64) (PyTorchStep, error) {
	args := []string{p.script(), "--loss", c.Loss, "--batch", strconv.Itoa(c.Batch), "--steps", strconv.Itoa(steps)}
	args = append(args, ScriptShape(c)...)
	if c.Loss == tasks.Answers {
		args = append(args, "--answer-rows")
	}
	if startAt > 0 {
		args = append(args, "--start-at", strconv.FormatFloat(startAt, 'f', 3, 64), "--seconds", strconv.FormatFloat(seconds, 'f', 3, 64))
	}
	cmd := exec.CommandContext(ctx, p.Python, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	if blas == BLASHaswell {
		cmd.Env = append(cmd.Env, "OPENBLAS_CORETYPE=Haswell")
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var r PyTorchStep
	if jerr := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); jerr == nil && r.Error != "" {
		return r, fmt.Errorf("%w (%s): %s", ErrNoPyTorch, p.Python, r.Error)
	}
	if err != nil {
		if cmd.ProcessState == nil { // the interpreter did not start
			return r, fmt.Errorf("%w: cannot run %s: %v", ErrNoPyTorch, p.Python, err)
		}
		return r, fmt.Errorf("pytorch reference: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		return r, fmt.Errorf("pytorch reference printed %q: %v", out.String(), err)
	}
	return r, nil
}

// ScriptShape is the reference script's flags for c's model shape.
func ScriptShape(c train.Config) []string {
	args := []string{"--layers", strconv.Itoa(c.Layers), "--heads", strconv.Itoa(c.Heads),
		"--d-model", strconv.Itoa(c.DModel), "--d-ff", strconv.Itoa(c.DFF),
		"--seq-len", strconv.Itoa(c.SeqLen), "--vocab", strconv.Itoa(c.Vocab)}
	if c.NoMLP {
		args = append(args, "--no-mlp")
	}
	return args
}

// StepComparison is headlab against PyTorch eager at one batch size, both
// on one core, in the same run: medians of the rounds, PyTorch timed with
// each BLAS choice, and headlab compared with the faster (FasterBLAS).
// Ratio is headlab's ms per step over that PyTorch's (0.5: twice as fast).
type StepComparison struct {
	Batch            int     `json:"batch"`
	Rounds           int     `json:"rounds"`
	HeadlabMsPerStep float64 `json:"headlab_ms_per_step"`
	PyTorchMsPerStep float64 `json:"pytorch_ms_per_step"`
	PyTorchDefaultMs float64 `json:"pytorch_default_ms_per_step"`
	PyTorchHaswellMs float64 `json:"pytorch_haswell_ms_per_step"`
	FasterBLAS       BLAS    `json:"pytorch_blas"`
	HeadlabStepsPerS float64 `json:"headlab_steps_per_s"`
	PyTorchStepsPerS float64 `json:"pytorch_steps_per_s"`
	Ratio            float64 `json:"ratio"`
	HeadlabGFLOPs    float64 `json:"headlab_gflop_per_s"`
	// PeakShare is HeadlabGFLOPs over the run's sgemm peak (SetPeak).
	PeakShare         float64 `json:"headlab_share_of_peak"`
	MFLOP             float64 `json:"mflop_per_step"`
	HeadlabAllocsStep float64 `json:"headlab_allocs_per_step"`
}

// SetPeak fills each comparison's share of the sgemm peak.
func SetPeak(steps []StepComparison, peak PeakResult) {
	for i := range steps {
		steps[i].PeakShare = steps[i].HeadlabGFLOPs / peak.GFLOPs
	}
}

// median is the middle of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// CompareSteps runs rounds rounds per batch, each timing headlab, then
// PyTorch with its default BLAS, then with the Haswell kernels, so that
// drift in the machine's speed reaches all three alike, both sides
// training model m (its shape and loss; its batch replaced by each of
// batches); it keeps each side's median.
func CompareSteps(p *PyTorch, m train.Config, batches []int, steps, rounds int, progress func(batch, round int)) ([]StepComparison, error) {
	var out []StepComparison
	for _, batch := range batches {
		m.Batch = batch
		c := StepComparison{Batch: batch, Rounds: rounds}
		var h, pd, ph, gf, al []float64
		for round := range rounds {
			if progress != nil {
				progress(batch, round)
			}
			r, err := TrainSteps(cpu.New(), m, Timing{Steps: steps})
			if err != nil {
				return nil, err
			}
			c.MFLOP = r.MFLOP
			h, gf, al = append(h, r.MsPerStep), append(gf, r.GFLOPs), append(al, r.AllocsPerStep)
			for _, blas := range []BLAS{BLASDefault, BLASHaswell} {
				t, err := p.run(context.Background(), blas, m, steps, 0, 0)
				if err != nil {
					return nil, err
				}
				if blas == BLASDefault {
					pd = append(pd, t.MsPerStep)
				} else {
					ph = append(ph, t.MsPerStep)
				}
			}
		}
		c.HeadlabMsPerStep, c.HeadlabGFLOPs, c.HeadlabAllocsStep = median(h), median(gf), median(al)
		c.PyTorchDefaultMs, c.PyTorchHaswellMs = median(pd), median(ph)
		c.PyTorchMsPerStep, c.FasterBLAS = c.PyTorchDefaultMs, BLASDefault
		if c.PyTorchHaswellMs < c.PyTorchDefaultMs {
			c.PyTorchMsPerStep, c.FasterBLAS = c.PyTorchHaswellMs, BLASHaswell
		}
		c.HeadlabStepsPerS, c.PyTorchStepsPerS = 1000/c.HeadlabMsPerStep, 1000/c.PyTorchMsPerStep
		c.Ratio = c.HeadlabMsPerStep / c.PyTorchMsPerStep
		out = append(out, c)
	}
	return out, nil
}

// SweepComparison is sweep throughput with every core busy: headlab as
// Workers concurrent trainers (one goroutine each, different seeds) in one
// process, PyTorch as Workers one-thread processes, each side training for
// the same wall-clock window. Ratio is headlab's total steps/s over
// PyTorch's (3: three times the throughput).
type SweepComparison struct {
	Workers          int     `json:"workers"`
	Batch            int     `json:"batch"`
	Seconds          float64 `json:"seconds"`
	HeadlabStepsPerS float64 `json:"headlab_steps_per_s"`
	PyTorchStepsPerS float64 `json:"pytorch_steps_per_s"`
	Ratio            float64 `json:"ratio"`
	BLAS             BLAS    `json:"pytorch_blas"`
}

// SweepThroughput measures headlab's side of a sweep: workers trainers
// of c (with seeds 1, 2, ...) start together and train for the same
// window; it returns the total steps per second.
func SweepThroughput(workers int, c train.Config, window time.Duration) (float64, error) {
	trs := make([]*train.Trainer, workers)
	for i := range trs {
		c.Seed = uint64(i + 1)
		tr, err := train.NewTrainer(c, cpu.New())
		if err != nil {
			return 0, err
		}
		defer tr.Close()
		for range 3 {
			if _, err := tr.TrainStep(); err != nil {
				return 0, err
			}
		}
		trs[i] = tr
	}
	var wg sync.WaitGroup
	rates := make([]float64, workers)
	errs := make([]error, workers)
	start := time.Now().Add(20 * time.Millisecond)
	for i, tr := range trs {
		wg.Go(func() {
			time.Sleep(time.Until(start))
			n := 0
			for time.Since(start) < window {
				if _, err := tr.TrainStep(); err != nil {
					errs[i] = err
					return
				}
				n++
			}
			rates[i] = float64(n) / time.Since(start).Seconds()
		})
	}
	wg.Wait()
	total := 0.0
	for i, r := range rates {
		if errs[i] != nil {
			return 0, errs[i]
		}
		total += r
	}
	return total, nil
}

// CompareSweep runs both sides of the sweep comparison, one after the
// other, both training model m (its shape, batch and loss), PyTorch with
// the BLAS choice blas.
func CompareSweep(p *PyTorch, blas BLAS, m train.Config, workers int, window time.Duration) (SweepComparison, error) {
	s := SweepComparison{Workers: workers, Batch: m.Batch, Seconds: window.Seconds(), BLAS: blas}
	var err error
	if s.HeadlabStepsPerS, err = SweepThroughput(workers, m, window); err != nil {
		return s, err
	}
	// Python needs a few seconds to import torch: start every process's
	// window at the same wall-clock time, well after launch.
	startAt := float64(time.Now().Add(8*time.Second).UnixNano()) / 1e9
	res := make([]PyTorchStep, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() { res[i], errs[i] = p.run(context.Background(), blas, m, 0, startAt, window.Seconds()) })
	}
	wg.Wait()
	for i := range res {
		if errs[i] != nil {
			return s, errs[i]
		}
		s.PyTorchStepsPerS += res[i].StepsPerS
	}
	s.Ratio = s.HeadlabStepsPerS / s.PyTorchStepsPerS
	return s, nil
}
