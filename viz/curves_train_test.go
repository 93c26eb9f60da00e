package viz

import (
	"bytes"
	"strings"
	"testing"
)

// TestCurvesTrainingAccuracy: a history with training accuracy draws it
// beside held-out accuracy, a line and a legend entry of its own, with
// its points where they are; one without it draws neither.
func TestCurvesTrainingAccuracy(t *testing.T) {
	svg := func(c Curves) string {
		fig, err := c.Figure()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := fig.Encode(&b, ".svg"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	c := demoCurves()
	without := svg(c)
	c.TrainAccuracy = Curve{Name: "training accuracy", Steps: c.Accuracy.Steps}
	for range c.Accuracy.Steps {
		c.TrainAccuracy.Values = append(c.TrainAccuracy.Values, 1)
	}
	with := svg(c)
	if strings.Contains(without, "training accuracy") || !strings.Contains(with, "training accuracy") {
		t.Errorf("legend: %v without, %v with training accuracy", strings.Contains(without, "training accuracy"), strings.Contains(with, "training accuracy"))
	}
	if n, m := strings.Count(without, "<path"), strings.Count(with, "<path"); m < n+2 {
		t.Errorf("%d paths without training accuracy, %d with: want its line and its legend sample", n, m)
	}
}
