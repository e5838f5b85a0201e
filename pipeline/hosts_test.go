package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env/hosts"
	"github.com/threadlab/threadlab/experiments"
)

// TestHostsRefusedBeforeAnything: a multi-host run whose hosts do not
// answer fails before any stage, names every host with its fix, and leaves
// no run directory. (The network-namespace tests in cmd/threadlab and
// env/remote cover host keys and a missing JDK against real sshd servers.)
func TestHostsRefusedBeforeAnything(t *testing.T) {
	testenv.LookPath(t, "ssh", "apt-get install openssh-client (scripts/setup.sh does)")
	inv, err := hosts.Parse("hosts.yaml", []byte("target: ssh://root@127.0.0.1:1\nload: [ssh://root@127.0.0.2:1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, &inproc{})
	o.Hosts = inv
	o.Threadlab = func(context.Context, string, string) (string, error) {
		t.Error("threadlab was shipped to a host that never answered")
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Run(ctx, parse(t, 1), o)
	if err == nil || s != nil {
		t.Fatalf("Run = %v, %v; want a refusal and no state", s, err)
	}
	for _, want := range []string{
		"nothing was started",
		"host target ssh://root@127.0.0.1:1: unreachable", "host load[0] ssh://root@127.0.0.2:1: unreachable",
		"Connection refused", "fix: check that the host is up",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if entries, _ := os.ReadDir(o.DataDir); len(entries) > 0 {
		t.Errorf("a refused run left %v in %s", entries, o.DataDir)
	}
}

// TestHostsRefusePostgres: PostgreSQL needs a database host of its own in
// the inventory; without one the run is refused before anything starts,
// saying what to add.
func TestHostsRefusePostgres(t *testing.T) {
	m, err := experiments.Parse("pg.yaml", []byte(`name: pg
title: t
question: q
services: {database: postgres}
variants: {a: {target: spring-mvc}}
load: {model: closed, users: 1, duration: 1s, requests: [{path: /}]}
trials: 1
`), "")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := hosts.Parse("hosts.yaml", []byte("target: t\nload: [g]\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, &inproc{})
	o.Hosts = inv
	_, err = Run(context.Background(), m, o)
	if err == nil || !strings.Contains(err.Error(), "starts PostgreSQL") || !strings.Contains(err.Error(), "fix: add database: {ssh: HOST, address: ADDRESS} to hosts.yaml") {
		t.Fatalf("err = %v, want PostgreSQL refused with a fix", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(o.DataDir)); len(entries) > 0 {
		t.Errorf("a refused run left %v", entries)
	}
}

func TestRTTSummary(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // 1..100 ms, unsorted
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	r := rttSummary("load[0] g", "target t", ds)
	if r.N != 100 || r.MinMs != 1 || r.MaxMs != 100 || r.P50Ms != 51 || r.P99Ms != 100 {
		t.Errorf("summary %+v, want n 100, min 1, p50 51, p99 100, max 100", r)
	}
	if z := rttSummary("a", "b", nil); z.N != 0 || z.MaxMs != 0 {
		t.Errorf("empty summary %+v", z)
	}
}
