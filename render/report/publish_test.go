package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want, why string }{
		{"spring.datasource.password=s3cr3t-x", "spring.datasource.password=[redacted]", "a Spring property"},
		{`"password": "hunter2"`, `"password": "[redacted]"`, "JSON"},
		{"jdbc:postgresql://tl:pw0rd@127.0.0.1:5433/db", "jdbc:postgresql://tl:[redacted]@127.0.0.1:5433/db", "URL credentials"},
		{"API_KEY: abc123 rest", "API_KEY: [redacted] rest", "an API key"},
		{"PGPASSWORD=x1", "PGPASSWORD=[redacted]", "libpq's variable"},
		{"Started Application in 2.1 seconds", "Started Application in 2.1 seconds", "ordinary lines stay"},
		{"token count 5", "token count 5", "a word without a value stays"},
	} {
		if got := string(redact([]byte(c.in))); got != c.want {
			t.Errorf("%s: redact(%q) = %q, want %q", c.why, c.in, got, c.want)
		}
	}
}

func TestCapLog(t *testing.T) {
	small := []byte("a\nb\n")
	if string(capLog(small)) != string(small) {
		t.Error("a small log must pass unchanged")
	}
	line := strings.Repeat("x", 99) + "\n"
	big := []byte("START\n" + strings.Repeat(line, 10_000) + "END\n") // ~1 MB
	got := string(capLog(big))
	if len(got) > logCap+200 {
		t.Errorf("capped log is %d bytes, want about %d", len(got), logCap)
	}
	if !strings.HasPrefix(got, "START\n") || !strings.HasSuffix(got, "END\n") || !strings.Contains(got, "bytes left out here") {
		t.Error("a capped log keeps its start, its end and says what was cut")
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "x") && len(l) != 99 {
			t.Fatalf("a line was cut in the middle: %d bytes", len(l))
		}
	}
}

// TestLogsPublished: the run's target logs are published next to its page,
// linked from it, with the fixture's database password redacted.
func TestLogsPublished(t *testing.T) {
	out := renderFixture(t)
	dir := filepath.Join(out, "io-bound", ioRun)
	entries, err := os.ReadDir(filepath.Join(dir, record.LogsDir))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no logs published: %v", err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, record.LogsDir, e.Name()))
		if strings.Contains(string(b), "fixture-secret") || !strings.Contains(string(b), "[redacted]") {
			t.Errorf("%s: the password was published", e.Name())
		}
		if !strings.Contains(string(page), `href="logs/`+e.Name()+`"`) {
			t.Errorf("the page does not link logs/%s", e.Name())
		}
	}
	hists, _ := os.ReadDir(filepath.Join(dir, record.HistogramsDir))
	if len(hists) != 18 {
		t.Errorf("%d histogram logs published, want one per trial (18)", len(hists))
	}
}

// TestPageBudget: a run page with its published histograms, logs and raw
// data stays within 1.5 MB (issue 13's budget; the site's shared assets,
// echarts.min.js, are excluded: they are shipped once per site).
func TestPageBudget(t *testing.T) {
	out := renderFixture(t)
	for _, run := range []string{"io-bound/" + ioRun, "pool-sweep/" + poolRun} {
		var total int64
		err := filepath.WalkDir(filepath.Join(out, run), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				st, _ := d.Info()
				total += st.Size()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d KB with its histograms, logs and raw data", run, total>>10)
		if total > 1_500_000 {
			t.Errorf("%s: %d bytes, over the 1.5 MB budget", run, total)
		}
		if page := readFile(t, out, run+"/index.html"); strings.Count(page, "echarts.min.js\"></script>") != 1 {
			t.Errorf("%s: echarts is loaded more than once", run)
		}
	}
}
