package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// Roles of the processes whose CPU affinity run.json records.
const (
	roleTarget     = "target"
	roleGenerator  = "load generator"
	rolePostgres   = "postgres"
	roleDownstream = "downstream"
)

// readBack records in run.json the CPU affinity the kernel reports for
// each of pids beside what the manifest's pinning asked for that role
// (trial.ReadBack), warning once per role about a pinning not in force.
func (s *State) readBack(role, asked string, pids ...int) {
	s.Meta.Affinity = s.aff.Read(s.Meta.Affinity, role, asked, s.Warn, pids...)
}

// readBackServices reads the services threadlab started: every process of
// the PostgreSQL cluster's group (the postmaster, its helpers and, once a
// target is connected, the backends) and the downstream process.
func (s *State) readBackServices() {
	asked := s.M.Pinning.Services
	if s.pgGroup > 0 {
		s.readBack(rolePostgres, asked, env.GroupPids(s.pgGroup)...)
	}
	if s.downstreamPid > 0 {
		s.readBack(roleDownstream, asked, s.downstreamPid)
	}
}

// pinGroup pins a service's process group to the manifest's services CPUs.
func (s *State) pinGroup(what string, pgid int) error {
	cpus := s.M.Pinning.Services
	if cpus == "" || pgid <= 0 {
		return nil
	}
	list, err := env.ParseCPUList(cpus)
	if err == nil {
		_, err = env.PinGroup(pgid, list)
	}
	if err != nil {
		return fmt.Errorf("pin %s to CPUs %s (pinning.services): %w", what, cpus, err)
	}
	return nil
}

// serviceGroup records the process group of a service from its pid file
// (PostgreSQL's postmaster.pid: the pid on the first line leads its
// group, since pg_ctl starts the server in a new session) and returns it,
// 0 when it cannot be read.
func (s *State) serviceGroup(pidFile string) int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
		if g, err := syscall.Getpgid(pid); err == nil {
			s.groups = append(s.groups, g)
			return g
		}
	}
	return 0
}

// startDownstream runs the downstream service as a process of its own,
// under taskset -c pinning.services, so that it is pinned apart from the
// load generator: Options.Downstream is its command ({port} and {delay}
// replaced). Its process group is the experiment's, so its CPU is not
// counted as host noise.
func (s *State) startDownstream(ctx context.Context, delay time.Duration) (string, error) {
	port, err := supervise.FreePort("127.0.0.1")
	if err != nil {
		return "", err
	}
	var argv []string
	if cpus := s.M.Pinning.Services; cpus != "" {
		argv = []string{"taskset", "-c", cpus}
	}
	for _, a := range s.Opt.Downstream {
		a = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
		argv = append(argv, strings.ReplaceAll(a, "{delay}", delay.String()))
	}
	logPath := filepath.Join(s.Dir, record.LogsDir, "downstream.log")
	t, err := trial.Processes{}.Launch(context.WithoutCancel(ctx), trial.Spec{Name: roleDownstream, Argv: argv, Port: port, Ready: "/health", LogPath: logPath})
	if err != nil {
		return "", err
	}
	s.OnCleanup(func() { t.Stop() })
	if err := trial.WaitReady(ctx, t, "/health", logPath, 30*time.Second); err != nil {
		return "", err
	}
	s.downstreamPid = t.Pid()
	if g, err := syscall.Getpgid(t.Pid()); err == nil && g != syscall.Getpgrp() {
		s.groups = append(s.groups, g)
	}
	return t.URL(), nil
}
