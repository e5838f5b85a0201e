package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/env"
)

func TestCheckJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runCheck(context.Background(), []string{"--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("no manifest asks for anything, so nothing can fail: %v\n%s", err, stdout.String())
	}
	var checks []env.Check
	if err := json.Unmarshal(stdout.Bytes(), &checks); err != nil {
		t.Fatalf("not a JSON list of checks: %v\n%s", err, stdout.String())
	}
	byName := map[string]env.Check{}
	for _, c := range checks {
		byName[c.Name] = c
		switch c.Status {
		case env.OK, env.Warn, env.Fail, env.Unknown:
		default:
			t.Errorf("%s: status %q", c.Name, c.Status)
		}
		if c.Value == "" || c.Want == "" {
			t.Errorf("%s: empty value or want", c.Name)
		}
	}
	// The rows the issue asks for, each present on this machine.
	for _, name := range []string{"cpu governor", "turbo boost", "smt", "load", "net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog",
		"net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "open files (RLIMIT_NOFILE)", "cgroup cpu limit",
		"cgroup memory limit", "swap", "transparent huge pages", "virtualization"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no %q check", name)
		}
	}
	// Any Linux has /proc/sys and getrlimit: these are never unknown.
	for _, name := range []string{"net.core.somaxconn", "open files (RLIMIT_NOFILE)"} {
		if byName[name].Status == env.Unknown {
			t.Errorf("%s unknown on this machine: %+v", name, byName[name])
		}
	}
}

func TestCheckTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runCheck(context.Background(), nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "status ") || !strings.Contains(lines[0], "value") {
		t.Errorf("header %q", lines[0])
	}
	if !strings.Contains(out, "15 checks: ") || !strings.Contains(out, "nothing was changed") {
		t.Errorf("no summary line:\n%s", out)
	}
	// Every warn or fail row is followed by its want, and by a fix unless
	// nothing can be run for it.
	for i, l := range lines {
		if strings.HasPrefix(l, "warn ") || strings.HasPrefix(l, "fail ") {
			if i+1 >= len(lines) || !strings.Contains(lines[i+1], "want: ") {
				t.Errorf("row %q has no want line", l)
			}
		}
	}
}

// Asking for a million connections fails on any default kernel: the
// accept queue and the fd limit cannot hold them. That is exit 1, not 2.
func TestCheckFailsOnRequirements(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := runCheck(context.Background(), []string{"--connections", "1000000"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("err = %v, want a failed-checks error\n%s", err, stdout.String())
	}
	var ue usageError
	if errors.As(err, &ue) {
		t.Errorf("failed checks are exit 1, not a usage error")
	}
	out := stdout.String()
	if !strings.Contains(out, "fail ") || !strings.Contains(out, "sysctl -w net.core.somaxconn=1000000") {
		t.Errorf("the failing somaxconn row should carry its fix:\n%s", out)
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{{"--connections", "-1"}, {"extra"}, {"--nope"}} {
		var stdout, stderr bytes.Buffer
		err := runCheck(context.Background(), args, &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error (exit 2)", args, err)
		}
	}
}
