package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/measure/load"
)

// roundTrip sends r the way an agent does and reads it back the way Drive does.
func roundTrip(t *testing.T, r *load.Result) *load.Result {
	t.Helper()
	w, err := toWire(r)
	if err != nil {
		t.Fatal(err)
	}
	line, err := encodeLine(message{Type: msgResult, Result: w})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(line), "\n") != 1 {
		t.Fatalf("a result is not one line: %q", line)
	}
	m, err := decodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	back, err := fromWire(m.Result)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// diff lists where a and b differ, walking every field: histograms must be
// Equal (geometry and every count), times the same instant, floats the same
// bits (NaN included), and nil slices and maps stay nil.
func diff(path string, a, b reflect.Value, out *[]string) {
	switch {
	case a.Type() == reflect.TypeFor[*hdrhistogram.Histogram]():
		ha, hb := a.Interface().(*hdrhistogram.Histogram), b.Interface().(*hdrhistogram.Histogram)
		if (ha == nil) != (hb == nil) || ha != nil && !ha.Equals(hb) {
			*out = append(*out, path+": histograms differ")
		}
		return
	case a.Type() == reflect.TypeFor[time.Time]():
		if !a.Interface().(time.Time).Equal(b.Interface().(time.Time)) {
			*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface()))
		}
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			diff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i), out)
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			*out = append(*out, fmt.Sprintf("%s: nil %v len %d vs nil %v len %d", path, a.IsNil(), a.Len(), b.IsNil(), b.Len()))
			return
		}
		for i := range a.Len() {
			diff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i), out)
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			*out = append(*out, fmt.Sprintf("%s: nil %v len %d vs nil %v len %d", path, a.IsNil(), a.Len(), b.IsNil(), b.Len()))
			return
		}
		for _, k := range a.MapKeys() {
			if !b.MapIndex(k).IsValid() {
				*out = append(*out, fmt.Sprintf("%s[%v]: missing", path, k))
				continue
			}
			diff(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k), out)
		}
	case reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) && !(math.IsNaN(a.Float()) && math.IsNaN(b.Float())) {
			*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a.Float(), b.Float()))
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface()))
		}
	}
}

func sameResult(t *testing.T, why string, want, got *load.Result) {
	t.Helper()
	var d []string
	diff("Result", reflect.ValueOf(*want), reflect.ValueOf(*got), &d)
	for _, s := range d {
		t.Errorf("%s: %s", why, s)
	}
}

// zeroFields lists the fields of v left at their zero value.
func zeroFields(path string, v reflect.Value, out *[]string) {
	if v.IsZero() {
		*out = append(*out, path)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			zeroFields(path+"."+v.Type().Field(i).Name, v.Field(i), out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			zeroFields(fmt.Sprintf("%s[%d]", path, i), v.Index(i), out)
		}
	}
}

// full is a Result with every field set, odd floats included, so a field
// the wire forgets, or one added to load.Result later, fails the test.
func full() *load.Result {
	h := groupHist()
	for _, v := range []int64{1, 999, 20_000, 20_001, 59_999_999} {
		h.RecordValue(v)
	}
	s := secondHist()
	s.RecordValues(20_000, 7)
	c := groupHist()
	c.RecordValues(180, 30)
	c.RecordValue(1_003_000) // a SYN sent again
	return &load.Result{
		Start: time.Date(2026, 12, 1, 10, 30, 0, 123_456_789, time.UTC),
		Wall:  1234567891 * time.Nanosecond,
		Groups: []load.GroupResult{{
			Name: "io", Model: load.Open, Requests: 12, Errors: 2, OK: 9,
			ErrorsByClass: map[string]int64{"timeout": 1, "http_5xx": 1, "refused": 0},
			Wall:          999_999_999, RPS: 1.0 / 3, Latency: h, Connect: c, SlowConnects: 1,
			Series: []load.Second{
				{T: 3, Requests: 7, Errors: 1, P50Ms: 20.1, P99Ms: math.Nextafter(20, 21), Latency: s},
				{T: 4, Requests: 1, Errors: 1, P50Ms: math.Inf(1), P99Ms: math.NaN(), Latency: hdrhistogram.New(1, 60_000_000, 2)},
			},
			Headers:   map[string]int64{"virtual-1": 5, "": 1, "ünïcode \"quoted\"\n": 2},
			AskedRate: 1e-300, AchievedRate: 5e300, Missed: 3, LatePct: 0.30000000000000004, MaxInFlight: 10000,
			Stalled: "no response for 5s", Release: 500*time.Millisecond + 1, Releases: []time.Duration{500 * time.Millisecond, 503 * time.Millisecond}, ReleaseSpread: 3 * time.Millisecond,
		}},
		Self:    load.SelfCheck{CPUSeconds: 0.333, CPUPct: math.Inf(-1), Cores: 2, Sockets: 40, Saturated: true, Reason: "late"},
		Stalled: "group io: no response for 5s",
	}
}

func TestWireRoundTripEveryField(t *testing.T) {
	r := full()
	var zero []string
	zeroFields("Result", reflect.ValueOf(*r), &zero)
	if len(zero) > 0 {
		t.Fatalf("the test Result leaves fields at zero, so the round trip would not check them: %v (set them in full())", zero)
	}
	sameResult(t, "every field", r, roundTrip(t, r))

	// Absent things stay absent: nil histograms, maps and series, no groups.
	sparse := &load.Result{Groups: []load.GroupResult{{Name: "g", Model: load.Burst}, {Name: "h", ErrorsByClass: map[string]int64{}, Series: []load.Second{}}}}
	sameResult(t, "nil and empty fields", sparse, roundTrip(t, sparse))
	sameResult(t, "no groups", &load.Result{}, roundTrip(t, &load.Result{}))
}

// A Result as load.Run makes it, errors and counted headers included, comes
// back the same.
func TestWireRoundTripRealRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Thread", "t"+r.URL.Path[len(r.URL.Path)-1:])
		if strings.HasSuffix(r.URL.Path, "3") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		time.Sleep(time.Millisecond)
	}))
	defer srv.Close()
	res, err := load.Run(context.Background(), load.Plan{Target: srv.URL, Seed: 1, Groups: []load.Group{
		{Name: "closed", Model: load.Closed, Users: 4, Duration: 1200 * time.Millisecond, CountHeader: "X-Thread",
			Requests: []load.Request{{Path: "/p/{random 1..3}"}}},
		{Name: "open", Model: load.Open, Rate: 200, Duration: time.Second, Requests: []load.Request{{Path: "/q/1"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Groups[0].Errors == 0 || len(res.Groups[0].Headers) != 3 || len(res.Groups[1].Series) == 0 {
		t.Fatalf("the run should have errors, 3 header values and a series: %+v", res.Groups)
	}
	sameResult(t, "load.Run result", res, roundTrip(t, res))
}

// The job decoder takes what the controller sends and refuses the rest.
func TestDecodeJob(t *testing.T) {
	job := func(groups string) string {
		return `{"type":"job","job":{"target":"http://127.0.0.1:8080","seed":7,"start":1,"groups":` + groups + `}}`
	}
	for _, tc := range []struct {
		why, line, err string
	}{
		{"a ping", `{"type":"ping","seq":3}`, ""},
		{"a valid job", job(`[{"Name":"g","Model":"closed","Users":2,"Duration":1000000000,"Requests":[{"Path":"/"}]}]`), ""},
		{"not JSON", `bash: threadlab: command not found`, "not a protocol message"},
		{"an unknown field, as from a newer controller", `{"type":"ping","seq":1,"hello":2}`, `unknown field "hello"`},
		{"an unknown group field", job(`[{"Name":"g","Model":"closed","Users":2,"Duration":1,"Requests":[{"Path":"/"}],"Warp":9}]`), `unknown field "Warp"`},
		{"two values on a line", `{"type":"ping"} {"type":"ping"}`, "more than one JSON value"},
		{"a message for the controller", `{"type":"result"}`, `unexpected message type "result"`},
		{"a job without one", `{"type":"job"}`, "job message without a job"},
		{"an invalid plan", job(`[{"Name":"g","Model":"closed","Users":0,"Duration":1,"Requests":[{"Path":"/"}]}]`), "closed model needs users > 0"},
		{"no groups", job(`[]`), "plan has no groups"},
		{"a hostile path", job(`[{"Name":"g","Model":"closed","Users":1,"Duration":1,"Requests":[{"Path":"/\r\nX: 1"}]}]`), "request 1"},
	} {
		m, p, err := decodeJob([]byte(tc.line))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.why, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one containing %q", tc.why, err, tc.err)
		case err == nil && m.Type == msgJob && (p.Seed != 7 || len(p.Groups) != 1 || p.Groups[0].Duration != time.Second):
			t.Errorf("%s: decoded plan %+v", tc.why, p)
		}
	}
}

// FuzzDecodeJob: whatever arrives on an agent's stdin, the decoder returns
// an error or a message; a job it accepts is a plan load.Run accepts.
func FuzzDecodeJob(f *testing.F) {
	for _, s := range []string{
		`{"type":"ping","seq":1}`,
		`{"type":"job","job":{"target":"http://127.0.0.1:8080","seed":7,"start":1,"groups":[{"Name":"g","Model":"open","Rate":100,"Duration":1000000000,"Requests":[{"Path":"/{random 1..9}"}]}]}}`,
		`{"type":"job","job":{"target":"http://[::1]:1","groups":[{"Model":"ramp","Stages":[{"Duration":1,"Users":1e99}],"Requests":[{"Path":"/"}]}]}}`,
		`{"type":"job","job":{"groups":[{"Model":"burst","Burst":-1,"Requests":[{"Method":"G\u0000T"}]}]}}`,
		`{"type":"job","job":null}`,
		`{"type":1}`,
		`[]`,
		``,
		"\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, p, err := decodeJob(line)
		if err == nil && m.Type == msgJob {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("accepted a job whose plan load refuses: %v", verr)
			}
		}
		if err == nil && m.Type != msgJob && m.Type != msgPing {
			t.Fatalf("accepted a %q message", m.Type)
		}
	})
}

// FuzzDecodeResult: whatever an agent (or a shell in its place) prints, the
// controller's decoder returns an error or a Result, never panics.
func FuzzDecodeResult(f *testing.F) {
	w, err := toWire(full())
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(message{Type: msgResult, Result: w})
	f.Add(good)
	f.Add([]byte(`{"type":"result","result":{"groups":[{"latency":"HISTFAAAACR42pNpmSzMwMDAzgABzFCaEUzOmLIYLPiBGQA="}]}}`))
	f.Add([]byte(`{"type":"result","result":{"groups":[{"series":[{"latency":"!!"}],"rps":"NaN"}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := decodeMessage(line)
		if err != nil || m.Type != msgResult {
			return
		}
		fromWire(m.Result) // must not panic
	})
}

// TestResultHostileHistogram: an agent's result whose histogram header
// claims 1..MaxInt64 at 5 digits (53 characters that would allocate 49 MB)
// is refused with an error naming the group, before the allocation.
func TestResultHostileHistogram(t *testing.T) {
	const wide = "HISTFAAAAB54nJJpmSzMgACsUJqx/j8E2H+ACAACAAD//5XnCfQ=" // record's craftHist(1, MaxInt64, 5, nil)
	s := wide
	_, err := fromWire(&wireResult{Groups: []wireGroup{{Name: "main", Latency: &s}}})
	if err == nil || !strings.Contains(err.Error(), "group main") || !strings.Contains(err.Error(), "not a histogram threadlab wrote") {
		t.Fatalf("hostile histogram in a result: %v", err)
	}
}
