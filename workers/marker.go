package workers

import (
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/ballastdev/ballast/workers/runas"
)

// maxMarker bounds what is read of a checkpoint marker: a checkpoint names
// where the job's state is, it is not the state.
const maxMarker = 64 << 10

// readMarker reads the checkpoint marker a job left at path; "" for none.
// The worker reads it with its own rights, which may be root's, while the
// job chose what is at path: so a link is not followed (a job run as
// another user could point it at a file only root reads, and the file
// would come back to it as its checkpoint), a FIFO cannot hold the worker
// up, and a job run as another user must own the file, which a hard link
// to someone else's file does not.
func readMarker(path string, ru *runas.User) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if ru != nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != ru.UID {
			return ""
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMarker))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
