package record

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ReadHeader reads the column names of dir/name the way ReadCSV reads the
// file (whole lines only, names trimmed as gocsv matches them): the columns
// the threadlab that wrote it knew. A reader that must tell a column the
// file lacks from a measured zero asks it (a claim on trials.csv's
// peak_hikari_pending in a run recorded before it existed). nil without
// error when the file is absent, empty or its first line is torn.
func ReadHeader(dir, name string) ([]string, error) {
	path := filepath.Join(dir, name)
	f, err := OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &wholeLines{br: bufio.NewReaderSize(f, maxCSVLine)}
	if _, err := lr.Read(make([]byte, 1)); err != nil { // loads the first whole line into lr.header
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names, err := columnNames(lr.header)
	if errors.Is(err, io.EOF) {
		return nil, nil // a blank first line names no column
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the header: %w (repair or restore the file)", path, err)
	}
	return names, nil
}

// columnNames parses a CSV header line into its names, each trimmed of
// spaces and of a byte-order mark, as gocsv matches them to csv: tags.
func columnNames(header []byte) ([]string, error) {
	line, _, _ := bytes.Cut(header, []byte("\n"))
	names, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		names[i] = strings.TrimSpace(strings.TrimPrefix(n, "\ufeff"))
	}
	return names, nil
}
