package supervise

// The supervisor side: what runs in the re-executed threadlab.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// Main is the supervisor: it starts argv (after "--" in args), reports
// "pid N" (or "err MSG") on report, and waits for the program to end, for
// SIGTERM/SIGINT/SIGHUP (passed on to the program's group) or for EOF on
// ctl (the parent is gone). However it ends, it kills whatever the program
// left behind before it exits, and exits with the program's status. Held
// files are fds holdFrom, holdFrom+1, ... as many as --hold says.
func Main(args []string, ctl io.Reader, report io.Writer, holdFrom int) int {
	fs := flag.NewFlagSet("supervise", flag.ContinueOnError)
	grace := fs.Duration("grace", DefaultGrace, "time between SIGTERM and SIGKILL when asked to stop")
	hold := fs.Int("hold", 0, "number of inherited files to keep open until everything is gone")
	uid := fs.Int("uid", -1, "run the program as this user id")
	gid := fs.Int("gid", -1, "run the program with this group id")
	pidfile := fs.String("pidfile", "", "write the program's pid to this file once it runs (a remote host's sampler reads it)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "threadlab supervise: no command: usage: threadlab supervise [--grace 10s] -- program args...")
		return 2
	}
	// The lifeline and held files are ours alone: the program must not
	// inherit them, or it would keep a lock or the lifeline alive.
	if f, ok := ctl.(*os.File); ok {
		syscall.CloseOnExec(int(f.Fd()))
	}
	for i := range *hold {
		syscall.CloseOnExec(holdFrom + i)
	}
	// Orphaned grandchildren (a `sh -c` whose shell died, a double fork)
	// become our children instead of init's, so we can find and kill them.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "threadlab supervise: PR_SET_CHILD_SUBREAPER: %v (orphaned grandchildren may escape)\n", e)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = withoutKey(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if *uid >= 0 {
		// Groups is empty on purpose: drop root's supplementary groups.
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(*uid), Gid: uint32(max(*gid, 0))}
	}
	if err := cmd.Start(); err != nil {
		msg := fmt.Sprintf("start %s: %v (is it installed and on PATH?)", argv[0], err)
		fmt.Fprintf(report, "err %s\n", strings.ReplaceAll(msg, "\n", " "))
		return 127
	}
	fmt.Fprintf(report, "pid %d\n", cmd.Process.Pid)
	if *pidfile != "" {
		// Written whole, then renamed: a reader never sees half a number.
		tmp := *pidfile + ".part"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err == nil {
			err = os.Rename(tmp, *pidfile)
		}
	}
	sv := &supervisor{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		sv.state, _ = cmd.Process.Wait()
		close(sv.exited)
	}()
	parentGone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, ctl)
		close(parentGone)
	}()
	select {
	case <-sv.exited:
		sv.terminate(syscall.SIGTERM, time.Second) // what the program left behind
	case sig := <-sigs:
		sv.terminate(sig.(syscall.Signal), *grace)
	case <-parentGone:
		sv.terminate(syscall.SIGTERM, min(*grace, orphanGrace))
	}
	return sv.exit()
}

type supervisor struct {
	pid    int // the program, leader of its own process group
	exited chan struct{}
	state  *os.ProcessState
}

// terminate sends sig to the program's group and every other descendant,
// waits up to grace for all of them to go, then SIGKILLs what is left until
// nothing is.
func (sv *supervisor) terminate(sig syscall.Signal, grace time.Duration) {
	sv.signalAll(sig)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if sv.gone() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for range 250 { // 5 s; SIGKILL cannot be refused, so this ends early
		sv.signalAll(syscall.SIGKILL)
		if sv.gone() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "threadlab supervise: processes %v survived SIGKILL\n", sv.leftovers())
}

func (sv *supervisor) signalAll(sig syscall.Signal) {
	_ = syscall.Kill(-sv.pid, sig)
	for _, pid := range sv.leftovers() {
		_ = syscall.Kill(pid, sig)
	}
}

// gone reports whether the program has been reaped and no live process of
// its group or below us remains; it reaps orphans re-parented to us.
func (sv *supervisor) gone() bool {
	select {
	case <-sv.exited:
	default:
		return false
	}
	return len(sv.leftovers()) == 0
}

// leftovers lists the live processes of the program's group and every live
// descendant of the supervisor, reaping dead children other than the program
// (whose status cmd.Process.Wait collects).
func (sv *supervisor) leftovers() []int {
	self := os.Getpid()
	procs := scanProcs()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	byPid := map[int]procInfo{}
	for _, p := range procs {
		byPid[p.pid] = p
	}
	var out []int
	seen := map[int]bool{}
	add := func(pid int) {
		if p, ok := byPid[pid]; ok && !seen[pid] && pid != self {
			seen[pid] = true
			if p.state == 'Z' {
				if p.ppid == self && pid != sv.pid {
					var ws syscall.WaitStatus
					syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				}
				return
			}
			out = append(out, pid)
		}
	}
	for _, p := range procs {
		if p.pgrp == sv.pid {
			add(p.pid)
		}
	}
	queue := []int{self}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			add(c)
			queue = append(queue, c)
		}
	}
	return out
}

type procInfo struct {
	pid, ppid, pgrp int
	state           byte
}

// scanProcs reads pid, state, ppid and process group of every process from
// /proc/PID/stat; the fields after the command name, which is in
// parentheses and may contain anything, are counted from its last ')'.
func scanProcs() []procInfo {
	entries, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || len(f[0]) == 0 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		out = append(out, procInfo{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0]})
	}
	return out
}

// exit returns the program's exit status; a program killed by a signal
// makes the supervisor die of the same signal, so the parent sees
// "signal: terminated" just as it would without a supervisor.
func (sv *supervisor) exit() int {
	<-sv.exited
	ws, ok := sv.state.Sys().(syscall.WaitStatus)
	if !ok {
		return 1
	}
	if ws.Signaled() {
		sig := ws.Signal()
		switch sig {
		case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL, syscall.SIGPIPE:
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig)
			time.Sleep(time.Second)
		}
		return 128 + int(sig)
	}
	return ws.ExitStatus()
}
