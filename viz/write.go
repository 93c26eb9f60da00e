package viz

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
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

// writePNG encodes img into a temporary file next to path and renames it
// over path; on any failure the temporary file is removed.
func writePNG(path string, img image.Image) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("viz: write %s: %v", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("viz: write %s: %v", path, err)
		}
	}()
	if err = png.Encode(f, img); err != nil {
		return err
	}
	// Flush to disk before the rename so a crash cannot leave an empty
	// file under the final name.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; a picture should be readable like
	// any file os.Create would make.
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
