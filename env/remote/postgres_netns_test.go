package remote

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/postgres"
	"github.com/threadlab/threadlab/env/remote/netnstest"
	"github.com/threadlab/threadlab/internal/testenv"
)

// TestPostgresOnItsOwnHost: PostgreSQL started over ssh on a database host
// of its own listens on loopback and the database host's address only,
// admits the target host's address (scram-sha-256) and refuses a load
// host's, and is gone, directory and processes, when it is stopped.
func TestPostgresOnItsOwnHost(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: starts sshd in network namespaces, builds threadlab and runs PostgreSQL")
	}
	bindir, err := postgres.BinDir()
	testenv.Need(t, err, "PostgreSQL", "scripts/setup.sh installs Debian's postgresql")
	hs := netnstest.Up(t, "tlp", "10.84.0", "target", "load1", "db1")
	bin := netnstest.Threadlab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := NewSession(Options{SSHConfig: hs.SSHConfig, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := s.Connect(ctx, "tlp-db1", "database tlp-db1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetBinary(ctx, bin); err != nil {
		t.Fatal(err)
	}
	addr := hs.Address["db1"]
	d, err := db.StartPostgres(ctx, addr, hs.Address["target"])
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			d.Stop()
		}
	}()
	if want := "jdbc:postgresql://" + addr + ":" + strconv.Itoa(d.Port) + "/threadlab"; d.JDBCURL != want || d.Password == "" {
		t.Errorf("database %+v, want %s and a password", d, want)
	}
	psql := func(host string) (string, error) {
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", hs.Namespace[host], filepath.Join(bindir, "psql"),
			"-X", "-A", "-t", "-h", addr, "-p", strconv.Itoa(d.Port), "-U", postgres.User, "-d", postgres.Database,
			"-c", "select 40 + 2")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+d.Password, "PGCONNECT_TIMEOUT=5")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := psql("target"); err != nil || strings.TrimSpace(out) != "42" {
		t.Errorf("from the target host: %q (%v), want 42", out, err)
	}
	if out, err := psql("load1"); err == nil || !strings.Contains(out, "no pg_hba.conf entry") {
		t.Errorf("from a load host: %q (%v), want refused by pg_hba", out, err)
	}
	ss, err := exec.CommandContext(ctx, "ip", "netns", "exec", hs.Namespace["db1"], "ss", "-ltnH", "sport = :"+strconv.Itoa(d.Port)).CombinedOutput()
	if err != nil {
		t.Fatalf("ss: %v: %s", err, ss)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(ss)), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || (!strings.HasPrefix(f[3], "127.0.0.1:") && !strings.HasPrefix(f[3], addr+":")) {
			t.Errorf("PostgreSQL listens on %q: want 127.0.0.1 and %s only", line, addr)
		}
	}
	dir := filepath.Dir(filepath.Dir(d.PidFile))
	log, err := d.Stop()
	stopped = true
	if err != nil {
		t.Errorf("stop: %v\n%s", err, log)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory %s is still there after Stop (%v)", dir, err)
	}
	s.Close() // the run's end: its working directories go too
	var left []string
	for range 50 {
		if left = hs.Strays(); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("processes left on the hosts:\n%s", strings.Join(left, "\n"))
	}
	if out, _ := exec.Command("pgrep", "-f", dir).Output(); len(out) > 0 {
		t.Errorf("PostgreSQL processes of %s left: %s", dir, out)
	}
}
