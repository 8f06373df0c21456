package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStoreURLs: the URLs of the four kinds of store are accepted and
// turned into what their drivers expect; others get an error that says
// what is wrong, without the URL's user information.
func TestStoreURLs(t *testing.T) {
	for _, c := range []struct{ in, driver, prefix string }{
		{"s3://b/ballast/ck?region=eu-west-1", "s3://b?region=eu-west-1", "ballast/ck/"},
		{"s3://b?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1", "s3://b?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1&use_path_style=true", ""},
		{"gs://b/p", "gs://b", "p/"},
		{"azblob://c/p/q/", "azblob://c", "p/q/"},
		{"file:///var/lib/ck", "file:///var/lib/ck?no_tmp_dir=true", ""},
		{"file:///var/lib/ck?no_tmp_dir=1", "file:///var/lib/ck?no_tmp_dir=1", ""},
	} {
		u, prefix, err := parseStoreURL(c.in)
		if err != nil || u.String() != c.driver || prefix != c.prefix {
			t.Errorf("%s: %v %q %v; want %s %q", c.in, u, prefix, err, c.driver, c.prefix)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"http://b/p", "scheme"},
		{"s3:///p", "no bucket"},
		{"file://host/p", "three slashes"},
		{"file:relative", "three slashes"},
		{"s3://key:secret@b/p", ""},
	} {
		err := ValidateURL(c.in)
		if c.says == "" {
			if err != nil {
				t.Errorf("%s: %v", c.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", c.in, err, c.says)
		}
	}
	if err := ValidateURL("ftp://key:secret@b/p"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("credentials in the error: %v", err)
	}
}

// TestFileStoreOnAnotherFilesystem: a file store on another filesystem
// than the temporary directory (a shared mount) saves and restores.
func TestFileStoreOnAnotherFilesystem(t *testing.T) {
	dir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat("/dev/shm", &b) != nil || a.Dev == b.Dev {
		t.Skip("needs /dev/shm on another filesystem than the test's directories")
	}
	tmp, err := os.MkdirTemp("/dev/shm", "ckpt-tmp-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	if err := os.Mkdir(filepath.Join(dir, "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, "file://"+filepath.Join(dir, "store"))
	ctx := context.Background()
	qs, j := runningJob(t)
	src := filepath.Join(dir, "src", j.ID)
	writeFile(t, src, "state", randBytes(1, 100<<10), 0o600)
	saver, _ := NewSaver(st, qs.Ledger("wA"), j.ID, j.Attempt, nil, Options{ChunkSize: 32 << 10})
	if _, err := saver.Save(ctx, src, "1"); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "dst", j.ID)
	if _, err := RestoreLatest(ctx, st, qs.Ledger("wA"), j.ID, target, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, target), tree(t, src))
}
