package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/threadlab/threadlab/env/postgres"
	"github.com/threadlab/threadlab/store/record"
)

// startPostgres runs the manifest's PostgreSQL on the inventory's database
// host (issue 25): started, secured and removed there by
// remote-helper postgres (env/remote), listening on the database host's
// address and admitting only the target host's, scram-sha-256. The
// target gets the JDBC URL as a property and the password in its
// environment, as on one machine.
func (hr *hostRun) startPostgres(ctx context.Context, s *State) error {
	db := hr.conn(len(hr.rec.Hosts) - 1) // the database host is the inventory's last
	listen := hr.address(*hr.inv.Database, db)
	allow := hr.address(hr.inv.Target, hr.target)
	start := time.Now()
	d, err := db.StartPostgres(ctx, listen, allow)
	if err != nil {
		return fmt.Errorf("start PostgreSQL on %s: %w", db.Name, err)
	}
	hr.dbPidFile = d.PidFile
	s.OnCleanup(func() {
		out, err := d.Stop()
		if werr := os.WriteFile(filepath.Join(s.Dir, record.LogsDir, "postgres.log"), record.Redact([]byte(out)), 0o644); werr != nil {
			s.Warn("PostgreSQL log: %v", werr)
		}
		if err != nil {
			s.Warn("stop PostgreSQL on %s: %v", db.Name, err)
		}
	})
	s.ServiceProps["spring.datasource.url"] = d.JDBCURL
	s.ServiceProps["spring.datasource.username"] = postgres.User
	s.ServiceProps["spring.datasource.driver-class-name"] = "org.postgresql.Driver"
	s.ServiceEnv = append(s.ServiceEnv, "SPRING_DATASOURCE_PASSWORD="+d.Password)
	s.Logf("PostgreSQL %s on %s at %s, admitting %s only (started in %s)", d.Version, db.Name, d.JDBCURL, allow, time.Since(start).Round(time.Millisecond))
	return nil
}
