package pipeline

// Multi-host runs (threadlab run --hosts hosts.yaml, issue 14): the target
// and the downstream service start on their hosts under threadlab's remote
// supervisor, bound to the inventory's addresses; the load generators are
// agents on the load hosts, driven as one by the fleet driver
// (measure/fleet.Drive); every host's fingerprint and host check go into
// run.json under hosts. Without an inventory none of this runs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/hosts"
	"github.com/threadlab/threadlab/env/remote"
	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/fleet"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// hostRun is a multi-host run's connections and what preflight found.
type hostRun struct {
	inv        *hosts.Inventory
	sess       *remote.Session
	target     *remote.Host
	downstream *remote.Host // the downstream host, or the target's
	dsSpec     hosts.Host
	load       []*remote.Host
	javaHome   string // the target host's JDK
	dbPidFile  string // the postmaster's pid file on the database host, for its sampler
	rec        *record.Hosts

	agents agents                       // the load hosts' generators, kept for the run
	spawn  func(i int) (spawned, error) // starts the i-th generator; nil: over ssh (tests give in-process ones)

	mu          sync.Mutex
	fingerprint bool                    // taken already
	bootIDs     map[*remote.Host]string // each host's kernel boot id (hostsample.go), read once
	warned      map[string]bool
}

// connectHosts is the multi-host preflight, before the first trial: every
// host reachable over ssh with a trusted host key, threadlab shipped to it,
// a JDK >= 21 on the target host when a variant needs one, and the round
// trip from each load host to the target. Every host that fails is named
// with its fix, all at once.
func connectHosts(ctx context.Context, m *experiments.Manifest, opt Options) (*hostRun, error) {
	inv := opt.Hosts
	if m.Services.Database == "postgres" && inv.Database == nil {
		return nil, fmt.Errorf("%s starts PostgreSQL, which a multi-host run places on a database host of its own; fix: add database: {ssh: HOST, address: ADDRESS} to %s", m.Name, inv.File)
	}
	sess, err := remote.NewSession(remote.Options{SSHConfig: inv.SSHConfig})
	if err != nil {
		return nil, err
	}
	hr := &hostRun{inv: inv, sess: sess, warned: map[string]bool{}}
	ok := false
	defer func() {
		if !ok {
			sess.Close()
		}
	}()
	all := inv.All()
	conns := make([]*remote.Host, len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, h := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], errs[i] = sess.Connect(ctx, h.SSH, h.Name())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("the hosts of %s are not ready (nothing was started):\n%w", inv.File, err)
	}
	// Two aliases of one machine as target and load host: the inventory's
	// check compared the destinations as written; ssh -G has now said
	// where each one goes.
	resolved := map[string]string{}
	for i, h := range all {
		resolved[h.SSH] = conns[i].SSHName
	}
	if probs := inv.SharedAfterSSH(resolved); len(probs) > 0 {
		return nil, fmt.Errorf("the hosts of %s are not ready (nothing was started):\n%w", inv.File, probs)
	}
	// threadlab itself, for each host's platform.
	find := opt.Threadlab
	if find == nil {
		find = func(ctx context.Context, goos, goarch string) (string, error) {
			return remote.Binary(ctx, goos, goarch, ".")
		}
	}
	bins := map[string]string{}
	for _, c := range conns {
		key := c.OS + "/" + c.Arch
		if _, done := bins[key]; !done {
			if bins[key], err = find(ctx, c.OS, c.Arch); err != nil {
				return nil, fmt.Errorf("host %s: %w", c.Name, err)
			}
		}
	}
	for i, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.SetBinary(ctx, bins[c.OS+"/"+c.Arch]) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	hr.target = conns[0]
	hr.load = conns[1 : 1+len(inv.Load)]
	hr.downstream, hr.dsSpec = hr.target, inv.Target
	if inv.Downstream != nil {
		hr.downstream, hr.dsSpec = conns[1+len(inv.Load)], *inv.Downstream
	}
	rec := &record.Hosts{Inventory: inv.File}
	for i, h := range all {
		c := conns[i]
		rec.Hosts = append(rec.Hosts, record.RemoteHost{Role: h.Role, SSH: h.SSH, Address: hr.address(h, c), CPUs: h.CPUs,
			Hostname: c.Hostname, Platform: c.OS + "/" + c.Arch})
	}
	if needsJVM(m) {
		home, major, err := hr.target.JDK(ctx)
		if err != nil {
			return nil, fmt.Errorf("the hosts of %s are not ready (nothing was started):\n%w", inv.File, err)
		}
		hr.javaHome = home
		rec.Hosts[0].JavaHome, rec.Hosts[0].JDK = home, major
	}
	// The network between generators and target: TCP connects to the
	// target host's sshd, which listens before any target does.
	sshPort := hr.target.SSHPort
	if sshPort == 0 {
		sshPort = 22
	}
	taddr := net.JoinHostPort(hr.address(inv.Target, hr.target), strconv.Itoa(sshPort))
	for i, c := range hr.load {
		ds, err := c.RTT(ctx, taddr, 20)
		if err != nil {
			return nil, fmt.Errorf("host %s cannot reach the target host at %s: %w; fix: the load hosts must reach the target's address (hosts.yaml target.address)", c.Name, taddr, err)
		}
		rec.RTT = append(rec.RTT, rttSummary(inv.Load[i].Name(), inv.Target.Name(), ds))
	}
	names, addrs := make([]string, len(all)), make([]string, len(all))
	for i, h := range all {
		names[i], addrs[i] = h.Role+" "+h.SSH, hr.address(h, conns[i])
	}
	rec.Network = hr.probeNetwork(ctx, conns, names, addrs)
	hr.rec = rec
	ok = true
	return hr, nil
}

func needsJVM(m *experiments.Manifest) bool {
	return slices.ContainsFunc(m.Variants, func(v experiments.Variant) bool { return v.Target != "" })
}

// address is where a host's services listen: the inventory's address, else
// the host name ssh connects to.
func (hr *hostRun) address(h hosts.Host, c *remote.Host) string {
	switch {
	case h.Address != "":
		return h.Address
	case c != nil && c.SSHName != "":
		return c.SSHName
	}
	return hosts.HostPart(h.SSH)
}

func rttSummary(from, to string, ds []time.Duration) record.RTT {
	r := record.RTT{From: from, To: to, N: len(ds)}
	if len(ds) == 0 {
		return r
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) float64 { return ms(s[min(len(s)-1, int(p*float64(len(s))))]) }
	r.MinMs, r.P50Ms, r.P99Ms, r.MaxMs = ms(s[0]), q(0.5), q(0.99), ms(s[len(s)-1])
	return r
}

// close stops the load generators and ends every connection; the run's
// cleanups have stopped the other remote programs before.
func (hr *hostRun) close() {
	hr.agents.mu.Lock()
	hr.stopAgents() // they exit 0 on the end of their stdin; nobody to tell otherwise
	hr.agents.mu.Unlock()
	if hr.sess != nil {
		hr.sess.Close()
	}
}

func (hr *hostRun) warnOnce(s *State, key, format string, a ...any) {
	hr.mu.Lock()
	seen := hr.warned[key]
	hr.warned[key] = true
	hr.mu.Unlock()
	msg := fmt.Sprintf(format, a...)
	s.mu.Lock()
	seen = seen || slices.Contains(s.Meta.Warnings, msg) // a resumed run said it already
	s.mu.Unlock()
	if !seen {
		s.Warn("%s", msg)
	}
}

// each runs f for every host of the record in parallel.
func (hr *hostRun) each(f func(i int, c *remote.Host)) {
	var wg sync.WaitGroup
	for i := range hr.rec.Hosts {
		c := hr.conn(i)
		wg.Add(1)
		go func() { defer wg.Done(); f(i, c) }()
	}
	wg.Wait()
}

// conn is the connection of the record's i-th host (inventory order).
func (hr *hostRun) conn(i int) *remote.Host {
	n := len(hr.load)
	switch {
	case i == 0:
		return hr.target
	case i <= n:
		return hr.load[i-1]
	case i == n+1 && hr.inv.Downstream != nil:
		return hr.downstream
	}
	// The database host: connected, not used by this run.
	c, _ := hr.sess.Connect(context.Background(), hr.rec.Hosts[i].SSH, hr.rec.Hosts[i].Role)
	return c
}

// hostCheck runs `threadlab check --json` on every host: the target with
// the run's connections, each load host with its share.
func (hr *hostRun) hostCheck(ctx context.Context, s *State, req env.Requirements) {
	hr.each(func(i int, c *remote.Host) {
		h := &hr.rec.Hosts[i]
		conns := req.Connections
		if h.Role == hosts.RoleLoad && len(hr.load) > 0 {
			conns = (conns + len(hr.load) - 1) / len(hr.load)
		}
		if h.Role == hosts.RoleDatabase || h.Role == hosts.RoleDownstream {
			conns = 0
		}
		out, err := c.Run(ctx, c.Threadlab(), "check", "--json", "--connections", strconv.Itoa(conns))
		var checks []env.Check
		if jerr := json.Unmarshal(out, &checks); jerr != nil {
			s.Warn("host check on %s: %v", c.Name, errors.Join(err, jerr))
			return
		}
		h.Check = json.RawMessage(out)
		for _, x := range checks {
			if x.Status == env.Fail {
				s.Warn("host check on %s: %s: %s (want %s); fix on that host: %s", c.Name, x.Name, x.Value, x.Want, x.Fix)
			}
		}
	})
}

// fingerprints runs `threadlab fingerprint --json` on every host, once.
func (hr *hostRun) fingerprints(ctx context.Context, s *State) {
	hr.mu.Lock()
	done := hr.fingerprint
	hr.fingerprint = true
	hr.mu.Unlock()
	if done {
		return
	}
	hr.each(func(i int, c *remote.Host) {
		args := []string{c.Threadlab(), "fingerprint", "--json"}
		if jh := hr.rec.Hosts[i].JavaHome; jh != "" {
			args = append(args, "--java-home", jh)
		}
		out, err := c.Run(ctx, args...)
		if err != nil || !json.Valid(out) {
			s.Warn("fingerprint of %s incomplete: %v", c.Name, err)
			return
		}
		hr.rec.Hosts[i].Fingerprint = json.RawMessage(out)
	})
}

// targetPort is a free port on the target host's address.
func (hr *hostRun) targetPort(ctx context.Context) (int, error) {
	return hr.target.FreePort(ctx, hr.address(hr.inv.Target, hr.target))
}

// javaTarget adapts a built-in target's command to the target host: its
// JDK, the jar shipped there, listeners on the inventory's address. AOT
// caches are trained with this machine's JDK and stay here. Its actuator
// gets its own management server on a free port of the target host, as
// trial.ActuatorPort gives it on one machine, and that port is returned
// (0 when the manifest set management.server.port to no port): without
// it, threadlab's once-a-second scrape and health checks queue behind the
// load in the app's own thread pool, and the target runs one connector
// fewer than on one machine (issue 25: 5 fewer threads for virtual, 15
// for platform, in the JVM's own count as in /proc's).
func (hr *hostRun) javaTarget(ctx context.Context, s *State, v experiments.Variant, jar string, extra []string, props map[string]string, appPort int) (string, string, []string, int, error) {
	if len(extra) > 0 {
		hr.warnOnce(s, "aot", "multi-host run: %s starts without its AOT cache (trained with this machine's JDK, which the target host need not have)", v.Name)
	}
	if v.JDK != 0 {
		hr.warnOnce(s, "jdk:"+v.Name, "multi-host run: %s asked for jdk: %d; the target host's JDK %s runs it", v.Name, v.JDK, hr.javaHome)
	}
	remoteJar, err := hr.target.Ship(ctx, jar, 0o644)
	if err != nil {
		return "", "", nil, 0, err
	}
	addr := hr.address(hr.inv.Target, hr.target)
	props["server.address"] = addr
	actuator := 0
	if v, ok := props["management.server.port"]; ok {
		if p, err := strconv.Atoi(v); err == nil && p > 0 {
			actuator = p // the manifest's own port
		}
	} else {
		for range 3 { // the app's port was picked a moment ago and is still free: not that one
			if actuator, err = hr.targetPort(ctx); err != nil {
				return "", "", nil, 0, err
			}
			if actuator != appPort {
				break
			}
		}
		props["management.server.port"] = strconv.Itoa(actuator)
	}
	props["management.server.address"] = addr
	return hr.javaHome, remoteJar, nil, actuator, nil
}

// subst adds the command variants' host placeholders: {address} (where the
// target listens) and {threadlab} (the binary shipped to the target host).
func (hr *hostRun) subst(m map[string]string) {
	m["address"] = hr.address(hr.inv.Target, hr.target)
	m["threadlab"] = hr.target.Threadlab()
}

// startDownstream runs `threadlab downstream` on the downstream host (the
// target's when the inventory names none), on that host's address.
func (hr *hostRun) startDownstream(ctx context.Context, s *State, delay time.Duration) (string, error) {
	c := hr.downstream
	addr := hr.address(hr.dsSpec, c)
	port, err := c.FreePort(ctx, addr)
	if err != nil {
		return "", err
	}
	argv := []string{c.Threadlab(), "downstream", "--address", addr, "--port", strconv.Itoa(port), "--delay", delay.String()}
	if hr.dsSpec.CPUs != "" {
		argv = append([]string{"taskset", "-c", hr.dsSpec.CPUs}, argv...)
	}
	logPath := filepath.Join(s.Dir, record.LogsDir, "downstream.log")
	t, err := hr.launch(c, addr, trial.Spec{Name: roleDownstream, Argv: argv, Port: port, Ready: "/health", LogPath: logPath})
	if err != nil {
		return "", err
	}
	s.OnCleanup(func() { t.Stop() })
	if err := trial.WaitReady(ctx, t, "/health", logPath, 30*time.Second); err != nil {
		return "", err
	}
	return t.URL(), nil
}

// hostLauncher starts targets on the target host.
type hostLauncher struct{ hr *hostRun }

func (l hostLauncher) Launch(ctx context.Context, sp trial.Spec) (trial.Target, error) {
	hr := l.hr
	if cpus := hr.inv.Target.CPUs; cpus != "" {
		sp.Argv = append([]string{"taskset", "-c", cpus}, sp.Argv...)
	}
	return hr.launch(hr.target, hr.address(hr.inv.Target, hr.target), sp)
}

func (hr *hostRun) launch(c *remote.Host, addr string, sp trial.Spec) (trial.Target, error) {
	if len(sp.Argv) == 0 {
		return nil, errors.New("empty command")
	}
	logf, err := os.OpenFile(sp.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create target log: %w", err)
	}
	fmt.Fprintf(logf, "# threadlab: on host %s (%s): %s\n", c.Name, c.Hostname, strings.Join(sp.Argv, " "))
	p, err := c.Start(remote.Spec{Argv: sp.Argv, Env: sp.Env, Stdout: logf, Stderr: logf, Grace: 10 * time.Second})
	if err != nil {
		logf.Close()
		return nil, err
	}
	return &remoteTarget{spec: sp, addr: addr, host: c.Name, proc: p, pidFile: p.PidFile, log: logf}, nil
}

// remoteTarget is a program on another host; its output comes back over
// ssh into the log here.
type remoteTarget struct {
	spec    trial.Spec
	addr    string
	host    string
	proc    remoteProc
	pidFile string // the supervisor's pid file there, for the host's sampler
	log     *os.File
	once    sync.Once
}

// remoteProc is the part of remote.Proc a remoteTarget uses.
type remoteProc interface {
	Stop() error
	Done() <-chan struct{}
	Err() error
}

func (t *remoteTarget) URL() string {
	return "http://" + net.JoinHostPort(t.addr, strconv.Itoa(t.spec.Port))
}

// Pid is 0: the process is on another host, and /proc here knows nothing of it.
func (t *remoteTarget) Pid() int       { return 0 }
func (t *remoteTarget) Argv() []string { return t.spec.Argv }
func (t *remoteTarget) MetricsURL() string {
	if t.spec.Metrics == "" {
		return ""
	}
	return t.ActuatorURL() + t.spec.Metrics
}

// ActuatorURL is the base URL of the target's /actuator paths: its
// management server on the target host when it has its own port, else the
// app's (trial.WaitReady polls /actuator readiness paths there).
func (t *remoteTarget) ActuatorURL() string {
	if t.spec.ActuatorPort > 0 {
		return "http://" + net.JoinHostPort(t.addr, strconv.Itoa(t.spec.ActuatorPort))
	}
	return t.URL()
}

func (t *remoteTarget) Exited() error {
	select {
	case <-t.proc.Done():
		if err := t.proc.Err(); err != nil {
			return fmt.Errorf("target on %s exited: %w", t.host, err)
		}
		return fmt.Errorf("target on %s exited with status 0", t.host)
	default:
		return nil
	}
}

// Stop stops the program and redacts its log as a local target's is
// (issue 23): the log is committed with the run, and its first line is
// the command, which can hold a password property.
func (t *remoteTarget) Stop() error {
	t.once.Do(func() {
		t.proc.Stop() // returns once the session ended: the log has all its output
		t.log.Close()
		_ = record.RedactFile(t.spec.LogPath)
	})
	return nil
}

// agents are the load hosts' generators of a multi-host run: one
// `threadlab load --agent` per load host, started over ssh at the first
// load and kept for the whole run (fleet.Fleet), so no generator starts or
// exits inside a trial's sampling window (issue 25: a start per trial left
// the target idle inside the window and, once the agent exited, its CPU
// counted as the load host's noise). The samplers count them as
// threadlab's: they run threadlab's executable.
type agents struct {
	mu    sync.Mutex
	fleet *fleet.Fleet
	procs []spawned
}

// spawned is one started generator: its protocol streams and how to end
// it (its exit error, with the tail of its stderr).
type spawned struct {
	agent fleet.Agent
	close func() error
}

// spawnAgent starts the generator of the i-th load host over ssh.
func (hr *hostRun) spawnAgent(i int) (spawned, error) {
	c := hr.load[i]
	argv := []string{c.Threadlab(), "load", "--agent"}
	if cpus := hr.inv.Load[i].CPUs; cpus != "" {
		argv = append([]string{"taskset", "-c", cpus}, argv...)
	}
	p, err := c.StartAgent(argv)
	if err != nil {
		return spawned{}, err
	}
	return spawned{agent: fleet.Agent{Name: c.Name, Stdin: p.Stdin, Stdout: p.Stdout}, close: p.Close}, nil
}

// startAgents starts the generators and connects the fleet to them (the
// handshake measures each clock offset).
func (hr *hostRun) startAgents(ctx context.Context, n int) error {
	ag := &hr.agents
	spawn := hr.spawn
	if spawn == nil {
		spawn = hr.spawnAgent
	}
	for i := range n {
		p, err := spawn(i)
		if err != nil {
			return errors.Join(err, hr.stopAgents())
		}
		ag.procs = append(ag.procs, p)
	}
	fa := make([]fleet.Agent, len(ag.procs))
	for i, p := range ag.procs {
		fa[i] = p.agent
	}
	f, _, err := fleet.Open(ctx, fa)
	if err != nil {
		return withExits(err, hr.stopAgents())
	}
	ag.fleet = f
	return nil
}

// stopAgents stops the generators (their stdin closes: each exits) and
// returns their exit errors with the tail of their stderr.
func (hr *hostRun) stopAgents() error {
	ag := &hr.agents
	if ag.fleet != nil {
		ag.fleet.Close()
	}
	var errs []error
	for _, p := range ag.procs {
		if err := p.close(); err != nil {
			errs = append(errs, fmt.Errorf("generator %s: %w", p.agent.Name, err))
		}
	}
	ag.fleet, ag.procs = nil, nil
	return errors.Join(errs...)
}

func withExits(err, exits error) error {
	if exits != nil {
		return fmt.Errorf("%w\n%v", err, exits)
	}
	return err
}

// window is what a load opens and closes: a trial's samplers on the hosts
// (hostSampling, whose methods take a nil one for none).
type window interface {
	begin()
	end()
}

// drive runs one load plan on the load hosts' agents as one, starting
// them at the first load (or after a failed one, which stops them all).
// w's window opens at the agents' release and closes at the last answer.
func (hr *hostRun) drive(ctx context.Context, s *State, plan load.Plan, w window) (*load.Result, error) {
	ag := &hr.agents
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if ag.fleet != nil && ag.fleet.Err() != nil { // a failed load stopped them: collect their exits
		if err := hr.stopAgents(); err != nil {
			s.Warn("load generators: %v", err)
		}
	}
	if ag.fleet == nil {
		t0 := time.Now()
		if err := hr.startAgents(ctx, len(hr.load)); err != nil {
			return nil, err
		}
		s.Logf("load generators started on %s in %s; they stay for the run", strings.Join(ag.fleet.Names(), ", "), time.Since(t0).Round(time.Millisecond))
	}
	// The host samplers' window opens at the planned release and closes
	// once the answers are back over ssh; they are told afterwards the
	// actual release (after the agents' connects) and the last answer,
	// and report the target's CPU between those (endAt); the trial's row
	// reads only the samples between them (rowSamples). Any other window
	// closes when the answers are back.
	var released time.Time
	h := fleet.Hooks{}
	if w != nil {
		h = fleet.Hooks{Release: func() { released = time.Now(); w.begin() }}
	}
	res, offs, err := ag.fleet.Run(ctx, plan, h)
	if ew, ok := w.(edgesWindow); ok && err == nil && res != nil && !released.IsZero() {
		first, last := loadEdges(res)
		ew.endAt(first.Sub(released), last.Sub(released))
	} else if w != nil {
		w.end()
	}
	s.mu.Lock()
	hr.rec.Offsets = append(hr.rec.Offsets, offs...)
	s.mu.Unlock()
	switch {
	case err != nil && ag.fleet.Err() != nil: // the failure stopped them: say how they ended
		return nil, withExits(err, hr.stopAgents())
	case err != nil: // a plan refused before anything was sent: they stay
		return nil, err
	}
	return res, nil
}

// edgesWindow is a window told its edges once it closes (hostSampling):
// the load's release and last answer, after its begin.
type edgesWindow interface {
	window
	endAt(from, to time.Duration)
}

// loadEdges are a merged result's release and last answer, on the
// controller's clock: the earliest group's release (a burst's, once its
// connections are up; any other group's first send is at Start) and the
// latest group's release plus its wall (first send to last answer).
func loadEdges(res *load.Result) (first, last time.Time) {
	for i, g := range res.Groups {
		at := res.Start.Add(g.Release)
		if i == 0 || at.Before(first) {
			first = at
		}
		if end := at.Add(g.Wall); i == 0 || end.After(last) {
			last = end
		}
	}
	if len(res.Groups) == 0 {
		first, last = res.Start, res.Start
	}
	return first, last
}

// runLoadIn runs a load plan, here or on the load hosts of a multi-host
// run, inside a trial's window w (trialWindow: its host
// samplers, or the target's CPU window here; nil for none): it opens at
// the load's release and closes at the last answer. On the load hosts
// the release is the agents' agreed instant; here it is load.Run's own
// (Plan.OnRelease: a burst's once its connections are up), and the last
// answer is load.Run's return.
func (s *State) runLoadIn(ctx context.Context, plan load.Plan, w window) (*load.Result, error) {
	if w == nil {
		w = noWindow{}
	}
	if s.hosts == nil {
		plan.OnRelease = w.begin
		defer w.end()
		return load.Run(ctx, plan)
	}
	return s.hosts.drive(ctx, s, plan, w)
}

type noWindow struct{}

func (noWindow) begin() {}
func (noWindow) end()   {}

// targetPort is a free port for the next target: on this machine, or on
// the target host.
func (s *State) targetPort(ctx context.Context) (int, error) {
	if s.hosts == nil {
		return supervise.FreePort("127.0.0.1")
	}
	return s.hosts.targetPort(ctx)
}

// pinningText says where each role runs: the inventory's CPU sets replace
// the manifest's pinning, which is about sharing one machine.
func (hr *hostRun) pinningText() string {
	var parts []string
	for _, h := range hr.inv.All() {
		cpus := "all CPUs"
		if h.CPUs != "" {
			cpus = "CPUs " + h.CPUs
		}
		parts = append(parts, h.Name()+": "+cpus)
	}
	return "per host (" + hr.inv.File + "): " + strings.Join(parts, "; ")
}
