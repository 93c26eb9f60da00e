package train

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/tasks"
)

// TestConfigJSON pins the JSON of Config and of the model shape it asks
// for (config.json's "train" and "model", train --json's "config", the
// sweep database's config_json): graph.Arch is embedded in both, and its
// fields read as their own, in the order they had when each struct
// declared them. A configuration written before the loss was recorded
// reads as --loss answers, the only loss there was, and one written
// before the sizes were, at its task's default sizes.
func TestConfigJSON(t *testing.T) {
	c := Defaults("induction")
	task, _ := tasks.New(c.Task)
	for _, tied := range []bool{false, true} {
		c.TiedEmbeddings = tied
		tail := ""
		if tied {
			tail = `,"tied_embeddings":true`
		}
		for _, x := range []struct {
			v    any
			want string
		}{
			{c, `{"task":"induction","seed":1,"steps":2500,"batch":32,"lr":0.003,"loss":"next-token","train_examples":0,"weight_decay":0,"seq_len":16,"vocab":16,"layers":2,"heads":2,"d_model":32,"d_ff":64,"positions":true,"causal":true` + tail + `}`},
			{c.Model(task), `{"vocab":16,"seq_len":16,"layers":2,"heads":2,"d_model":32,"d_ff":64,"positions":true,"causal":true` + tail + `}`},
		} {
			b, err := json.Marshal(x.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != x.want {
				t.Errorf("%T marshals as\n%s\nwant\n%s", x.v, b, x.want)
			}
		}
		b, _ := json.Marshal(c)
		var back Config
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Errorf("read back %+v, %v; want %+v", back, err, c)
		}
		old, answers := Config{}, c
		answers.Loss = tasks.Answers
		dec := json.NewDecoder(bytes.NewReader([]byte(`{"task":"induction","seed":1,"steps":2500,"batch":32,"lr":0.003,"layers":2,"heads":2,"d_model":32,"d_ff":64,"positions":true,"causal":true` + tail + `}`)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&old); err != nil || old != answers {
			t.Errorf("a configuration of before the loss read as %+v, %v; want %+v", old, err, answers)
		}
		if err := json.Unmarshal([]byte(`{"task":"induction","loss":"answers","dropout":0.1}`), &old); err == nil {
			t.Error("an unknown field was read without complaint")
		}
		if m := c.Model(task); m.Arch != c.Arch || m.Vocab != task.Vocab() || m.SeqLen != task.SeqLen() {
			t.Errorf("Model: %+v for %+v", m, c)
		}
	}
}

// TestConfigSizes checks that --seq-len and --vocab reach the model's
// shape, that 0 is the task's default (Sized writes it in), and that a
// size the task cannot take is refused by Validate in one line naming
// what it takes.
func TestConfigSizes(t *testing.T) {
	c := Defaults("induction")
	c.SeqLen, c.Vocab = 32, 64
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	task, err := c.NewTask()
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Model(task); m.SeqLen != 32 || m.Vocab != 64 {
		t.Errorf("--seq-len 32 --vocab 64 gives the shape %s", m)
	}
	z := Config{Task: "majority"}
	if s := z.Sized(); s.SeqLen != 15 || s.Vocab != 3 {
		t.Errorf("majority at sizes 0 sized as %d, %d; want 15, 3", s.SeqLen, s.Vocab)
	}
	c.SeqLen = 31
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), "even --seq-len") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--seq-len 31 on induction: %v", err)
	}
}

// TestConfigData: a configuration of a task read from a folder carries
// the data's hash (Sized), and is refused once the data has changed.
func TestConfigData(t *testing.T) {
	dir := t.TempDir()
	write := func(heldout string) {
		for name, text := range map[string]string{
			"train.jsonl":   `{"tokens": [0, 1, 2], "targets": [null, 2, 0]}` + "\n",
			"heldout.jsonl": heldout,
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(`{"tokens": [2, 0, 1], "targets": [null, 1, 2]}` + "\n")
	c := Defaults(tasks.FilePrefix + dir)
	if c.Data == "" || c.SeqLen != 3 || c.Vocab != 3 {
		t.Fatalf("a folder's defaults: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	write(`{"tokens": [2, 0, 0], "targets": [null, 1, 2]}` + "\n")
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "has changed") {
		t.Errorf("changed data: %v", err)
	}
}
