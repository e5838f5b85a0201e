package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HistogramsDir holds one HdrHistogram log per trial, in the standard
// interval log format (HdrHistogram's HistogramLogWriter, version 1.3), so
// HistogramLogProcessor, the Python hdrh package or HdrHistogram's plotter
// read it as is:
//
//	#[threadlab ...]                      what the file is, units
//	#[Histogram log format version 1.3]
//	#[StartTime: 1772360100.000 (seconds since epoch), 2026-03-01T10:15:00Z]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	Tag=io,0.000,1.000,1012.223,HISTFAAA...   one line per group and second
//	Tag=io.total,0.000,1.210,1012.223,HISTF... the whole trial of one group
//
// Values are latencies in microseconds; Interval_Max is in milliseconds.
// Timestamps are seconds since the trial started. A group's per-second
// intervals carry the generator's per-second precision (2 significant
// digits); its ".total" interval is the whole trial at full precision (3
// digits), the one to read quantiles from.
const HistogramsDir = "histograms"

// TotalSuffix ends the tag of a group's whole-trial histogram.
const TotalSuffix = ".total"

// maxRatio converts a histogram's microsecond values to the log's
// milliseconds in the Interval_Max column.
const maxRatio = 1000.0

// Interval is one line of a histogram log.
type Interval struct {
	Tag    string  // request group, or group + TotalSuffix
	Start  float64 // seconds since the trial started
	Length float64 // seconds
	Hist   *hdrhistogram.Histogram
}

// HistogramLogName is the path, relative to the run directory, of a
// trial's histogram log; seq orders files as the trials ran.
func HistogramLogName(seq int, variant, point string, trial int) string {
	p := slug(point)
	if p != "" {
		p = "-" + p
	}
	return filepath.Join(HistogramsDir, fmt.Sprintf("%03d-%s%s-t%d.hlog", seq, slug(variant), p, trial))
}

var slugRE = regexp.MustCompile(`[^a-zA-Z0-9.-]+`)

func slug(s string) string { return slugRE.ReplaceAllString(s, "_") }

// Tag makes a request group name safe as a log tag: the format forbids
// commas, spaces and line breaks in tags.
func Tag(group string) string {
	t := regexp.MustCompile(`[^A-Za-z0-9._:-]+`).ReplaceAllString(group, "_")
	if t == "" {
		return "_"
	}
	return t
}

// WriteHistogramLog writes a trial's intervals to dir/name atomically.
// about is written as a comment line (what the file holds).
func WriteHistogramLog(dir, name string, start time.Time, about string, intervals []Interval) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "#[threadlab %s; values in microseconds, Interval_Max in milliseconds]\n", strings.NewReplacer("\n", " ", "\r", " ", "]", ")").Replace(about))
	b.WriteString("#[Histogram log format version 1.3]\n")
	ms := start.UnixMilli()
	fmt.Fprintf(&b, "#[StartTime: %.3f (seconds since epoch), %s]\n", float64(ms)/1000, start.UTC().Format(time.RFC3339Nano))
	b.WriteString(`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"` + "\n")
	for _, iv := range intervals {
		if iv.Hist == nil {
			continue
		}
		payload, err := iv.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return fmt.Errorf("encode histogram %s at %.3fs for %s: %w", iv.Tag, iv.Start, name, err)
		}
		fmt.Fprintf(&b, "Tag=%s,%.3f,%.3f,%.3f,%s\n", Tag(iv.Tag), iv.Start, iv.Length, float64(iv.Hist.Max())/maxRatio, payload)
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return WriteFile(filepath.Dir(path), filepath.Base(path), b.Bytes())
}

// HistogramLog is a histogram log read back.
type HistogramLog struct {
	StartTime float64 // seconds since epoch, from #[StartTime:], 0 when absent
	Intervals []Interval
}

// Total returns the merged histogram of a group: its ".total" interval when
// the log has one, else the sum of its per-second intervals; nil when the
// group has no interval.
func (l *HistogramLog) Total(group string) *hdrhistogram.Histogram {
	tag := Tag(group)
	for _, iv := range l.Intervals {
		if iv.Tag == tag+TotalSuffix {
			return iv.Hist
		}
	}
	var sum *hdrhistogram.Histogram
	for _, iv := range l.Intervals {
		if iv.Tag != tag {
			continue
		}
		if sum == nil {
			sum = hdrhistogram.New(iv.Hist.LowestTrackableValue(), iv.Hist.HighestTrackableValue(), int(iv.Hist.SignificantFigures()))
		}
		sum.Merge(iv.Hist)
	}
	return sum
}

// ReadHistogramLog parses a histogram log. Comment lines, the legend and
// blank lines are skipped; a torn last line (a crash mid-write, though
// writes are atomic) is dropped; any other malformed line is an error
// naming the file and line.
func ReadHistogramLog(path string) (*HistogramLog, error) {
	return ReadHistogramLogTags(path, nil)
}

// ReadHistogramLogTags is ReadHistogramLog decoding only the intervals
// whose tag keep accepts (nil keeps all): a report that needs each group's
// whole-trial histogram need not decode a histogram per second.
func ReadHistogramLogTags(path string, keep func(tag string) bool) (*HistogramLog, error) {
	if err := CheckDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseHistogramLog(f, path, keep)
}

var startTimeRE = regexp.MustCompile(`^#\[StartTime: *([0-9.]+)`)

// ParseHistogramLog reads a histogram log from r; name is used in errors.
func ParseHistogramLog(r io.Reader, name string) (*HistogramLog, error) {
	return parseHistogramLog(r, name, nil)
}

// maxLogLine bounds a line of a histogram log: its histogram and a few
// numbers.
const maxLogLine = MaxHistogramText + 4<<10

func parseHistogramLog(r io.Reader, name string, keep func(string) bool) (*HistogramLog, error) {
	br := bufio.NewReaderSize(r, maxLogLine)
	l := &HistogramLog{}
	budget := NewHistogramBudget(DefaultHistogramBudget)
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes (the file is not an HdrHistogram interval log threadlab wrote; rewrite it with threadlab or delete it)", name, n, maxLogLine)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line := string(b)
		torn := errors.Is(err, io.EOF) && line != ""
		if line == "" && err != nil {
			return l, nil
		}
		iv, skip, perr := parseIntervalLine(strings.TrimRight(line, "\r\n"), l, keep, budget)
		if perr != nil {
			if torn {
				return l, nil
			}
			return nil, fmt.Errorf("%s:%d: %w (the file is not an HdrHistogram interval log threadlab wrote; rewrite it with threadlab or delete it)", name, n, perr)
		}
		if !skip {
			l.Intervals = append(l.Intervals, iv)
		}
		if err != nil {
			return l, nil
		}
	}
}

func parseIntervalLine(line string, l *HistogramLog, keep func(string) bool, budget *HistogramBudget) (Interval, bool, error) {
	if line == "" || strings.HasPrefix(line, `"StartTimestamp"`) {
		return Interval{}, true, nil
	}
	if strings.HasPrefix(line, "#") {
		if m := startTimeRE.FindStringSubmatch(line); m != nil {
			t, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return Interval{}, false, fmt.Errorf("StartTime %q: %w", m[1], err)
			}
			l.StartTime = t
		}
		return Interval{}, true, nil
	}
	var iv Interval
	if rest, ok := strings.CutPrefix(line, "Tag="); ok {
		tag, after, found := strings.Cut(rest, ",")
		if !found {
			return iv, false, errors.New("a Tag= line without a comma")
		}
		iv.Tag, line = tag, after
	}
	fields := strings.Split(line, ",")
	if len(fields) != 4 {
		return iv, false, fmt.Errorf("want StartTimestamp,Interval_Length,Interval_Max,histogram, got %d fields", len(fields))
	}
	var err error
	for i, dst := range []*float64{&iv.Start, &iv.Length} {
		*dst, err = strconv.ParseFloat(fields[i], 64)
		if err != nil || math.IsNaN(*dst) || math.IsInf(*dst, 0) || *dst < 0 {
			return iv, false, fmt.Errorf("field %d: %q is not a time in seconds", i+1, fields[i])
		}
	}
	if keep != nil && !keep(iv.Tag) {
		return iv, true, nil
	}
	iv.Hist, err = budget.Decode(fields[3])
	if err != nil {
		return iv, false, fmt.Errorf("histogram at %ss: %w", fields[0], err)
	}
	return iv, false, nil
}
