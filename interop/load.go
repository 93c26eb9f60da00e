package interop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"headlab/internal/atomicfile"
	"headlab/internal/memlimit"
	"headlab/tasks"
	"headlab/train"
)

// memLimit is what this process may use; tests replace it.
var memLimit = memlimit.Read

// Load reads the weights file in for headlab import in layout, refusing
// anything headlab cannot take, in import's words (every error is bad
// input): the model to evaluate on task (as train takes it; "" for the
// one a headlab export names), and own, the result the file carries when
// its config is headlab's own and unchanged (an export of a checkpoint),
// to be saved as it is.
func Load(layout ExportFormat, in, task string) (m *train.Model, own *train.Result, err error) {
	// The file, its tensors and the model are held at once (about three
	// copies): a file this process cannot hold is refused unread.
	if fi, err := os.Stat(in); err == nil {
		if lim := memLimit(); lim.Known() && 3*fi.Size() > lim.Bytes {
			return nil, nil, fmt.Errorf("%s: importing its %s needs about %s, more than the %s this process may use (%s)",
				in, memlimit.GiB(fi.Size()), memlimit.GiB(3*fi.Size()), memlimit.GiB(lim.Bytes), lim.What)
		}
	}
	b, err := ReadSafetensorsFile(in)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", in, err)
	}
	var side []byte
	if layout == TransformerLens {
		side, err = os.ReadFile(TLConfigPath(in))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %v", TLConfigPath(in), err)
		}
	}
	im, err := Import(layout, b, side)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", in, err)
	}
	var tc train.Config
	switch {
	case im.Train != nil && (task == "" || task == im.Train.Task):
		tc, own = *im.Train, im.Result
	case task == "" && im.Train == nil:
		return nil, nil, fmt.Errorf("%s carries no headlab config: --task names the task to evaluate it on", in)
	default:
		// Trained elsewhere: no headlab training (steps 0), evaluated
		// on the task's held-out examples of seed 1.
		tc = train.Defaults(task)
		tc.Steps = 0
	}
	tc.Arch, tc.SeqLen, tc.Vocab = im.Shape.Arch, im.Shape.SeqLen, im.Shape.Vocab
	if err := tc.Validate(); err != nil {
		return nil, nil, fmt.Errorf("--task %s: %v", tc.Task, err)
	}
	t, err := tc.NewTask()
	if err != nil {
		return nil, nil, fmt.Errorf("--task: %v", err)
	}
	if got := tc.Model(t); got != im.Shape {
		return nil, nil, fmt.Errorf("--task %s: its model would be %s, the file's is %s", tc.Task, got, im.Shape)
	}
	return &train.Model{Train: tc, Shape: im.Shape, Task: t, Weights: im.Weights}, own, nil
}

// ImportReport is what headlab import prints: the imported model's
// config and the result measured on its task.
type ImportReport struct {
	Config train.Config `json:"config"`
	train.Result
	// Kept says whether the result saved is the one the file carried.
	Kept bool `json:"kept_result"`
}

// Evaluate measures m with ev on its task's held-out examples (and its
// unseen ones, where the task has them).
func Evaluate(ev *train.Evaluator, m *train.Model) (train.Result, error) {
	acc, loss, err := ev.Accuracy(train.HeldOut(m), nil)
	if err != nil {
		return train.Result{}, err
	}
	res := train.Result{Params: m.Weights.Count(), Accuracy: acc, Chance: m.Task.Chance(), Loss: loss}
	if tasks.HasUnseen(m.Task) {
		u, err := train.UnseenAccuracy(ev, m)
		if err != nil {
			return res, err
		}
		res.UnseenAccuracy = &u
	}
	return res, nil
}

// WriteText is the report's text: m, imported from in into out.
func (r *ImportReport) WriteText(w io.Writer, m *train.Model, in, out string) {
	fmt.Fprintf(w, "imported    %s into %s (%d parameters, %s)\n", in, out, r.Params, m.Shape)
	fmt.Fprintf(w, "accuracy    %.4f on %d held-out examples of %s (chance %.4f), loss %.4f\n", r.Accuracy, train.HeldOutExamples, m.Task.Name(), r.Chance, r.Loss)
	if r.Kept {
		fmt.Fprintln(w, "result      the file's own (a headlab export), saved as it was")
	}
}

// ChooseFormat is the format flag names, or else the one out's extension
// names (def for "-"), among allowed; anything else is refused in the
// words of a command's --format and --out.
func ChooseFormat(out, flag string, def Format, allowed ...Format) (Format, error) {
	if flag == "" {
		f, err := FormatOf(out, def, allowed...)
		if err != nil {
			return "", fmt.Errorf("--out %v", err)
		}
		return f, nil
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if Format(flag) == f {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown --format %q: want %s", flag, strings.Join(names, ", "))
}

// WriteExport writes m's export in layout, with its result res (so that
// import gives the checkpoint back whole), to out in format f ("-":
// stdout), and with beside the TransformerLens config in a file beside it.
func WriteExport(m *train.Model, res *train.Result, layout ExportFormat, f Format, out string, stdout io.Writer, beside bool, p Provenance) error {
	b, err := Export(m, layout, p)
	if err != nil {
		return err
	}
	AddResult(b, res)
	if err := atomicfile.WriteStdout(out, stdout, func(w io.Writer) error { return Write(w, f, b) }); err != nil {
		return err
	}
	if !beside {
		return nil
	}
	return atomicfile.Write(TLConfigPath(out), func(w io.Writer) error { return WriteTLConfig(w, m.Shape) })
}
