package viz

import (
	"fmt"
	"image"
	"image/png"
	"io"

	"headlab/internal/atomicfile"
)

// WriteHeatmapsPNG draws g with DrawHeatmaps and writes it to path as PNG.
// The file is written under a temporary name in the same directory and
// renamed into place, so path never holds a partial image.
func WriteHeatmapsPNG(path string, g Grid) error {
	img, err := DrawHeatmaps(g)
	if err != nil {
		return err
	}
	return writePNG(path, img)
}

// WriteArcsPNG draws g with DrawArcs and writes it to path as PNG, through
// a temporary file and a rename like WriteHeatmapsPNG.
func WriteArcsPNG(path string, g Grid) error {
	img, err := DrawArcs(g)
	if err != nil {
		return err
	}
	return writePNG(path, img)
}

// writePNG encodes img to path through atomicfile.
func writePNG(path string, img image.Image) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, img) }); err != nil {
		return fmt.Errorf("viz: %v", err)
	}
	return nil
}
