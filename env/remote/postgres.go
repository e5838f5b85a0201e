package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env/postgres"
)

// PostgreSQL on a database host of its own (issue 25): the controller runs
// `threadlab remote-helper postgres LISTEN ALLOW...` there over ssh. The
// helper starts a throw-away cluster (env/postgres: initdb, scram-sha-256
// only, its own supervisor) listening on loopback and LISTEN, the address
// the target reaches, with a pg_hba entry for each ALLOW address (the
// target host's) and none for anyone else; it prints where the cluster is
// and its password as one JSON line, and when its stdin closes (the run's
// end, or threadlab or the ssh session gone) it stops the cluster and
// removes its directory.

// Database is a running cluster on a host, as the helper reported it.
type Database struct {
	JDBCURL  string `json:"jdbc_url"`
	Port     int    `json:"port"`
	Version  string `json:"version"`
	Password string `json:"password"`
	// PidFile is the postmaster's pid file on the database host: the
	// sampler there counts its process group as threadlab's, not as noise.
	PidFile string `json:"pid_file"`

	a *Agent
}

// postgresHelper is `threadlab remote-helper postgres LISTEN ALLOW...`.
func postgresHelper(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: threadlab remote-helper postgres LISTEN-ADDRESS ALLOWED-CLIENT-ADDRESS...")
		return 2
	}
	c, err := postgres.StartWith(context.Background(), stderr, postgres.Options{Listen: args[0], Allow: args[1:]})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer c.Stop()
	b, _ := json.Marshal(Database{JDBCURL: c.JDBCURL(), Port: c.Port, Version: c.Version, Password: c.Password,
		PidFile: filepath.Join(c.Dir, "data", "postmaster.pid")})
	fmt.Fprintf(stdout, "%s\n", b)
	io.Copy(io.Discard, stdin)
	if err := c.Stop(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// StartPostgres starts a throw-away cluster on the host, listening on
// listen and admitting only the allow addresses; Stop removes it.
func (h *Host) StartPostgres(ctx context.Context, listen string, allow ...string) (*Database, error) {
	a, err := h.StartAgent(append([]string{h.Threadlab(), HelperCommand, "postgres", listen}, allow...))
	if err != nil {
		return nil, err
	}
	got := make(chan error, 1)
	var d Database
	go func() {
		line, err := bufio.NewReader(a.Stdout).ReadString('\n')
		if err == nil {
			err = json.Unmarshal([]byte(line), &d)
		}
		got <- err
	}()
	select {
	case err = <-got:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(3 * time.Minute):
		err = fmt.Errorf("not ready after 3 minutes")
	}
	if err != nil {
		cerr := a.Close()
		return nil, fmt.Errorf("host %s: start PostgreSQL: %v%s%s", h.Name, err, orNil(cerr), indent(strings.TrimSpace(a.Stderr())))
	}
	d.a = a
	return &d, nil
}

// Stop shuts the cluster down and removes it; the helper's stderr (the
// cluster's commands and server log) is returned for the run's log.
func (d *Database) Stop() (string, error) {
	err := d.a.Close()
	return d.a.Stderr(), err
}
