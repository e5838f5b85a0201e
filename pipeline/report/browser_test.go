package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless-capable Chromium; THREADLAB_CHROMIUM overrides.
func chromium() string {
	for _, name := range []string{os.Getenv("THREADLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

var chartDiv = regexp.MustCompile(`<div id="(chart_[a-z0-9_]+)" class="plot"`)

// TestChartsDrawInBrowser opens rendered pages in headless Chromium from
// file:// and checks that every chart div received a canvas: the proof
// that echarts.min.js loaded by its relative path and every option
// (including the JavaScript formatters) evaluated without error. Golden
// files cannot see that. Skipped without Chromium, except in CI.
func TestChartsDrawInBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found: CI must install it (apt-get install -y chromium) so that charts are checked in a real browser")
		}
		t.Skip("chromium not found (apt-get install -y chromium); charts were not checked in a browser")
	}
	out := renderFixture(t)
	pages := []string{
		"io-bound/" + ioRun + "/index.html",     // bars, whiskers, dots, spectrum, series
		"io-bound/index.html",                   // the latest copy loads assets from one level up
		"pool-sweep/" + poolRun + "/index.html", // sweep lines and bands, pool series
	}
	for _, p := range pages {
		abs, err := filepath.Abs(filepath.Join(out, p))
		if err != nil {
			t.Fatal(err)
		}
		src, _ := os.ReadFile(abs)
		var ids []string
		for _, m := range chartDiv.FindAllSubmatch(src, -1) {
			ids = append(ids, string(m[1]))
		}
		if len(ids) < 5 {
			t.Errorf("%s: only %d charts in the page source", p, len(ids))
		}
		profile, err := os.MkdirTemp("", "threadlab-chromium-")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
			"--user-data-dir="+profile, "--virtual-time-budget=3000", "--dump-dom", "file://"+abs)
		dom, err := cmd.Output()
		cancel()
		os.RemoveAll(profile)
		if err != nil {
			t.Fatalf("%s: chromium --dump-dom: %v", p, err)
		}
		html := string(dom)
		if strings.Contains(html, "plot nojs") {
			t.Errorf("%s: echarts.min.js did not load (a chart div got the nojs class)", p)
		}
		for _, id := range ids {
			i := strings.Index(html, `id="`+id+`"`)
			if i < 0 {
				t.Errorf("%s: chart %s missing from the DOM", p, id)
				continue
			}
			rest := html[i:]
			if end := strings.Index(rest, "</figure>"); end >= 0 {
				rest = rest[:end]
			}
			if !strings.Contains(rest, "<canvas") {
				t.Errorf("%s: chart %s has no <canvas>: the chart did not draw", p, id)
			}
		}
	}
}
