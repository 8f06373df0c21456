package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/registry"
)

// cluster is the run's controller and worker processes. Every process ever
// started is kept, so that stopAll ends them all whatever happened.
type cluster struct {
	bin, cfgPath, dir string
	slots             int
	store             *queues.Store

	mu          sync.Mutex
	all         []*child
	controllers []*child
	workers     []*workerProc // by slot
	ctlSeq      int
}

// workerProc is the process serving one worker slot of the run, and the
// registry ID it was started under.
type workerProc struct {
	slot, gen int
	id        string
	c         *child
}

// owns reports whether a job record's worker is this process: its ID, or
// one it took after the controller fenced it (ID-rXXXX).
func (w *workerProc) owns(worker string) bool {
	return worker == w.id || strings.HasPrefix(worker, w.id+"-r")
}

func (cl *cluster) startController() (*child, error) {
	cl.mu.Lock()
	cl.ctlSeq++
	name := fmt.Sprintf("controller-%d", cl.ctlSeq)
	cl.mu.Unlock()
	c, err := startChild(name, cl.bin, filepath.Join(cl.dir, name+".log"),
		"controller", "--config", cl.cfgPath, "--provider", "none")
	if err != nil {
		return nil, err
	}
	cl.mu.Lock()
	cl.all = append(cl.all, c)
	cl.controllers = append(cl.controllers, c)
	cl.mu.Unlock()
	return c, nil
}

// startWorker starts the worker of slot under id; gen numbers the
// processes of a slot.
func (cl *cluster) startWorker(slot, gen int, id string) (*workerProc, error) {
	c, err := startChild(id, cl.bin, filepath.Join(cl.dir, fmt.Sprintf("worker-%d.log", slot)),
		"worker", "--config", cl.cfgPath, "--pool", "fixed", "--slots", strconv.Itoa(cl.slots), "--id", id)
	if err != nil {
		return nil, err
	}
	w := &workerProc{slot: slot, gen: gen, id: id, c: c}
	cl.mu.Lock()
	cl.all = append(cl.all, c)
	for len(cl.workers) <= slot {
		cl.workers = append(cl.workers, nil)
	}
	cl.workers[slot] = w
	cl.mu.Unlock()
	return w, nil
}

func (cl *cluster) currentWorkers() []*workerProc {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return append([]*workerProc(nil), cl.workers...)
}

// dropController forgets a controller that was killed.
func (cl *cluster) dropController(c *child) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for i, x := range cl.controllers {
		if x == c {
			cl.controllers = append(cl.controllers[:i], cl.controllers[i+1:]...)
			return
		}
	}
}

// leader returns the controller process holding the lease (a controller's
// ID ends in -PID) and the lease holder's ID; nil when none holds it.
func (cl *cluster) leader(ctx context.Context) (*child, string, error) {
	l, err := leader.New(cl.store).Holder(ctx)
	if err != nil || l == "" {
		return nil, l, err
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, c := range cl.controllers {
		if strings.HasSuffix(l, "-"+strconv.Itoa(c.pid())) {
			return c, l, nil
		}
	}
	return nil, l, nil
}

// registered waits until id is in the worker registry.
func (cl *cluster) registered(ctx context.Context, w *workerProc, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if w.c.exited() {
			return fmt.Errorf("worker %s exited at start; see %s", w.id, filepath.Base(w.c.logPath))
		}
		ws, err := registry.New(cl.store).Workers(ctx)
		if err == nil {
			for _, x := range ws {
				if x.ID == w.id && x.PID == w.c.pid() {
					return nil
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("worker %s not registered within %s (last error: %v)", w.id, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLeader waits until one of the running controllers leads, other than
// not (nil: any), and returns it.
func (cl *cluster) waitLeader(ctx context.Context, not *child, within time.Duration) (*child, error) {
	deadline := time.Now().Add(within)
	for {
		c, id, err := cl.leader(ctx)
		if err == nil && c != nil && c != not {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("no controller took the lead within %s (lease holder %q, error %v)", within, id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopAll ends every process the run started.
func (cl *cluster) stopAll() {
	cl.mu.Lock()
	all := append([]*child(nil), cl.all...)
	cl.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop() }()
	}
	wg.Wait()
}
