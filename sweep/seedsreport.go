package sweep

import (
	"fmt"
	"io"

	"headlab/internal/jsonout"
	"headlab/kernels"
)

// TrainSeedsReport is train --seeds on dev: s trained (TrainSeeds), then
// its records on w, as one indented JSON array when asJSON, else a line
// per seed (WriteSeeds) and one line on s.Stderr saying what trained
// where.
func TrainSeedsReport(w io.Writer, s Seeds, dev kernels.Device, asJSON bool) error {
	res, err := TrainSeeds(s, PlatformOf(dev))
	if err != nil {
		return err
	}
	if asJSON {
		return jsonout.Write(w, res.Records)
	}
	WriteSeeds(w, res.Records)
	fmt.Fprintf(s.Stderr, "trained %d seeds in %.1f s on %s, groups of up to %d\n", len(res.Records), res.Seconds, dev.Name(), res.Group)
	return nil
}
