package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"headlab/internal/atomicfile"
)

// CSVFiles are what WriteCSV writes.
var CSVFiles = []string{"runs.csv", "heads.csv"}

// WriteCSV writes the database as two CSV files in dir (created if
// needed): runs.csv, the columns of table runs but the JSON ones, one
// row per run; heads.csv, config_key, seed and table heads' columns, one
// row per head per run (from heads_json, so older databases have it too).
// NULL is an empty field.
func (s *Store) WriteCSV(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var cols []string
	for _, c := range names(runsColumns(s.version)) {
		if !strings.HasSuffix(c, "_json") {
			cols = append(cols, c)
		}
	}
	rows, err := s.db.Query("SELECT " + strings.Join(cols, ", ") + " FROM runs ORDER BY config_key, seed")
	if err != nil {
		return err
	}
	var runs [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = csvField(v)
		}
		runs = append(runs, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, CSVFiles[0]), cols, runs); err != nil {
		return err
	}

	recs, err := s.Records()
	if err != nil {
		return err
	}
	hcols := []string{"config_key", "seed"}
	for _, c := range headColumns {
		hcols = append(hcols, c.name)
	}
	var heads [][]string
	for _, r := range recs {
		for i := range r.Heads {
			row := []string{r.Key, strconv.FormatUint(r.Config.Seed, 10)}
			for _, c := range headColumns {
				row = append(row, csvField(c.value(&r.Heads[i])))
			}
			heads = append(heads, row)
		}
	}
	return writeCSV(filepath.Join(dir, CSVFiles[1]), hcols, heads)
}

func writeCSV(path string, header []string, rows [][]string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(slices.Concat([][]string{header}, rows)); err != nil {
			return err
		}
		return cw.Error()
	})
}

// csvField writes a SQL or Go value as a CSV field: floats in the
// shortest form that reads back to the same bits, NULL as "".
func csvField(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return string(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}
