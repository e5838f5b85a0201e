package record

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
)

// Columns reads the header of dir/name, a CSV file of the run: the columns
// the threadlab that recorded the run wrote (a column added since reads as
// zero through ReadCSV, so a reader that must tell "not measured" from 0
// asks here). nil without error when the file is absent or empty.
func Columns(dir, name string) ([]string, error) {
	f, path, err := openCSV(dir, name)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the header: %w (repair or restore the file)", path, err)
	}
	return head, nil
}
