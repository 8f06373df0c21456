package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"
)

// uploaded is what uploadChunks did.
type uploaded struct {
	bytes  int64
	chunks int
	took   time.Duration
	// written: chunks written, by sum (kept by the saver should the save
	// not commit). reusedWritten: when each chunk of an uncommitted
	// earlier save this one relies on was written, by name.
	written       map[string]known
	reusedWritten map[string]time.Time
}

// known is a chunk in the store that a save may name rather than write:
// its name, and when it was written (zero for a committed checkpoint's).
type known struct {
	name string
	at   time.Time
}

// uploadChunks reads the files of entries that have no hashes yet, fills in
// their sizes, hashes and chunk lists, and writes every chunk whose content
// skip (by sum) does not name, as chunkName(sum, tag).
//
// Files are read once: a reader hashes each chunk as it reads it, feeds the
// file's hash, and hands a chunk to the uploaders only if it is new. Two
// readers keep both cores hashing; Concurrency uploaders keep the network
// busy; the buffers between them bound the memory.
func (s *Saver) uploadChunks(ctx context.Context, dir string, entries []Entry, skip map[string]known, tag string) (uploaded, error) {
	start := s.opts.Now()
	up := uploaded{written: map[string]known{}, reusedWritten: map[string]time.Time{}}
	var mu sync.Mutex // guards up and scheduled
	scheduled := map[string]string{}

	type chunk struct {
		sum  string
		name string
		buf  []byte
		n    int
	}
	const readers = 2
	pool := make(chan []byte, s.opts.Concurrency+readers)
	for range cap(pool) {
		pool <- nil // allocated on first use
	}
	work := make(chan *Entry)
	chunks := make(chan chunk)
	g, gctx := errgroup.WithContext(ctx)

	g.Go(func() error {
		defer close(work)
		for i := range entries {
			if entries[i].Kind != KindFile || entries[i].Chunks != nil || entries[i].SHA256 != "" {
				continue
			}
			select {
			case work <- &entries[i]:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	var readWG sync.WaitGroup
	for range readers {
		readWG.Add(1)
		g.Go(func() error {
			defer readWG.Done()
			for e := range work {
				err := readFile(gctx, filepath.Join(dir, filepath.FromSlash(e.Path)), e, s.opts.ChunkSize, pool,
					func(sum string, buf []byte, n int) (string, bool, error) {
						mu.Lock()
						if k, ok := skip[sum]; ok {
							if !k.at.IsZero() {
								up.reusedWritten[k.name] = k.at
							}
							mu.Unlock()
							return k.name, false, nil
						}
						if name, ok := scheduled[sum]; ok {
							mu.Unlock()
							return name, false, nil
						}
						name := chunkName(sum, tag)
						scheduled[sum] = name
						mu.Unlock()
						select {
						case chunks <- chunk{sum: sum, name: name, buf: buf, n: n}:
							return name, true, nil
						case <-gctx.Done():
							return name, false, gctx.Err()
						}
					})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		readWG.Wait()
		close(chunks)
		return nil
	})
	for range s.opts.Concurrency {
		g.Go(func() error {
			for c := range chunks {
				// Taken before the write: the store stamps the object
				// later, so the saver's deadline errs on the safe side.
				at := s.opts.Now()
				err := s.store.b.WriteAll(gctx, chunkKey(s.jobID, c.name), c.buf[:c.n],
					&blob.WriterOptions{ContentType: "application/octet-stream", BufferSize: int(s.opts.ChunkSize)})
				pool <- c.buf
				if err != nil {
					return fmt.Errorf("checkpoint: write chunk %s: %w", c.name, err)
				}
				mu.Lock()
				up.bytes += int64(c.n)
				up.chunks++
				up.written[c.sum] = known{name: c.name, at: at}
				mu.Unlock()
			}
			return nil
		})
	}
	err := g.Wait()
	up.took = s.opts.Now().Sub(start)
	return up, err
}

// readFile reads one file chunk by chunk. found is told each chunk's sum
// and returns the name the manifest gives it, and whether it took the
// buffer (it then returns it to pool itself).
// The file is opened without following a link: the job may have swapped
// the file for one since the scan.
func readFile(ctx context.Context, path string, e *Entry, chunkSize int64, pool chan []byte,
	found func(sum string, buf []byte, n int) (string, bool, error)) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("checkpoint: open %s: %w", e.Path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("checkpoint: %s is no longer a regular file", e.Path)
	}
	file := sha256.New()
	var size int64
	e.Chunks = []string{}
	for {
		var buf []byte
		select {
		case buf = <-pool:
		case <-ctx.Done():
			return ctx.Err()
		}
		if buf == nil {
			buf = make([]byte, chunkSize)
		}
		n, err := io.ReadFull(f, buf)
		if n == 0 {
			pool <- buf
			if err == io.EOF || err == nil {
				break
			}
			return fmt.Errorf("checkpoint: read %s: %w", e.Path, err)
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			pool <- buf
			return fmt.Errorf("checkpoint: read %s: %w", e.Path, err)
		}
		sum := sha256.Sum256(buf[:n])
		file.Write(buf[:n])
		size += int64(n)
		name, took, ferr := found(hex.EncodeToString(sum[:]), buf, n)
		e.Chunks = append(e.Chunks, name)
		if !took {
			pool <- buf
		}
		if ferr != nil {
			return ferr
		}
		if int64(n) < chunkSize {
			break
		}
	}
	// The file may have grown or shrunk since the scan: the manifest
	// describes the bytes read.
	e.Size = size
	e.SHA256 = hex.EncodeToString(file.Sum(nil))
	return nil
}
