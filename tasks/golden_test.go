package tasks

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"
)

// TestCopyReverseGolden pins every sequence and answer mask copy and
// reverse generate, for their registered shapes and two others, three
// seeds and every split, to checksums taken from the generators before
// they were merged into one: the merge kept them bit for bit.
func TestCopyReverseGolden(t *testing.T) {
	byName := func(name string) Task {
		task, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	cases := []struct {
		task Task
		want string
	}{
		{byName("copy"), "832c8107744dda74"},
		{byName("reverse"), "9e425ac604fafe00"},
		{Repeat{N: 5, V: 3}, "7ad4476f09126a4b"},
		{Repeat{N: 5, V: 3, Reversed: true}, "2b16d8c1dd37d325"},
		{Repeat{N: 1, V: 7}, "c92f4a2ed8ce13b5"},
		{Repeat{N: 1, V: 7, Reversed: true}, "0668b5a9b934cbb7"},
	}
	for _, c := range cases {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s|%d|%d|%v|%d|%s|", c.task.Name(), c.task.Vocab(), c.task.SeqLen(), c.task.Chance(), c.task.DefaultSteps(), c.task.Describe())
		for seed := uint64(1); seed <= 3; seed++ {
			for _, split := range []Split{Train, HeldOut, Unseen} {
				b := NewStream(c.task, seed, split).Next(257)
				for _, v := range append(b.Tokens, b.Targets...) {
					_ = binary.Write(h, binary.LittleEndian, int32(v))
				}
			}
		}
		if got := fmt.Sprintf("%016x", h.Sum64()); got != c.want {
			t.Errorf("%s (%d tokens of %d): checksum %s, want %s", c.task.Name(), c.task.SeqLen()/2, c.task.Vocab(), got, c.want)
		}
	}
}
