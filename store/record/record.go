// Package record owns threadlab's data layout on disk. A run is a directory
// data/<experiment>/<run-id>/ holding:
//
//	manifest.yaml     the normalized manifest as run (read back by ManifestInfo, its one lenient reader)
//	fingerprint.json  the host and software fingerprint
//	hostcheck.json    the host check
//	run.json          run metadata: id, profile, seed, order, command, state
//	trials.csv        one row per trial and request group, appended the moment the trial ends
//	series.csv        per-second client and server series of every trial
//	latency.csv       the latency percentile spectrum of every trial and group
//	summary.csv       per variant x point x group x metric: median, CI, spread, noise flags
//	comparisons.csv   variant comparisons at each point (Mann-Whitney U, Holm)
//	verdicts.json     claim verdicts with their evidence
//	warmup.csv        warm-up rounds of every trial, never in the statistics
//	commits.csv       the commit journal: a trial exists once its line is here
//	logs/             target logs, one per trial, appended to on resume
//
// Appends are whole lines written with one write and synced, so a crash
// leaves every finished trial readable; Read tolerates a torn last line.
// A trial's rows go to several files, so a crash between two appends would
// leave some of them behind: commits.csv decides which trials exist, and
// Repair (on resume) and Read ignore the rest (see CommitsFile).
// A report is always rebuilt from this directory alone.
package record

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/gocarina/gocsv"
)

// File names inside a run directory.
const (
	ManifestFile    = "manifest.yaml"
	FingerprintFile = "fingerprint.json"
	HostCheckFile   = "hostcheck.json"
	RunFile         = "run.json"
	TrialsFile      = "trials.csv"
	SeriesFile      = "series.csv"
	LatencyFile     = "latency.csv"
	SummaryFile     = "summary.csv"
	ComparisonsFile = "comparisons.csv"
	VerdictsFile    = "verdicts.json"
	WarmupFile      = "warmup.csv" // warm-up rounds, same columns as trials.csv, never in the statistics
	LogsDir         = "logs"
)

// Trial is one row of trials.csv: one request group of one trial of one cell.
type Trial struct {
	Variant         string  `csv:"variant"`
	Point           string  `csv:"point"` // sweep point as key=value;key=value, empty without a sweep
	Group           string  `csv:"group"`
	Trial           int     `csv:"trial"` // 1-based within the cell
	Seq             int     `csv:"seq"`   // 1-based position in the run's execution order
	Valid           bool    `csv:"valid"`
	Reason          string  `csv:"reason"` // why not valid, or warnings; empty when clean
	Started         string  `csv:"started"`
	Requests        int64   `csv:"requests"`
	Errors          int64   `csv:"errors"`
	ErrorPct        float64 `csv:"error_pct"`
	RPS             float64 `csv:"rps"`
	P50Ms           float64 `csv:"p50_ms"`
	P90Ms           float64 `csv:"p90_ms"`
	P99Ms           float64 `csv:"p99_ms"`
	P999Ms          float64 `csv:"p999_ms"`
	MaxMs           float64 `csv:"max_ms"`
	MeanMs          float64 `csv:"mean_ms"`
	WallMs          float64 `csv:"wall_ms"`
	DistinctThreads int     `csv:"distinct_threads"`
	ErrorClasses    string  `csv:"error_classes"` // class=count;class=count
	AskedRate       float64 `csv:"asked_rate"`
	AchievedRate    float64 `csv:"achieved_rate"`
	Missed          int64   `csv:"missed"`
	LatePct         float64 `csv:"late_pct"`
	GenCPUPct       float64 `csv:"gen_cpu_pct"`
	GenSaturated    bool    `csv:"gen_saturated"`
	TargetCPUPct    float64 `csv:"target_cpu_pct"`
	TargetThreads   int     `csv:"target_peak_threads"`
	TargetRSSMB     float64 `csv:"target_peak_rss_mb"`
	HostBusyPct     float64 `csv:"host_busy_pct"` // host CPU outside threadlab before the trial
	CoolDownMs      float64 `csv:"cooldown_ms"`
	StartupMs       float64 `csv:"startup_ms"`
	Pid             int     `csv:"pid"`
	Log             string  `csv:"log"`

	// Replication (issue 10): which fork (fresh target process) and which
	// measured iteration inside it this row is, whether it re-runs an
	// invalid one, the sampler's flags, and the host noise in the window.
	Fork           int     `csv:"fork"`
	Iteration      int     `csv:"iteration"`
	Retry          bool    `csv:"retry"`            // re-runs an invalid iteration or fork of this cell
	Flags          string  `csv:"telemetry_flags"`  // sampler flag codes, code;code
	HostOutsidePct float64 `csv:"host_outside_pct"` // host CPU outside threadlab during the window, % of one core
	HostStealPct   float64 `csv:"host_steal_pct"`   // steal during the window, % of one core

	// Seed 002's measures (issues 9 and 12): successful throughput, and the
	// server's peaks and totals over the trial's window from the per-second
	// telemetry samples. Runs recorded before these columns read them as 0.
	OKRPS              float64 `csv:"ok_rps"`               // 2xx answers per second of the window
	TargetPeakCPUPct   float64 `csv:"target_peak_cpu_pct"`  // highest per-second target CPU, % of one core
	PeakHeapMB         float64 `csv:"peak_heap_mb"`         // highest heap in use of the scrapes
	GCCount            int64   `csv:"gc_count"`             // GC pauses during the window
	GCPauseMs          float64 `csv:"gc_pause_ms"`          // GC pause time during the window
	JVMLiveThreads     int     `csv:"jvm_live_threads"`     // highest live platform threads of the scrapes
	PeakVirtualThreads int     `csv:"peak_virtual_threads"` // highest count of requests on virtual threads of the scrapes
	PeakHikariPending  int     `csv:"peak_hikari_pending"`  // highest count of threads waiting for a pooled connection

	// Multi-host runs (issue 25): how far apart the shares of a burst split
	// across generators left, first to last, on the agreed clock; 0 for one
	// generator and for the other models.
	ReleaseSpreadMs float64 `csv:"release_spread_ms"`
	// HostsNoise is each host's CPU used outside threadlab and its steal
	// during the window, % of one core, measured on that host ("target
	// tl-target 3.1% (steal 0.0%); load tl-load1 ..."); host_outside_pct
	// and host_steal_pct hold the highest. Empty on one machine.
	HostsNoise string `csv:"hosts_noise"`
	// PinnedEvents is the JVM's jdk.VirtualThreadPinned JFR events during the
	// window (issue 26; spring-mvc with threadlab.pinned-events.enabled=true,
	// else 0).
	PinnedEvents int64 `csv:"pinned_events"`
	// TargetCPUSec is the target's CPU time between the load's release and
	// its last answer, from its cumulative counters (telemetry.CPUWindow);
	// TargetCPUMsPerReq is it over the trial's requests, all groups, in ms.
	// 0 when not measured (telemetry_flags says why) and in runs recorded
	// before the columns (issue 25).
	TargetCPUSec      float64 `csv:"target_cpu_s"`
	TargetCPUMsPerReq float64 `csv:"target_cpu_ms_per_req"`
	// JITMs is the time the JVM's JIT compilers spent compiling during the
	// window, ms (growth of jvm_compilation_time_ms_total; JMH's -prof comp
	// reads the same). 0 for a target without the counter and in runs
	// recorded before the column: series.csv's jit_ms is empty there.
	JITMs float64 `csv:"jit_ms"`
	// HostSpinNs is the host speed probe just before the window
	// (telemetry.SpinNs: a fixed integer workload's fastest run, ns per
	// 1000 steps; lower is faster). 0 when not probed: a target on another
	// host, and runs recorded before the column.
	HostSpinNs float64 `csv:"host_spin_ns"`
	// Connects is how many TCP connects the generator made in the window
	// (all groups' rows carry their own); ConnectP50Ms/ConnectP99Ms/
	// ConnectMaxMs their times, SYN sent to the handshake's completion
	// on the client; SlowConnects those of 1 s or more (load.SlowConnect:
	// the SYN was sent again because the server's listen queue dropped
	// it). A keep-alive group connects once per connection, a group
	// against a server that closes after each answer once per request.
	// 0 in runs recorded before the columns.
	Connects     int64   `csv:"connects"`
	ConnectP50Ms float64 `csv:"connect_p50_ms"`
	ConnectP99Ms float64 `csv:"connect_p99_ms"`
	ConnectMaxMs float64 `csv:"connect_max_ms"`
	SlowConnects int64   `csv:"slow_connects"`
}

// Key identifies the cell a trial belongs to.
func (t Trial) Key() CellKey { return CellKey{Variant: t.Variant, Point: t.Point, Group: t.Group} }

// CellKey names a cell: variant x sweep point x request group.
type CellKey struct{ Variant, Point, Group string }

// Sample is one row of series.csv: one second of one trial. Server columns
// are Gauges: a second without a server sample is empty, not 0.
type Sample struct {
	Variant       string  `csv:"variant"`
	Point         string  `csv:"point"`
	Trial         int     `csv:"trial"`
	Group         string  `csv:"group"` // client columns are per group; server columns repeat
	T             float64 `csv:"t_s"`
	Requests      int64   `csv:"requests"`
	Errors        int64   `csv:"errors"`
	P50Ms         float64 `csv:"p50_ms"`
	P99Ms         float64 `csv:"p99_ms"`
	TargetCPUPct  Gauge   `csv:"target_cpu_pct"`
	TargetRSSMB   Gauge   `csv:"target_rss_mb"`
	OSThreads     Gauge   `csv:"os_threads"`
	JVMThreads    Gauge   `csv:"jvm_live_threads"`
	HeapUsedMB    Gauge   `csv:"heap_used_mb"`
	GCCount       Gauge   `csv:"gc_count"`
	GCPauseMs     Gauge   `csv:"gc_pause_ms"`
	HikariActive  Gauge   `csv:"hikari_active"`
	HikariPending Gauge   `csv:"hikari_pending"`
	GenCPUPct     Gauge   `csv:"gen_cpu_pct"`
	HostCPUPct    Gauge   `csv:"host_cpu_pct"`   // host CPU outside threadlab, % of one core
	HostStealPct  Gauge   `csv:"host_steal_pct"` // % of one core

	Fork      int `csv:"fork"`
	Iteration int `csv:"iteration"`

	// VirtualThreads is threadlab_virtual_inflight at the second's scrape:
	// requests being handled on virtual threads now (built-in targets).
	// Empty for a target without the gauge and in runs recorded before
	// the column (ReadCSV leaves a Gauge column the file lacks missing).
	VirtualThreads Gauge `csv:"virtual_threads"`
	// JITMs is the time the JVM's JIT compilers spent compiling in the
	// second (jvm_compilation_time_ms_total's growth). Empty for a target
	// without the counter and in runs recorded before the column.
	JITMs Gauge `csv:"jit_ms"`
}

// Quantile is one row of latency.csv: a point of one trial's percentile spectrum.
type Quantile struct {
	Variant    string  `csv:"variant"`
	Point      string  `csv:"point"`
	Group      string  `csv:"group"`
	Trial      int     `csv:"trial"`
	Percentile float64 `csv:"percentile"`
	Ms         float64 `csv:"ms"`

	Fork      int `csv:"fork"`
	Iteration int `csv:"iteration"`
}

// Summary is one row of summary.csv.
type Summary struct {
	Variant    string  `csv:"variant"`
	Point      string  `csv:"point"`
	Group      string  `csv:"group"`
	Metric     string  `csv:"metric"`
	N          int     `csv:"n"`
	Median     float64 `csv:"median"`
	Low        float64 `csv:"ci_low"`
	High       float64 `csv:"ci_high"`
	Confidence float64 `csv:"ci_level"`
	Min        float64 `csv:"min"`
	Max        float64 `csv:"max"`
	Mean       float64 `csv:"mean"`
	IQR        float64 `csv:"iqr"`
	CVPct      float64 `csv:"cv_pct"`
	Flags      string  `csv:"flags"` // code;code
}

// Comparison is one row of comparisons.csv.
type Comparison struct {
	Point    string  `csv:"point"`
	Group    string  `csv:"group"`
	Metric   string  `csv:"metric"`
	A        string  `csv:"a"`
	B        string  `csv:"b"`
	MedianA  float64 `csv:"median_a"`
	MedianB  float64 `csv:"median_b"`
	DeltaPct float64 `csv:"delta_pct"` // (B-A)/A x 100
	P        float64 `csv:"p"`
	PAdj     float64 `csv:"p_holm"`
	Verdict  string  `csv:"verdict"` // "~" or a signed percentage
	Note     string  `csv:"note"`
}

// Meta is run.json.
type Meta struct {
	ID         string              `json:"id"`
	Experiment string              `json:"experiment"`
	Title      string              `json:"title"`
	Question   string              `json:"question"`
	Source     string              `json:"source,omitempty"` // the seed write-up the experiment comes from
	Variants   []string            `json:"variants"`         // in manifest order
	SweepKeys  []string            `json:"sweep_keys,omitempty"`
	Groups     []string            `json:"groups"`         // request groups, measured group first
	Measured   string              `json:"measured_group"` // the group whose numbers answer the question
	Primary    string              `json:"primary_metric"` // wall_ms for a burst, rps otherwise
	Trials     int                 `json:"trials"`
	Host       string              `json:"host"`
	Profile    string              `json:"profile"`
	Manifest   string              `json:"manifest_path"`
	Seed       int64               `json:"seed"`
	Order      []string            `json:"order"` // execution order as variant|point|trial
	Command    string              `json:"command"`
	Started    string              `json:"started"`
	Finished   string              `json:"finished,omitempty"`
	State      string              `json:"state"` // running, complete, interrupted, failed
	Error      string              `json:"error,omitempty"`
	Warnings   []string            `json:"warnings,omitempty"`
	TargetCmds map[string][]string `json:"target_commands,omitempty"` // variant@point -> argv
	Pinning    string              `json:"pinning"`
	Version    string              `json:"threadlab_version"`

	// Replication (issue 10, pipeline/replicate): the plan, where each cell
	// stopped and why, and where the wall time went.
	Forks      string     `json:"forks,omitempty"` // "5" or "5..20" (sequential)
	Iterations int        `json:"iterations,omitempty"`
	Cells      []CellStop `json:"cells,omitempty"`
	Time       *WallClock `json:"time,omitempty"`
	// AOT says, per variant with a built-in target, whether it started
	// from the JDK AOT cache (pipeline/trial/jvms.go).
	AOT []AOTStart `json:"aot_cache,omitempty"`
	// Skipped lists the variants that did not run on this host, with why
	// (a jdk: that is not installed); the claims reading them are not
	// applicable here.
	Skipped []SkippedVariant `json:"skipped_variants,omitempty"`
	// JDKs lists the variants that asked for a JDK (jdk: N) and the one
	// each ran on.
	JDKs []VariantJDK `json:"variant_jdks,omitempty"`
	// Affinity is the CPU affinity read back from the target, service and
	// generator processes, beside what pinning asked (pipeline/affinity.go).
	Affinity []Affinity `json:"affinity,omitempty"`
	// Hosts is the multi-host record (threadlab run --hosts, hosts.go);
	// nil for a run on one machine.
	Hosts *Hosts `json:"hosts,omitempty"`
	// Resumes lists each time the run was continued with threadlab run
	// --resume: when, and how many of its trials were done by then. Every
	// resume ran the same threadlab version on a fingerprint that matched
	// the start's (pipeline/resume.go); the page's Method says so.
	Resumes []Resume `json:"resumes,omitempty"`
}

// Resume is one continuation of an interrupted run.
type Resume struct {
	At   string `json:"at"`   // RFC 3339, UTC
	Done int    `json:"done"` // trials already in trials.csv
	Of   int    `json:"of"`   // trials the plan has
	Host string `json:"host"`
}

// AppendCSV appends rows to dir/name, writing the header when the file is
// new. All rows go out in one write followed by fsync, so a crash can tear
// at most the last line; a torn last line left by an earlier crash is cut
// first, so the new rows never glue onto it.
//
// Appending to trials.csv commits the trials in rows: their lines in
// commits.csv follow once the rows are synced (see CommitsFile). Write a
// trial's series, latency and warm-up rows before its trials.csv rows, and
// all of its trials.csv rows (one per group) in one call: the call is the
// commit.
func AppendCSV[T any](dir, name string, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	trials, isTrials := any(rows).([]Trial)
	isTrials = isTrials && name == TrialsFile
	if isTrials {
		if err := startJournal(dir); err != nil {
			return err
		}
	}
	if err := upgradeHeader[T](dir, name); err != nil {
		return err
	}
	if err := appendRows(dir, name, rows); err != nil {
		return err
	}
	if isTrials {
		return commitTrials(dir, trials)
	}
	return nil
}

func appendRows[T any](dir, name string, rows []T) error {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := cutTorn(f); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	var buf bytes.Buffer
	if st.Size() == 0 {
		err = gocsv.Marshal(rows, &buf)
	} else {
		err = gocsv.MarshalWithoutHeaders(rows, &buf)
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}

// upgradeHeader rewrites dir/name with today's columns when its header
// names others: a run recorded by an earlier threadlab and resumed now
// (trials.csv gained ok_rps and the server peaks). Rows are matched by
// column name and a column the old file lacks reads as zero, so appended
// rows never land under a header that does not describe them.
func upgradeHeader[T any](dir, name string) error {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	have, _, complete := bytes.Cut(b, []byte("\n"))
	if !complete {
		return nil // empty, or a torn header: appendRows deals with it
	}
	var buf bytes.Buffer
	if err := gocsv.Marshal([]T{}, &buf); err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	want, _, _ := strings.Cut(buf.String(), "\n")
	if want == "" || strings.TrimSuffix(string(have), "\r") == want {
		return nil
	}
	rows, err := ReadCSV[T](dir, name)
	if err != nil {
		return fmt.Errorf("upgrade the columns of %s: %w", path, err)
	}
	return WriteCSV(dir, name, rows)
}

// WriteCSV replaces dir/name with rows atomically (temp file + rename).
func WriteCSV[T any](dir, name string, rows []T) error {
	var buf bytes.Buffer
	if err := gocsv.Marshal(rows, &buf); err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return WriteFile(dir, name, buf.Bytes())
}

// ReadCSV reads dir/name, row by row: a large series.csv costs its rows,
// not its text as well. A missing file is an empty slice; a torn final
// line (a crash mid-append) is dropped. The file must be a regular file,
// not a link (OpenRegular).
func ReadCSV[T any](dir, name string) ([]T, error) {
	f, path, err := openCSV(dir, name)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	lr := &wholeLines{br: bufio.NewReaderSize(f, maxCSVLine)}
	c := make(chan T, 256)
	errc := make(chan error, 1)
	go func() { errc <- gocsv.UnmarshalToChan(lr, c) }() // closes c when done
	var rows []T
	for row := range c {
		rows = append(rows, row)
	}
	if err := <-errc; err != nil {
		if errors.Is(err, io.EOF) && len(rows) == 0 && lr.err == io.EOF {
			return nil, nil // empty, or a header alone
		}
		return nil, fmt.Errorf("%s: %w", path, csvError(err, lr.header))
	}
	names, _ := columnNames(lr.header)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("%s line 1: column %q appears twice: not a file threadlab wrote (restore it from git, or re-run)", path, n)
		}
		seen[n] = true
	}
	for i := range rows {
		if c, ok := any(&rows[i]).(rowChecker); ok {
			if col, problem := c.checkRow(); problem != "" {
				return nil, fmt.Errorf("%s line %d, column %s: %s: not a value threadlab writes (restore the file from git, or re-run)", path, i+2, col, problem)
			}
		}
	}
	missingGauges(lr.header, rows)
	return rows, nil
}

// rowChecker is a row type that can tell a value threadlab never writes
// (a non-finite or negative measurement, more errors than requests): a
// hand-edited or corrupted file, which would otherwise go on to a verdict
// ("platform/virtual = +Inf clears >= 1.1").
type rowChecker interface {
	checkRow() (column, problem string)
}

// csvError names the column of a value the decoder could not read:
// "line 3, column peak_hikari_pending: "NaN" is not a whole number" rather
// than encoding/csv's "record on line 0; parse error on line 3, column 49".
func csvError(err error, header []byte) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) || pe.Line == 0 {
		return err
	}
	col := strconv.Itoa(pe.Column)
	if names, herr := columnNames(header); herr == nil && pe.Column >= 1 && pe.Column <= len(names) {
		col = names[pe.Column-1]
	}
	why := pe.Err.Error()
	var ne *strconv.NumError
	if errors.As(pe.Err, &ne) {
		switch ne.Func {
		case "ParseInt", "ParseUint":
			why = fmt.Sprintf("%q is not a whole number", ne.Num)
		case "ParseFloat":
			why = fmt.Sprintf("%q is not a number", ne.Num)
		case "ParseBool":
			why = fmt.Sprintf("%q is not true or false", ne.Num)
		}
	}
	return fmt.Errorf("line %d, column %s: %s", pe.Line, col, why)
}

// openCSV opens dir/name, a regular file (OpenRegular), and returns its
// path for messages; a missing file is a nil file and no error.
func openCSV(dir, name string) (*os.File, string, error) {
	path := filepath.Join(dir, name)
	f, err := OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// maxCSVLine bounds one line of a CSV file of a run: ours are under a few
// kilobytes, so a longer one is not ours.
const maxCSVLine = 1 << 20

// wholeLines passes on only lines that end in a newline: the torn last line
// a crash mid-append leaves is dropped. It keeps the first line (the
// header) for missingGauges.
type wholeLines struct {
	br     *bufio.Reader
	buf    []byte
	header []byte
	err    error
}

func (l *wholeLines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			l.buf = line
			if l.header == nil {
				l.header = bytes.Clone(line)
			}
		case errors.Is(err, bufio.ErrBufferFull):
			l.err = fmt.Errorf("a line longer than %d bytes: not a file threadlab wrote", maxCSVLine)
		default:
			l.err = err // io.EOF drops a torn last line
		}
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// missingGauges marks the Gauge columns of T that the file's header lacks
// as missing in every row: a column added after the file was written
// (series.csv's virtual_threads) was not measured, and gocsv would leave
// it at 0, which reads as a measured zero.
func missingGauges[T any](header []byte, rows []T) {
	t := reflect.TypeOf((*T)(nil)).Elem()
	if t.Kind() != reflect.Struct || len(rows) == 0 {
		return
	}
	names, err := columnNames(header)
	if err != nil {
		return
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	gauge := reflect.TypeOf(Gauge(0))
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("csv"), ",")
		if f.Type != gauge || name == "" || name == "-" || have[name] {
			continue
		}
		for j := range rows {
			reflect.ValueOf(&rows[j]).Elem().Field(i).SetFloat(math.NaN())
		}
	}
}

// WriteFile replaces dir/name atomically and durably (WriteAtomic).
func WriteFile(dir, name string, data []byte) error {
	return WriteAtomic(filepath.Join(dir, name), bytes.NewReader(data))
}

// WriteAtomic replaces path with what r yields: a temp file beside it,
// synced, made world-readable (data and reports are meant to be
// published; a temp file's 0600 would hide it from a web server running as
// another user), renamed over path, and the directory synced, so after a
// power cut path is the old file or the new one, never empty.
func WriteAtomic(path string, r io.Reader) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = io.Copy(tmp, r)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory, making the renames and creations in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// WriteJSON writes v as indented JSON to dir/name atomically.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return WriteFile(dir, name, append(b, '\n'))
}

// ReadJSON decodes dir/name into v; a missing file leaves v unchanged and returns os.ErrNotExist.
func ReadJSON(dir, name string, v any) error {
	b, err := ReadRegular(filepath.Join(dir, name), MaxMetaBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// Run is a run directory read back.
type Run struct {
	Dir string
	// Problems are what Read found wrong without refusing the run (a
	// trials.csv cut short, a run that says it is complete with no
	// trials); the report shows them.
	Problems    []string
	Meta        Meta
	Manifest    []byte // manifest.yaml as run
	Fingerprint json.RawMessage
	HostCheck   json.RawMessage
	Trials      []Trial
	Series      []Sample
	Latency     []Quantile
	Summary     []Summary
	Comparisons []Comparison
	Verdicts    json.RawMessage
}

// Read loads a run directory. Only run.json and trials.csv are required.
// The directory must not be a link and its files must be regular files
// (safefile.go); two rows for one trial are an error (Duplicates).
func Read(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	if err := CheckDir(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a threadlab run directory (it does not exist): pass data/<experiment>/<run-id>", dir)
		}
		return nil, err
	}
	if err := ReadJSON(dir, RunFile, &r.Meta); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a threadlab run directory (no %s): pass data/<experiment>/<run-id>", dir, RunFile)
		}
		return nil, err
	}
	var err error
	if r.Manifest, err = readOptional(dir, ManifestFile); err != nil {
		return nil, err
	}
	for name, dst := range map[string]*json.RawMessage{FingerprintFile: &r.Fingerprint, HostCheckFile: &r.HostCheck, VerdictsFile: &r.Verdicts} {
		b, err := readOptional(dir, name)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			*dst = b
		}
	}
	if r.Trials, err = ReadCSV[Trial](dir, TrialsFile); err != nil {
		return nil, err
	}
	if err := Duplicates(r.Trials); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, TrialsFile), err)
	}
	if err := r.consistent(); err != nil {
		return nil, err
	}
	if r.Series, err = ReadCSV[Sample](dir, SeriesFile); err != nil {
		return nil, err
	}
	if r.Latency, err = ReadCSV[Quantile](dir, LatencyFile); err != nil {
		return nil, err
	}
	if r.Summary, err = ReadCSV[Summary](dir, SummaryFile); err != nil {
		return nil, err
	}
	if r.Comparisons, err = ReadCSV[Comparison](dir, ComparisonsFile); err != nil {
		return nil, err
	}
	// Rows of trials without a commit line are from a crash mid-trial: the
	// trial does not exist yet, so none of its rows count.
	done, journal, err := committed(dir)
	if err != nil {
		return nil, err
	}
	if journal {
		r.Trials = filterCommitted(r.Trials, done, func(t Trial) trialKey { return trialKey{t.Variant, t.Point, t.Trial} })
		r.Series = filterCommitted(r.Series, done, func(s Sample) trialKey { return trialKey{s.Variant, s.Point, s.Trial} })
		r.Latency = filterCommitted(r.Latency, done, func(q Quantile) trialKey { return trialKey{q.Variant, q.Point, q.Trial} })
	}
	return r, nil
}

func readOptional(dir, name string) ([]byte, error) {
	b, err := ReadRegular(filepath.Join(dir, name), MaxMetaBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// FormatPoint renders a sweep point as key=value;key=value in key order.
func FormatPoint(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, ";")
}

// ParsePoint is the inverse of FormatPoint.
func ParsePoint(s string) map[string]string {
	p := map[string]string{}
	if s == "" {
		return p
	}
	for _, kv := range strings.Split(s, ";") {
		k, v, _ := strings.Cut(kv, "=")
		p[k] = v
	}
	return p
}

// Runs lists the run directories of an experiment under dataDir, newest last
// (run IDs sort by time).
func Runs(dataDir, experiment string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, experiment))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		// A linked run directory is listed, so that Read refuses it by
		// name rather than the site leaving it out without a word.
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			if _, err := os.Stat(filepath.Join(dataDir, experiment, e.Name(), RunFile)); err == nil {
				out = append(out, filepath.Join(dataDir, experiment, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadVerdicts decodes verdicts.json of a run (nil when absent).
func (r *Run) ReadVerdicts() ([]Verdict, error) {
	if len(r.Verdicts) == 0 {
		return nil, nil
	}
	var v []Verdict
	if err := json.Unmarshal(r.Verdicts, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(r.Dir, VerdictsFile), err)
	}
	return v, nil
}

// Duplicates returns an error naming the rows when trials.csv holds two
// rows for one trial of one group (variant, point, group, trial): two
// writers in one run directory, or rows appended by hand. Folding both into
// the statistics would count one trial twice.
func Duplicates(trials []Trial) error {
	type key struct {
		v, p, g string
		n       int
	}
	first := map[key]int{}
	var dup []string
	for i, t := range trials {
		k := key{t.Variant, t.Point, t.Group, t.Trial}
		if j, ok := first[k]; ok {
			if len(dup) < 5 {
				// Line numbers count the header as line 1.
				dup = append(dup, fmt.Sprintf("lines %d and %d (variant %q, point %q, group %q, trial %d)", j+2, i+2, t.Variant, t.Point, t.Group, t.Trial))
			} else if len(dup) == 5 {
				dup = append(dup, "...")
			}
			continue
		}
		first[k] = i
	}
	if len(dup) == 0 {
		return nil
	}
	return fmt.Errorf("duplicate trial rows: %s; one trial has one row per group: two writers shared this run directory, or rows were copied; delete the extra rows (and their lines in %s), or rerun", strings.Join(dup, "; "), CommitsFile)
}
