package train

import (
	"bytes"
	"encoding/json"
	"testing"

	"headlab/tasks"
)

// TestConfigJSON pins the JSON of Config and of the model shape it asks
// for (config.json's "train" and "model", train --json's "config", the
// sweep database's config_json): graph.Arch is embedded in both, and its
// fields read as their own, in the order they had when each struct
// declared them. A configuration written before the loss was recorded
// reads as --loss answers, the only loss there was.
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
			{c, `{"task":"induction","seed":1,"steps":2500,"batch":32,"lr":0.003,"loss":"next-token","train_examples":0,"weight_decay":0,"layers":2,"heads":2,"d_model":32,"d_ff":64,"positions":true,"causal":true` + tail + `}`},
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
