package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/store/record"
)

// TestOneWriterPerRunID: two runs given one --run-id at once. Exactly one
// proceeds and completes; the other fails before writing anything, saying
// the directory exists. Both start together (a barrier), so whichever
// creates the directory first wins.
func TestOneWriterPerRunID(t *testing.T) {
	o := opts(t, nil)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			oi := o
			oi.Launcher = &inproc{}
			<-start
			_, errs[i] = Run(context.Background(), parse(t, 2), oi)
		}()
	}
	close(start)
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("errors %v: want exactly one run refused", errs)
	}
	if msg := failed[0].Error(); !strings.Contains(msg, "exists already") && !strings.Contains(msg, "in use by another threadlab") {
		t.Errorf("the refused run says %q, want why (exists already / in use)", msg)
	}
	r, err := record.Read(o.DataDir + "/inproc/r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.State != "complete" || len(r.Trials) != 4 {
		t.Errorf("state %s with %d trial rows, want complete with 2 variants x 2 trials", r.Meta.State, len(r.Trials))
	}
}

// TestOneWriterWhileRunning: a second run with the id of a run in progress,
// and a resume of it, are both refused while the first holds the lock; the
// first completes untouched.
func TestOneWriterWhileRunning(t *testing.T) {
	o := opts(t, nil)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	first := &inproc{afterLaunch: func(int) {
		once.Do(func() { close(started); <-release })
	}}
	o1 := o
	o1.Launcher = first
	done := make(chan error)
	go func() {
		_, err := Run(context.Background(), parse(t, 2), o1)
		done <- err
	}()
	<-started
	o2 := o
	o2.Launcher = &inproc{}
	_, err := Run(context.Background(), parse(t, 2), o2)
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("second run with the same id: %v, want refused (exists already)", err)
	}
	o3 := o2
	o3.Resume, o3.RunID = o.DataDir+"/inproc/r1", ""
	_, err = Run(context.Background(), nil, o3)
	if err == nil || !strings.Contains(err.Error(), "in use by another threadlab") || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("resume of a run in progress: %v, want refused naming the holder", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the first run: %v", err)
	}
	r, err := record.Read(o.DataDir + "/inproc/r1")
	if err != nil || r.Meta.State != "complete" || len(r.Trials) != 4 {
		t.Fatalf("first run read back: %v; want complete with 4 rows", err)
	}
}

// TestOneResumeAtOnce: two resumes of one interrupted run at once: exactly
// one resumes, the other is refused with the reason; the trials are not
// run twice.
func TestOneResumeAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	o := opts(t, &inproc{afterLaunch: func(n int) {
		if n == 2 {
			cancel()
		}
	}})
	s, err := Run(ctx, parse(t, 3), o)
	if err == nil {
		t.Fatal("the interrupted run returned no error")
	}
	// Each resume holds its first target until the other one has
	// returned (or 10 s passed): the two overlap, whichever locks first.
	var wg sync.WaitGroup
	loserDone := make(chan struct{})
	var closeOnce sync.Once
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			oi := o
			oi.Resume, oi.RunID = s.Dir, ""
			var once sync.Once
			oi.Launcher = &inproc{afterLaunch: func(int) {
				once.Do(func() {
					select {
					case <-loserDone:
					case <-time.After(10 * time.Second):
					}
				})
			}}
			_, errs[i] = Run(context.Background(), nil, oi)
			if errs[i] != nil {
				closeOnce.Do(func() { close(loserDone) })
			}
		}()
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0].Error(), "in use by another threadlab") {
		t.Fatalf("errors %v: want exactly one resume refused as in use", errs)
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.State != "complete" || len(r.Trials) != 6 {
		t.Errorf("state %s with %d trial rows, want complete with 2 variants x 3 trials, none twice", r.Meta.State, len(r.Trials))
	}
}

// TestRunIDValidated: a run id with separators is refused before anything
// is written (it would put the run outside data/<experiment>/).
func TestRunIDValidated(t *testing.T) {
	o := opts(t, &inproc{})
	o.RunID = "a/../../escaped"
	_, err := Run(context.Background(), parse(t, 2), o)
	if err == nil || !strings.Contains(err.Error(), "--run-id") {
		t.Fatalf("run id %q: %v, want refused", o.RunID, err)
	}
	if _, err := os.Stat(filepath.Join(o.DataDir, "escaped")); err == nil {
		t.Error("the run wrote outside data/<experiment>/")
	}
}
