package telemetry

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseProm(t *testing.T) {
	tests := []struct {
		file, why string
		want      map[string]float64
		absent    []string
		skipped   int
		firstLine int
	}{
		{file: "actuator-mvc.txt", why: "Spring Boot actuator, current Micrometer format",
			want: map[string]float64{
				"hikaricp_connections_active":  7,
				"hikaricp_connections_pending": 143,
				// two causes of young pauses: 12 + 2 pauses, 0.084 + 0.016 s
				"jvm_gc_pause_seconds_count":                              14,
				"jvm_gc_pause_seconds_sum":                                0.1,
				`jvm_gc_pause_seconds_count{gc="G1 Young Generation"}`:    14,
				`jvm_gc_pause_seconds_count{cause="G1 Evacuation Pause"}`: 12,
				// heap pools only: eden 40 MiB + old 20 MiB + survivor 1 MiB = 61 MiB = 63963136 B
				`jvm_memory_used_bytes{area="heap"}`: 63963136,
				// all pools: 63963136 + code heap 1572864 + metaspace 52428800
				"jvm_memory_used_bytes":    117964800,
				"jvm_threads_live_threads": 231,
				"jvm_threads_peak_threads": 236,
				// -1 (undefined max) is a value like any other
				"jvm_memory_max_bytes": -1,
			},
			absent: []string{"system_load_average_1m"}, // NaN is left out, not summed into NaN
		},
		{file: "micrometer-trailing-comma.txt", why: "older Micrometer: trailing comma in labels, timestamps, escapes in label values",
			want: map[string]float64{
				"jvm_threads_live_threads":                      25,
				"jvm_gc_pause_seconds_count":                    3,
				"jvm_gc_pause_seconds_sum":                      0.021,
				`http_server_requests_seconds_count{uri="/io"}`: 1500,
				"weird_label{path=" + strconv.Quote(`a "quoted" \ path, with {braces} and = signs`) + "}": 1,
			}},
		{file: "malformed.txt", why: "9 malformed lines skipped and counted, the 6 good ones summed",
			want: map[string]float64{
				"jvm_threads_live_threads":            42, // 40 + 2 (a labelled series of the same name)
				`jvm_threads_live_threads{state="x"}`: 2,
				"jvm_threads_peak_threads":            44,
				`jvm_memory_used_bytes{area="heap"}`:  1048576, // the unterminated Old Gen line is not half-read
				"jvm_gc_pause_seconds_count":          5,
				"jvm_gc_pause_seconds_sum":            0.5,
			},
			absent:  []string{"hikaricp_connections_pending", "hikaricp_connections_active", "truncated_metric", "this"},
			skipped: 9, firstLine: 3},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := ParseProm(f)
			var pe *ParseError
			if tt.skipped == 0 && err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if tt.skipped > 0 {
				if !errors.As(err, &pe) || pe.Skipped != tt.skipped || pe.FirstLine != tt.firstLine {
					t.Fatalf("%s: err = %v, want a ParseError with %d skipped, first at line %d", tt.why, err, tt.skipped, tt.firstLine)
				}
				if !strings.Contains(pe.Error(), "skipped 9 malformed lines") {
					t.Errorf("message %q", pe.Error())
				}
			}
			for k, v := range tt.want {
				got, ok := m[k]
				if !ok || math.Abs(got-v) > 1e-9 {
					t.Errorf("%s: %s = %v (present %v), want %v", tt.why, k, got, ok, v)
				}
			}
			for _, k := range tt.absent {
				if v, ok := m[k]; ok {
					t.Errorf("%s: %s should be absent, got %v", tt.why, k, v)
				}
			}
		})
	}
}

func TestParsePromLineErrors(t *testing.T) {
	for _, tt := range []struct{ line, why string }{
		{`m{a="1"`, "label set never closed"},
		{`m{a=1} 2`, "unquoted label value"},
		{`m{="1"} 2`, "empty label name"},
		{`m 1 notatimestamp`, "bad timestamp"},
		{`m`, "no value"},
		{`1m 2`, "name starts with a digit"},
	} {
		if _, _, _, err := parsePromLine(tt.line); err == nil {
			t.Errorf("%q (%s): no error", tt.line, tt.why)
		}
	}
	name, labels, v, err := parsePromLine(`m:sub_total{ a="x" , b="y\n" } +Inf`)
	if err != nil || name != "m:sub_total" || len(labels) != 2 || labels[1][1] != "y\n" || !math.IsInf(v, 1) {
		t.Errorf("spaces around labels, newline escape, +Inf: %q %v %v %v", name, labels, v, err)
	}
}

func TestCounterDelta(t *testing.T) {
	for _, tt := range []struct {
		cur, prev, want float64
		reset           bool
		why             string
	}{
		{14, 12, 2, false, "two collections since the last scrape"},
		{12, 12, 0, false, "none"},
		// The JVM restarted and has collected 3 times since: all 3 are new.
		// Summing cumulative values instead (seed 002's bug) would have said 12+3.
		{3, 12, 3, true, "counter reset"},
		{0.1, 0.084, 0.016, false, "pause seconds"},
	} {
		got, reset := CounterDelta(tt.cur, tt.prev)
		if math.Abs(got-tt.want) > 1e-12 || reset != tt.reset {
			t.Errorf("%s: CounterDelta(%v, %v) = %v, %v; want %v, %v", tt.why, tt.cur, tt.prev, got, reset, tt.want, tt.reset)
		}
	}
}
