package gangs

import (
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/queues"
)

// Store keeps the gang protocol's records: member claims, the start
// barrier, giving up, and whether an assembling gang's missing members
// are on their way. It reaches Redis only through its Kernel.
type Store struct {
	k queues.Kernel
	// insp reads the members' deliveries in their workers' own queues
	// (Held); made on first use, so New only keeps the kernel and a
	// worker built without a store (as its unit tests do) still builds.
	inspOnce sync.Once
	insp     *asynq.Inspector
}

// New returns the gang store of the kernel k.
func New(k queues.Kernel) *Store { return &Store{k: k} }

// inspector returns the asynq inspector on the kernel's Redis.
func (s *Store) inspector() *asynq.Inspector {
	s.inspOnce.Do(func() { s.insp = asynq.NewInspectorFromRedisClient(s.k.Redis()) })
	return s.insp
}

// StartTimeout bounds how long a claimed member waits for the rest of its
// gang before it moves the gang on (unless Held says the rest is coming).
const StartTimeout = 30 * time.Second

// Poll is how often a claimed member checks whether its gang started.
const Poll = 50 * time.Millisecond

// UnconfirmedPoll is how often a member checks a start that is on the
// Redis master but not yet on the replicas asked for: each check may wait
// out the WAIT's timeout.
const UnconfirmedPoll = time.Second
